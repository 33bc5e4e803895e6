//go:build unix

package pgline

import (
	"os"
	"syscall"
)

// fileOwnerUID returns the owner of fi's file, or -1 when unknown.
func fileOwnerUID(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
