//go:build !unix

package pgtest

import (
	"os"
	"os/exec"
)

// account is the user the server runs as; only the current user is
// supported on this platform.
type account struct {
	name string
}

func serverAccount() (*account, error) { return nil, nil }

func accountOwning(string) (*account, error) { return nil, nil }

func (a *account) runAs(*exec.Cmd) {}

func (a *account) chown(string) error { return nil }

func sameOwner(src, dst string) error { return nil }

// processAlive reports whether pid can be found.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

func killProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// tryLock never succeeds here, so no directory is ever taken for stale.
func tryLock(*os.File) bool { return false }

// lockOwner does nothing here: stale directories are never removed.
func lockOwner(*os.File) error { return nil }

func (a *account) canReach(string) error { return nil }

func postmasterRunning(pid int, dataDir string) bool { return processAlive(pid) }
