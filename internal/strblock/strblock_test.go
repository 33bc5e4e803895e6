package strblock

import (
	"bytes"
	"strings"
	"testing"
)

// TestBlock: every string handed out keeps its value while later ones are
// copied (the same source buffer overwritten each time, as a read buffer
// is), blocks grow from 64 bytes to 1 KiB, and an empty value is "".
func TestBlock(t *testing.T) {
	var s Block
	src := make([]byte, MaxLen)
	var got, want []string
	for i := range 2000 {
		n := i % (MaxLen + 1)
		v := src[:n]
		for j := range v {
			v[j] = byte('a' + (i+j)%26)
		}
		got = append(got, s.String(v))
		want = append(want, string(v))
		if c := cap(s.b); n > 0 && (c < 64 || c > 1024) {
			t.Fatalf("block of %d bytes", c)
		}
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d changed: %q, want %q", i, got[i], want[i])
		}
	}
	if s.String(nil) != "" || s.String([]byte{}) != "" {
		t.Fatal("empty value")
	}
	// A first short string gets a small block.
	var f Block
	if f.String([]byte("hi")) != "hi" || cap(f.b) != 64 {
		t.Fatalf("first block of %d bytes", cap(f.b))
	}
	if x := f.String(bytes.Repeat([]byte("x"), 100)); x != strings.Repeat("x", 100) || cap(f.b) != 128 {
		t.Fatalf("second block of %d bytes", cap(f.b))
	}
}
