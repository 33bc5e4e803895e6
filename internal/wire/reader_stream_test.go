package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestReaderStreamColumns reads a DataRow much larger than the buffer column
// by column, as the connection does for huge rows.
func TestReaderStreamColumns(t *testing.T) {
	cols := [][]byte{
		bytes.Repeat([]byte("a"), 10000),
		nil,
		[]byte("small"),
		bytes.Repeat([]byte("b"), 3000),
		{},
	}
	body := dataRowBody(t, cols...)
	data := frame(msg{MsgDataRow, body}, msg{MsgCommandComplete, []byte("SELECT 1\x00")})
	for name, src := range map[string]func() io.Reader{
		"whole":   func() io.Reader { return bytes.NewReader(data) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
	} {
		cr := &countReader{r: src()}
		r := NewReader(cr, 64, 0)
		typ, n, err := r.NextHeader()
		if err != nil || typ != MsgDataRow || n != len(body) {
			t.Fatalf("%s: NextHeader = %q, %d, %v; want 'D', %d", name, typ, n, err, len(body))
		}
		var word [4]byte
		if err := r.ReadFull(word[:2]); err != nil {
			t.Fatal(err)
		}
		if c := binary.BigEndian.Uint16(word[:]); int(c) != len(cols) {
			t.Fatalf("%s: %d columns", name, c)
		}
		for i, want := range cols {
			if err := r.ReadFull(word[:]); err != nil {
				t.Fatalf("%s: column %d length: %v", name, i, err)
			}
			l := int32(binary.BigEndian.Uint32(word[:]))
			if want == nil {
				if l != -1 {
					t.Fatalf("%s: column %d length %d, want -1", name, i, l)
				}
				continue
			}
			switch i {
			case 3: // skip it
				if err := r.Discard(int(l)); err != nil {
					t.Fatalf("%s: Discard: %v", name, err)
				}
			case 4: // the last column: take the rest with Body
				got, err := r.Body()
				if err != nil || len(got) != 0 || l != 0 {
					t.Fatalf("%s: Body = %q, %v (length %d)", name, got, err, l)
				}
			default:
				got := make([]byte, l)
				if err := r.ReadFull(got); err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s: column %d: %v, equal=%v", name, i, err, bytes.Equal(got, want))
				}
			}
		}
		if r.Remaining() != 0 {
			t.Fatalf("%s: %d bytes left", name, r.Remaining())
		}
		typ, b, err := r.Next()
		if err != nil || typ != MsgCommandComplete || string(b) != "SELECT 1\x00" {
			t.Fatalf("%s: after streaming: %q %q %v", name, typ, b, err)
		}
		if len(r.buf) != 64 {
			t.Fatalf("%s: buffer size changed to %d", name, len(r.buf))
		}
		if name == "whole" && cr.largest < 10000-64 {
			t.Fatalf("the 10000-byte column was not read straight into its destination (largest read %d)", cr.largest)
		}
	}
}

func TestReaderBodyLargerThanBuffer(t *testing.T) {
	payload := bytes.Repeat([]byte("xyz"), 1000)
	data := frame(msg{MsgCopyData, payload}, msg{MsgCopyDone, nil})
	r := NewReader(bytes.NewReader(data), 32, 0)
	_, n, err := r.NextHeader()
	if err != nil || n != len(payload) {
		t.Fatal(n, err)
	}
	if r.Size() != 32 || n <= r.Size() {
		t.Fatalf("Size %d with body %d", r.Size(), n)
	}
	first := make([]byte, 10)
	if err := r.ReadFull(first); err != nil || string(first) != "xyzxyzxyzx" {
		t.Fatalf("%q %v", first, err)
	}
	rest, err := r.Body()
	if err != nil || !bytes.Equal(rest, payload[10:]) || cap(rest) != len(payload)-10 {
		t.Fatalf("Body: %v, equal=%v cap=%d", err, bytes.Equal(rest, payload[10:]), cap(rest))
	}
	if typ, _, err := r.Next(); err != nil || typ != MsgCopyDone {
		t.Fatalf("%q %v", typ, err)
	}
}

// TestReaderNextDiscardsRest checks that Next skips what a NextHeader caller
// left unread.
func TestReaderNextDiscardsRest(t *testing.T) {
	for _, size := range []int{16, 0} {
		data := frame(msg{MsgCopyData, bytes.Repeat([]byte("q"), 500)}, msg{MsgReadyForQuery, []byte("I")})
		r := NewReader(bytes.NewReader(data), size, 0)
		if _, _, err := r.NextHeader(); err != nil {
			t.Fatal(err)
		}
		if err := r.Discard(3); err != nil {
			t.Fatal(err)
		}
		typ, b, err := r.Next()
		if err != nil || typ != MsgReadyForQuery || string(b) != "I" {
			t.Fatalf("buffer %d: %q %q %v", size, typ, b, err)
		}
	}
}

func TestReaderConsumePastEnd(t *testing.T) {
	data := frame(msg{MsgCopyData, []byte("abc")}, msg{MsgReadyForQuery, []byte("I")})
	r := NewReader(bytes.NewReader(data), 0, 0)
	if _, _, err := r.NextHeader(); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadFull(make([]byte, 4)); err == nil {
		t.Fatal("ReadFull past the end of the message succeeded")
	}
	if err := r.Discard(4); err == nil {
		t.Fatal("Discard past the end of the message succeeded")
	}
	if err := r.Discard(-1); err == nil {
		t.Fatal("Discard(-1) succeeded")
	}
	if err := r.ReadFull(make([]byte, 3)); err != nil {
		t.Fatalf("ReadFull of the whole body: %v", err)
	}
	if b, err := r.Body(); err != nil || len(b) != 0 {
		t.Fatalf("Body at end: %q %v", b, err)
	}
	if typ, _, err := r.Next(); err != nil || typ != MsgReadyForQuery {
		t.Fatalf("%q %v", typ, err)
	}
}

func TestReaderStreamTruncated(t *testing.T) {
	data := frame(msg{MsgCopyData, bytes.Repeat([]byte("q"), 500)})
	for _, op := range []string{"ReadFull", "Discard", "Body"} {
		r := NewReader(bytes.NewReader(data[:300]), 16, 0)
		if _, _, err := r.NextHeader(); err != nil {
			t.Fatal(err)
		}
		var err error
		switch op {
		case "ReadFull":
			err = r.ReadFull(make([]byte, 500))
		case "Discard":
			err = r.Discard(500)
		case "Body":
			_, err = r.Body()
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%s: %v, want io.ErrUnexpectedEOF", op, err)
		}
		if _, _, err2 := r.Next(); err2 != err {
			t.Fatalf("%s: Next after error: %v", op, err2)
		}
	}
}
