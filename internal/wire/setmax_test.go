package wire

import (
	"bytes"
	"strings"
	"testing"
)

// TestSetMaxMessageSize: a lowered maximum refuses, before allocating it,
// an ErrorResponse whose header claims more; restored, the same claim
// passes the check (and fails only because the bytes never come).
func TestSetMaxMessageSize(t *testing.T) {
	huge := []byte{'E', 0x00, 0x20, 0x00, 0x04} // a body of 2 MiB claimed, none sent
	r := NewReader(bytes.NewReader(huge), 64, 1<<30)
	old := r.SetMaxMessageSize(1 << 20)
	if old != 1<<30 || r.MaxMessageSize() != 1<<20 {
		t.Fatalf("SetMaxMessageSize: old %d, now %d", old, r.MaxMessageSize())
	}
	if _, _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("lowered: %v, want the size refused", err)
	}
	r = NewReader(bytes.NewReader(huge), 64, 1<<20)
	r.SetMaxMessageSize(1 << 30)
	if _, _, err := r.Next(); err == nil || strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("restored: %v, want the stream's end, not the size", err)
	}
}
