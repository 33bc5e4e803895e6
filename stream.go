package pgline

// Large values. A DataRow that fits in the read buffer (64 KiB by default)
// is scanned from the buffer. A larger one is never assembled whole: Scan
// reads it column by column from the socket, in order:
//
//   - into *[]byte or *string, a bytea or text-like value is allocated once
//     at its exact size and read straight into;
//   - into a StreamTo destination, it is copied to the writer through the
//     read buffer, a buffer at a time, whatever its size;
//   - into nil, it is skipped without being allocated;
//   - into anything else, it is read into a scratch buffer (or an exact
//     allocation when larger) and decoded as usual.
//
// Such a row can be scanned once: a second Scan, or Values after Scan, is
// an error. Values and RawValues before Scan read the row whole. While a
// value streams, the connection's reader is busy: statements of other
// goroutines queued on the connection wait until the rows are closed.

import (
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/pgtype"
)

// StreamDest is a Scan destination that writes a column's value to W
// instead of keeping it: bytea as its raw bytes, text, varchar, json and
// jsonb as the text the server sent. Memory stays bounded whatever the
// value's size. After Scan, N holds the number of bytes written and Null
// reports a NULL value (nothing written).
type StreamDest struct {
	W    io.Writer
	N    int64
	Null bool
}

// StreamTo returns a Scan destination that streams one column's value into
// w (see StreamDest).
func StreamTo(w io.Writer) *StreamDest { return &StreamDest{W: w} }

// streamable reports whether a column's bytes, in its format, are what
// StreamTo writes and *[]byte/*string receive raw: bytea in binary, and
// text-like types. jsonb in binary carries a version byte first (skip is 1).
func streamable(f *FieldDescription) (ok bool, skip int) {
	switch f.DataTypeOID {
	case pgtype.ByteaOID:
		return f.Format == 1, 0
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.JSONOID, pgtype.UnknownOID:
		return true, 0
	case pgtype.JSONBOID:
		if f.Format == 1 {
			return true, 1
		}
		return true, 0
	}
	return false, 0
}

// streamPlan writes values that fit in the read buffer to a StreamDest.
type streamPlan struct{ skip int }

func newStreamPlan(f *FieldDescription) (pgtype.ScanPlan, error) {
	ok, skip := streamable(f)
	if !ok {
		return nil, fmt.Errorf("pgline: column %s: StreamTo takes bytea, text and json columns, not type OID %d", f.Name, f.DataTypeOID)
	}
	return streamPlan{skip: skip}, nil
}

func (p streamPlan) Scan(src []byte, dst any) error {
	sd := dst.(*StreamDest)
	sd.N, sd.Null = 0, src == nil
	if src == nil {
		return nil
	}
	if len(src) < p.skip {
		return errors.New("pgline: jsonb value without its version byte")
	}
	n, err := sd.W.Write(src[p.skip:])
	sd.N = int64(n)
	return err
}

// scanBig scans a row larger than the read buffer from the socket. A
// column that does not fit its destination is consumed and reported, and
// the columns after it are still scanned; an I/O or protocol error closes
// the connection.
func (r *Rows) scanBig(dest []any) error {
	if r.res.BigScanned {
		return errors.New("pgline: a row larger than the read buffer can be scanned once")
	}
	r.res.BigScanned = true
	c := &r.c.s
	var first error
	for i, d := range dest {
		l, err := r.res.BigColumnLength(c, i)
		if err != nil {
			return r.bigFail(err)
		}
		err, fatal := r.scanBigColumn(i, d, l)
		if fatal {
			return r.bigFail(err)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// bigFail ends the rows on an error of a big row's reading (see
// result.bigFail).
func (r *Rows) bigFail(err error) error { return r.res.BigFail(&r.c.s, err) }

// scanBigColumn reads column i, of length l (-1 NULL), into d. fatal
// reports an error after which the connection cannot go on.
func (r *Rows) scanBigColumn(i int, d any, l int) (err error, fatal bool) {
	c := &r.c.s
	f := (*FieldDescription)(&r.res.Sd.Fields[i])
	if l == -1 {
		if d == nil {
			return nil, false
		}
		if sd, ok := d.(*StreamDest); ok {
			sd.N, sd.Null = 0, true
			return nil, false
		}
		return r.scanOne(&r.res.Sd.Plans[i], i, nil, d), false
	}
	raw, skip := streamable(f)
	switch dst := d.(type) {
	case nil:
		if err := r.res.BigDiscard(c, l); err != nil {
			return err, true
		}
		return nil, false
	case *StreamDest:
		if !raw {
			if err := r.res.BigDiscard(c, l); err != nil {
				return err, true
			}
			_, err := newStreamPlan(f)
			return err, false
		}
		if l < skip {
			return &ProtocolError{Msg: "jsonb value without its version byte"}, true
		}
		if err := r.res.BigDiscard(c, skip); err != nil {
			return err, true
		}
		dst.Null = false
		dst.N = int64(l - skip)
		rerr, werr := r.res.BigCopy(c, dst.W, l-skip)
		if rerr != nil {
			dst.N = 0
			return rerr, true
		}
		if werr != nil {
			// The writer failed; the value was consumed all the same.
			return r.columnErr(i, fmt.Errorf("writing to the StreamTo writer: %w", werr)), false
		}
		return nil, false
	case *[]byte:
		if raw && skip == 0 {
			b, err, fatal := r.readValue(i, l)
			if err == nil {
				*dst = b
			}
			return err, fatal
		}
	case *string:
		if raw {
			b, err, fatal := r.readValue(i, l)
			if err == nil && len(b) < skip {
				// A binary jsonb value without its version byte: only a
				// broken server sends one.
				return r.columnErr(i, errors.New("jsonb value without its version byte")), false
			}
			if err == nil {
				b = b[skip:]
				*dst = unsafe.String(unsafe.SliceData(b), len(b))
			}
			return err, fatal
		}
	}
	var src []byte
	if l <= session.ScratchSize {
		if src, err = r.res.BigScratch(c, l); err != nil {
			return err, true
		}
	} else {
		b, err, fatal := r.readValue(i, l)
		if err != nil {
			return err, fatal
		}
		src = b
	}
	return r.scanOne(&r.res.Sd.Plans[i], i, src, d), false
}

// readValue reads column i's l bytes into a new slice of exactly that
// size, refusing (and skipping) a value over the maximum message size.
func (r *Rows) readValue(i, l int) ([]byte, error, bool) {
	b, tooBig, err := r.res.BigValue(&r.c.s, l)
	if err != nil {
		return nil, err, true
	}
	if tooBig > 0 {
		return nil, r.columnErr(i, fmt.Errorf("value of %d bytes exceeds max_message_size (%d); scan it with StreamTo", l, tooBig)), false
	}
	return b, nil, false
}

// materialize makes the current row readable whole, for ScanColumn,
// Values and RawValues (see result.materialize).
func (r *Rows) materialize() error {
	if !r.res.Big && r.res.Row.Check() != nil {
		return r.malformedRow()
	}
	return r.res.Materialize(&r.c.s)
}

// streams reports whether a destination writes the value elsewhere
// (StreamTo) as it is scanned.
func streams(dest []any) bool {
	for _, d := range dest {
		if _, ok := d.(*StreamDest); ok {
			return true
		}
	}
	return false
}
