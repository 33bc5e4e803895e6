package wire

import (
	"bytes"
	"testing"
)

// benchRows returns the wire bytes of n DataRows of an int4, a text and a
// NULL column.
func benchRows(b *testing.B, n int) []byte {
	var data []byte
	var err error
	for range n {
		data, err = AppendDataRow(data, [][]byte{{0, 0, 0, 42}, []byte("hello, world"), nil})
		if err != nil {
			b.Fatal(err)
		}
	}
	return data
}

// BenchmarkReaderNextDataRow reads DataRows from an in-memory stream.
func BenchmarkReaderNextDataRow(b *testing.B) {
	const rows = 1000
	data := benchRows(b, rows)
	src := bytes.NewReader(data)
	r := NewReader(src, 0, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		src.Reset(data)
		for range rows {
			if typ, _, err := r.Next(); err != nil || typ != MsgDataRow {
				b.Fatal(typ, err)
			}
		}
	}
}

// BenchmarkParseDataRow decodes a DataRow and visits every column.
func BenchmarkParseDataRow(b *testing.B) {
	body := benchRows(b, 1)[5:]
	b.ReportAllocs()
	for b.Loop() {
		d, err := ParseDataRow(body)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			v, _, ok := d.Next()
			if !ok {
				break
			}
			n += len(v)
		}
		if n != 16 {
			b.Fatal(n)
		}
	}
}

// BenchmarkDataRowColumn reads the 6 columns of a row one by one with
// Column, in order, as database/sql's column scanner does.
func BenchmarkDataRowColumn(b *testing.B) {
	body, err := AppendDataRow(nil, [][]byte{{0, 0, 0, 42}, []byte("name 42"), make([]byte, 8), make([]byte, 8), []byte("0123456789abcdef0123456789abcdef"), {1}})
	if err != nil {
		b.Fatal(err)
	}
	d, err := ParseDataRow(body[5:])
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for i := range 6 {
			v, _ := d.Column(i)
			n += len(v)
		}
		if n != 60 {
			b.Fatal(n)
		}
	}
}

// BenchmarkAppendBind encodes a Bind with three parameters into a reused
// buffer.
func BenchmarkAppendBind(b *testing.B) {
	params := [][]byte{{0, 0, 0, 42}, []byte("hello, world"), nil}
	formats := []int16{1}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		buf, err = AppendBind(buf[:0], "", "stmt_1", formats, params, formats)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPipelineEncode encodes Parse, Bind, Describe, Execute and Sync
// into a reused buffer.
func BenchmarkPipelineEncode(b *testing.B) {
	params := [][]byte{{0, 0, 0, 42}}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendParse(buf[:0], "", "SELECT $1::int4", []uint32{23})
		buf, _ = AppendBind(buf, "", "", nil, params, nil)
		buf, _ = AppendDescribe(buf, 'P', "")
		buf, _ = AppendExecute(buf, "", 0)
		buf = AppendSync(buf)
	}
}

// BenchmarkReaderRows reads a reply's DataRows as pgline's Rows does:
// through NextHeader and Body (the general path), and through
// BufferedDataRow with that path as the fallback.
func BenchmarkReaderRows(b *testing.B) {
	const rows = 1000
	data := benchRows(b, rows)
	for _, mode := range []string{"header-body", "buffered"} {
		b.Run(mode, func(b *testing.B) {
			src := bytes.NewReader(data)
			r := NewReader(src, 0, 0)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				src.Reset(data)
				for range rows {
					if mode == "buffered" {
						if _, ok := r.BufferedDataRow(); ok {
							continue
						}
					}
					typ, _, err := r.NextHeader()
					if err == nil {
						_, err = r.Body()
					}
					if err != nil || typ != MsgDataRow {
						b.Fatal(typ, err)
					}
				}
			}
		})
	}
}
