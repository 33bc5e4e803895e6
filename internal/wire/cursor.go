package wire

import (
	"bytes"
	"encoding/binary"
)

// cursor reads big-endian fields from the front of a message body. The first
// read that runs past the end records an error and every later read returns
// zero values, so a decoder reads all its fields and checks err once.
type cursor struct {
	b   []byte // unread bytes
	msg string // message name for error text
	err error  // first error, if any
}

func (c *cursor) fail(what string) {
	if c.err == nil {
		c.err = protoErr(c.msg + ": " + what)
	}
	c.b = nil
}

func (c *cursor) u8() byte {
	if len(c.b) < 1 {
		c.fail("truncated")
		return 0
	}
	v := c.b[0]
	c.b = c.b[1:]
	return v
}

func (c *cursor) u16() uint16 {
	if len(c.b) < 2 {
		c.fail("truncated")
		return 0
	}
	v := binary.BigEndian.Uint16(c.b)
	c.b = c.b[2:]
	return v
}

func (c *cursor) u32() uint32 {
	if len(c.b) < 4 {
		c.fail("truncated")
		return 0
	}
	v := binary.BigEndian.Uint32(c.b)
	c.b = c.b[4:]
	return v
}

// count reads an int16 element count and checks that n elements of at least
// minSize bytes each can still fit in the body, so callers may allocate n.
func (c *cursor) count(minSize int) int {
	n := int(int16(c.u16()))
	if c.err != nil {
		return 0
	}
	if n < 0 {
		c.fail("negative count")
		return 0
	}
	if n*minSize > len(c.b) {
		c.fail("count exceeds message length")
		return 0
	}
	return n
}

// ucount reads an unsigned 16-bit element count (frontend messages carry
// counts up to 65535) and checks it like count.
func (c *cursor) ucount(minSize int) int {
	n := int(c.u16())
	if c.err != nil {
		return 0
	}
	if n*minSize > len(c.b) {
		c.fail("count exceeds message length")
		return 0
	}
	return n
}

// bytes returns the next n bytes, aliasing the body.
func (c *cursor) bytes(n int) []byte {
	if n < 0 || n > len(c.b) {
		c.fail("field length exceeds message length")
		return nil
	}
	v := c.b[:n:n]
	c.b = c.b[n:]
	return v
}

// cstring returns the bytes before the next NUL, aliasing the body, and
// consumes the NUL.
func (c *cursor) cstring() []byte {
	i := bytes.IndexByte(c.b, 0)
	if i < 0 {
		c.fail("unterminated string")
		return nil
	}
	v := c.b[:i:i]
	c.b = c.b[i+1:]
	return v
}

// rest returns all unread bytes, aliasing the body.
func (c *cursor) rest() []byte {
	v := c.b
	c.b = nil
	return v
}

// done returns the first error, or an error if bytes remain unread.
func (c *cursor) done() error {
	if c.err == nil && len(c.b) > 0 {
		c.fail("trailing bytes")
	}
	return c.err
}

// int16s reads an unsigned 16-bit count followed by that many int16 values.
func (c *cursor) int16s() []int16 {
	n := c.ucount(2)
	if n == 0 {
		return nil
	}
	vs := make([]int16, n)
	for i := range vs {
		vs[i] = int16(c.u16())
	}
	return vs
}
