package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// streamRow reads a DataRow begun by NextHeader field by field, as a
// caller scanning a row larger than the buffer does, and returns the
// column lengths and values (nil for NULL).
func streamRow(r *Reader) (lens []int, vals [][]byte, err error) {
	n, err := r.ReadColumnCount()
	if err != nil {
		return nil, nil, err
	}
	for i := range n {
		l, err := r.ReadColumnLength(i)
		if err != nil {
			return lens, vals, err
		}
		lens = append(lens, l)
		if l < 0 {
			vals = append(vals, nil)
			continue
		}
		v := make([]byte, l)
		if err := r.ReadFull(v); err != nil {
			return lens, vals, err
		}
		vals = append(vals, v)
	}
	return lens, vals, nil
}

// TestReadColumnsGolden streams DataRows given as golden bytes through a
// buffer smaller than they are, whole and a byte per read.
func TestReadColumnsGolden(t *testing.T) {
	tests := []struct {
		name   string
		golden string
		lens   []int
		vals   [][]byte
	}{
		{"three columns", "44 00000014 0003 00000002 6162 ffffffff 00000000", []int{2, -1, 0}, [][]byte{[]byte("ab"), nil, {}}},
		{"no columns", "44 00000006 0000", nil, nil},
		{"long value", "44 0000002a 0001 00000020 " + strings.Repeat("78", 32), []int{32}, [][]byte{bytes.Repeat([]byte("x"), 32)}},
	}
	for _, tc := range tests {
		golden := unhex(t, tc.golden)
		// The row is followed by another message, which must be read
		// intact after it.
		data := append(append([]byte(nil), golden...), frame(msg{MsgCommandComplete, []byte("SELECT 1\x00")})...)
		for name, src := range map[string]io.Reader{
			"whole":   bytes.NewReader(data),
			"onebyte": iotest.OneByteReader(bytes.NewReader(data)),
		} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				r := NewReader(src, minBufferSize, 0)
				typ, n, err := r.NextHeader()
				if err != nil || typ != MsgDataRow || n != len(golden)-5 {
					t.Fatalf("NextHeader = %q, %d, %v", typ, n, err)
				}
				lens, vals, err := streamRow(r)
				if err != nil {
					t.Fatal(err)
				}
				if !equalInts(lens, tc.lens) || len(vals) != len(tc.vals) {
					t.Fatalf("lengths %v, want %v", lens, tc.lens)
				}
				for i := range vals {
					if (vals[i] == nil) != (tc.vals[i] == nil) || !bytes.Equal(vals[i], tc.vals[i]) {
						t.Fatalf("column %d: %q, want %q", i, vals[i], tc.vals[i])
					}
				}
				if r.Remaining() != 0 {
					t.Fatalf("%d bytes left", r.Remaining())
				}
				if typ, body, err := r.Next(); err != nil || typ != MsgCommandComplete || string(body) != "SELECT 1\x00" {
					t.Fatalf("next message: %q %q %v", typ, body, err)
				}
			})
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadColumnsErrors checks that a count or length that breaks the
// protocol is a *ProtocolError that makes the Reader unusable.
func TestReadColumnsErrors(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantMsg string
		eof     bool // the error wraps io.ErrUnexpectedEOF
	}{
		{"negative count", "44 00000006 ffff", "DataRow: negative column count -1", false},
		{"no count", "44 00000004", "DataRow: truncated", false},
		{"count cut short", "44 00000005 00", "DataRow: truncated", false},
		{"length below -1", "44 0000000a 0001 fffffffe", "DataRow column 0 has length -2 with 0 bytes left in the message", false},
		{"length beyond the message", "44 0000000c 0001 00000003 6162", "DataRow column 0 has length 3 with 2 bytes left in the message", false},
		{"second length beyond", "44 0000000f 0002 ffffffff 00000002 61", "DataRow column 1 has length 2 with 1 bytes left in the message", false},
		{"length cut short", "44 00000009 0002 ffffff", "DataRow column 0 is cut short with 3 bytes left in the message", false},
		{"missing length", "44 0000000a 0002 ffffffff", "DataRow column 1 is cut short with 0 bytes left in the message", false},
		{"partial length", "44 0000000c 0002 ffffffff 0000", "DataRow column 1 is cut short with 2 bytes left in the message", false},
		{"stream ends in the count", "44 00000010 00", "stream ended inside a message", true},
		{"stream ends in a length", "44 00000010 0001 0000", "stream ended inside a message", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(unhex(t, tc.data)), minBufferSize, 0)
			if _, _, err := r.NextHeader(); err != nil {
				t.Fatal(err)
			}
			_, _, err := streamRow(r)
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ProtocolError", err)
			}
			if pe.Msg != tc.wantMsg {
				t.Fatalf("error %q, want %q", pe.Msg, tc.wantMsg)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) != tc.eof {
				t.Fatalf("error %v: wraps io.ErrUnexpectedEOF: %v, want %v", err, !tc.eof, tc.eof)
			}
			if r.Err() != err {
				t.Fatalf("Reader error %v, want the sticky %v", r.Err(), err)
			}
			if _, _, err := r.Next(); err != r.Err() {
				t.Fatalf("Next after the error: %v", err)
			}
		})
	}
}

