package wire

import (
	"encoding/binary"
	"fmt"
)

// DataRow is a DataRow ('D') body and a cursor over its columns.
//
//	int16 n, n × (int32 length or -1 for NULL, length bytes)
//
// Column values alias the body. A DataRow is a small value: decoding and
// walking one allocates nothing. Its column lengths are checked against
// the body once (Check, or a walk with NextChecked and Finish) before
// Next, Column or Values read them.
type DataRow struct {
	body []byte // the whole body
	n    int    // number of columns
	off  int    // offset in body of the next column for Next
	i    int    // index of the next column for Next
	// Column's own cursor: the offset of column ci's length. Columns read
	// in order cost one step each.
	coff int
	ci   int
	// checked: every column length is -1 or fits in the body, and no
	// bytes are left over.
	checked bool
}

// ParseDataRow checks that body is a well-formed DataRow: a non-negative
// column count and, for each column, a length of -1 (NULL) or one that fits
// in what is left of the body, with no bytes left over.
func ParseDataRow(body []byte) (DataRow, error) {
	d, err := SplitDataRow(body)
	if err == nil {
		err = d.Check()
	}
	return d, err
}

// SplitDataRow reads body's column count and returns the row with its
// columns not yet checked: a caller that reads every column in order
// checks them as it goes with NextChecked and Finish (one walk of the row
// instead of two); any other use needs Check first.
func SplitDataRow(body []byte) (DataRow, error) {
	if len(body) < 2 {
		return DataRow{}, protoErr("DataRow: truncated")
	}
	n := int(int16(binary.BigEndian.Uint16(body)))
	if n < 0 {
		return DataRow{}, protoErr(fmt.Sprintf("DataRow: negative column count %d", n))
	}
	return DataRow{body: body, n: n, off: 2, coff: 2}, nil
}

// Checked reports whether the row's column lengths were checked.
func (d *DataRow) Checked() bool { return d.checked }

// Check checks the row's column lengths as ParseDataRow does (once).
func (d *DataRow) Check() error {
	if d.checked {
		return nil
	}
	body := d.body
	off := 2
	for i := 0; i < d.n; i++ {
		if len(body)-off < 4 {
			return protoErr(fmt.Sprintf("DataRow: column %d: truncated", i))
		}
		l := int(int32(binary.BigEndian.Uint32(body[off:])))
		off += 4
		if l == -1 {
			continue
		}
		if l < 0 {
			return protoErr(fmt.Sprintf("DataRow: column %d: invalid length %d", i, l))
		}
		if l > len(body)-off {
			return protoErr(fmt.Sprintf("DataRow: column %d: length %d exceeds message", i, l))
		}
		off += l
	}
	if off != len(body) {
		return protoErr(fmt.Sprintf("DataRow: %d trailing bytes", len(body)-off))
	}
	d.checked = true
	return nil
}

// NextChecked is Next for a row whose lengths may not have been checked
// (small enough to be inlined, as Next): it checks the column's length
// against the body before returning its value, and returns ok false for a
// malformed column (Check then says what is wrong). A walk calls it once
// per column (NumColumns times), then Finish, which checks the row's end.
func (d *DataRow) NextChecked() (value []byte, isNull, ok bool) {
	body, off := d.body, d.off
	if len(body)-off < 4 {
		return nil, false, false
	}
	l := int(int32(binary.BigEndian.Uint32(body[off:])))
	off += 4
	d.i++
	if uint(l) > uint(len(body)-off) {
		d.off = off
		return nil, l == -1, l == -1
	}
	d.off = off + l
	return body[off : off+l : off+l], false, true
}

// Finish ends a walk of every column with NextChecked: it reports whether
// the row ends there, with no bytes left over, and then marks it checked.
func (d *DataRow) Finish() bool {
	if d.i == d.n && d.off == len(d.body) {
		d.checked = true
	}
	return d.checked
}

// errUnchecked is the panic of Next, Column and Values on a row whose
// lengths were not checked: a bug of the caller, which would otherwise
// read a hostile server's lengths past the body.
const errUnchecked = "wire: DataRow read before Check"

// NumColumns returns the number of columns in the row.
func (d *DataRow) NumColumns() int { return d.n }

// Next returns the next column's value, or isNull true for NULL, and ok false
// after the last column.
func (d *DataRow) Next() (value []byte, isNull, ok bool) {
	if !d.checked {
		panic(errUnchecked)
	}
	if d.i >= d.n {
		return nil, false, false
	}
	d.i++
	l := int(int32(binary.BigEndian.Uint32(d.body[d.off:])))
	d.off += 4
	if l < 0 {
		return nil, true, true
	}
	value = d.body[d.off : d.off+l : d.off+l]
	d.off += l
	return value, false, true
}

// Reset rewinds Next to the first column.
func (d *DataRow) Reset() { d.off, d.i = 2, 0 }

// Column returns column i (0-based), or isNull true for NULL. It walks the row
// from the last column it returned, or from the start for an earlier one, so
// columns asked for in order cost one step each; it does not move Next. It
// panics if i is out of range, like a slice index, and, like Next and
// Values, if the row was not checked.
func (d *DataRow) Column(i int) (value []byte, isNull bool) {
	if i < 0 || i >= d.n {
		panic(fmt.Sprintf("wire: DataRow column %d out of range [0,%d)", i, d.n))
	}
	if !d.checked {
		panic(errUnchecked)
	}
	if i < d.ci {
		d.ci, d.coff = 0, 2
	}
	for ; d.ci < i; d.ci++ {
		if l := int(int32(binary.BigEndian.Uint32(d.body[d.coff:]))); l > 0 {
			d.coff += l
		}
		d.coff += 4
	}
	l := int(int32(binary.BigEndian.Uint32(d.body[d.coff:])))
	if l < 0 {
		return nil, true
	}
	off := d.coff + 4
	return d.body[off : off+l : off+l], false
}

// Values appends every column value to dst[:0] and returns it; NULL is nil
// and an empty value is non-nil. Reusing dst makes it allocation-free.
func (d *DataRow) Values(dst [][]byte) [][]byte {
	if !d.checked {
		panic(errUnchecked)
	}
	if cap(dst) < d.n {
		dst = make([][]byte, 0, d.n) // one allocation, not one per doubling
	}
	dst = dst[:0]
	off := 2
	for range d.n {
		l := int(int32(binary.BigEndian.Uint32(d.body[off:])))
		off += 4
		if l < 0 {
			dst = append(dst, nil)
			continue
		}
		dst = append(dst, d.body[off:off+l:off+l])
		off += l
	}
	return dst
}

// AppendDataRow appends a DataRow message (sent by servers); a nil value is
// NULL.
func AppendDataRow(dst []byte, values [][]byte) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgDataRow)
	if len(values) > 1<<15-1 {
		return dst[:orig], ErrMessageTooLong
	}
	dst = AppendInt16(dst, int16(len(values)))
	var err error
	for _, v := range values {
		if dst, err = appendBytes(dst, v); err != nil {
			return dst[:orig], err
		}
	}
	return FinishMessage(dst, start)
}
