package wire

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// TestBufferedDataRow: taking whole buffered DataRows with BufferedDataRow
// and everything else with Next reads the same messages as Next alone,
// however the stream is split into reads; BufferedDataRow consumes
// nothing when it reports false.
func TestBufferedDataRow(t *testing.T) {
	var data []byte
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		if i%7 == 3 {
			data = append(data, MsgCommandComplete, 0, 0, 0, 13)
			data = append(data, "SELECT 1\x00"...)
			continue
		}
		val := bytes.Repeat([]byte{byte(i)}, rng.IntN(200))
		var err error
		if data, err = AppendDataRow(data, [][]byte{val, nil, {1, 2}}); err != nil {
			t.Fatal(err)
		}
	}
	type msg struct {
		typ  byte
		body string
	}
	readAll := func(r *Reader, buffered bool) []msg {
		var got []msg
		for {
			if buffered {
				before := r.Buffered()
				if body, ok := r.BufferedDataRow(); ok {
					got = append(got, msg{MsgDataRow, string(body)})
					continue
				}
				if r.Buffered() != before {
					t.Fatal("BufferedDataRow consumed bytes and reported false")
				}
			}
			typ, body, err := r.Next()
			if err == io.EOF {
				return got
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, msg{typ, string(body)})
		}
	}
	want := readAll(NewReader(bytes.NewReader(data), 0, 0), false)
	for name, src := range map[string]func() io.Reader{
		"whole":   func() io.Reader { return bytes.NewReader(data) },
		"onebyte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		"halves":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
	} {
		for _, size := range []int{16, 64, 300, 4096} {
			got := readAll(NewReader(src(), size, 0), true)
			if len(got) != len(want) {
				t.Fatalf("%s/%d: %d messages, want %d", name, size, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s/%d: message %d differs", name, size, i)
				}
			}
		}
	}

	// A DataRow with an invalid length is left to Next, which rejects it.
	bad := []byte{MsgDataRow, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0}
	r := NewReader(bytes.NewReader(bad), 0, 0)
	if err := r.fill(len(bad)); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.BufferedDataRow(); ok {
		t.Fatal("BufferedDataRow took a DataRow of negative length")
	}
	if _, _, err := r.Next(); err == nil {
		t.Fatal("Next accepted a DataRow of negative length")
	}
	// A DataRow over the maximum message size is left to Next too.
	big, err := AppendDataRow(nil, [][]byte{make([]byte, 100)})
	if err != nil {
		t.Fatal(err)
	}
	r = NewReader(bytes.NewReader(big), 0, 64)
	if err := r.fill(len(big)); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.BufferedDataRow(); ok {
		t.Fatal("BufferedDataRow took a DataRow over the maximum message size")
	}
}