// TestReadColumnsNoAlloc checks that streaming the framing of a row
// allocates nothing.
func TestReadColumnsNoAlloc(t *testing.T) {
	data := unhex(t, "44 00000014 0003 00000002 6162 ffffffff 00000000")
	src := bytes.NewReader(data)
	r := NewReader(src, minBufferSize, 0)
	n := testing.AllocsPerRun(100, func() {
		src.Reset(data)
		if _, _, err := r.NextHeader(); err != nil {
			t.Fatal(err)
		}
		cols, err := r.ReadColumnCount()
		if err != nil {
			t.Fatal(err)
		}
		for i := range cols {
			l, err := r.ReadColumnLength(i)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Discard(max(l, 0)); err != nil {
				t.Fatal(err)
			}
		}
	})
	if n != 0 {
		t.Errorf("streaming a row allocates %v times per run", n)
	}
}

// FuzzDataRowStream checks that streaming a DataRow body through a small
// buffer never panics, fails only with *ProtocolError, and agrees with
// ParseDataRow on every row that parses.
func FuzzDataRowStream(f *testing.F) {
	addBackendSeeds(f)
	f.Fuzz(func(t *testing.T, _ byte, body []byte) {
		if len(body) > 1<<16 {
			return
		}
		r := NewReader(bytes.NewReader(frame(msg{MsgDataRow, body})), minBufferSize, 0)
		if _, _, err := r.NextHeader(); err != nil {
			t.Fatal(err)
		}
		lens, vals, err := streamRow(r)
		d, perr := ParseDataRow(body)
		if err != nil {
			if !isProtocolError(err) {
				t.Fatalf("error %v is not a *ProtocolError", err)
			}
			if perr == nil {
				t.Fatalf("streaming failed with %v on a row ParseDataRow takes", err)
			}
			return
		}
		if perr != nil {
			if r.Remaining() == 0 {
				t.Fatalf("ParseDataRow fails with %v on a row streamed whole", perr)
			}
			return // trailing bytes: left for the caller
		}
		want := d.Values(nil)
		if len(lens) != len(want) || r.Remaining() != 0 {
			t.Fatalf("%d columns with %d bytes left, ParseDataRow %d", len(lens), r.Remaining(), len(want))
		}
		for i := range want {
			if (vals[i] == nil) != (want[i] == nil) || !bytes.Equal(vals[i], want[i]) {
				t.Fatalf("column %d: %q, ParseDataRow %q", i, vals[i], want[i])
			}
		}
	})
}
