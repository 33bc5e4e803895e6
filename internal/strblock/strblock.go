// Package strblock copies short byte strings into shared blocks: one
// allocation for many strings, as a result's short text values need,
// instead of one each.
package strblock

import "unsafe"

// MaxLen is the longest string a Block takes; a caller copies a longer one
// on its own.
const MaxLen = 128

// maxBlock is the most a block grows to: a string kept keeps at most that
// much alive.
const maxBlock = 1024

// Block hands out strings copied into its current block. The bytes of the
// block before its length belong to strings already handed out and are
// never written again; a string that does not fit starts a new block, of
// 64 bytes first and then twice the last, up to 1 KiB, so that a result of
// a row or two allocates little more than its strings take. The zero
// Block is ready to use; a Block is not safe for concurrent use.
type Block struct {
	b []byte
}

// String returns a copy of v, which must be at most MaxLen bytes long.
func (s *Block) String(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	b := s.b
	if cap(b)-len(b) < len(v) {
		b = make([]byte, 0, max(len(v), min(maxBlock, max(64, 2*cap(b)))))
	}
	start := len(b)
	b = append(b, v...)
	s.b = b
	return unsafe.String(&b[start], len(v))
}
