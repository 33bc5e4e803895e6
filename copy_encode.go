package pgline

// Binary COPY format, as CopyFrom writes it (COPY ... FROM STDIN
// (FORMAT binary)); the stream is cut into CopyData messages anywhere:
//
//	header:  "PGCOPY\n\377\r\n\000", int32 flags (0), int32 header extension length (0)
//	tuple:   int16 field count, per field int32 length (-1 for NULL) and that many bytes
//	         (the field's binary send format)
//	trailer: int16 -1

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtype"
)

// copyBinaryHeader is the binary COPY header with zero flags and no header
// extension.
const copyBinaryHeader = wire.CopyBinaryHeader

// appendCopyTrailer appends the binary COPY trailer.
func appendCopyTrailer(buf []byte) []byte { return wire.AppendCopyBinaryTrailer(buf) }

// copyEncoder encodes rows as binary COPY tuples for columns of the given
// types.
type copyEncoder struct {
	types *pgtype.Map
	oids  []uint32 // the type of each column
	names []string // the name of each column, for errors
}

// appendRow appends the tuple of row to buf. On error buf is returned
// unchanged (up to len) with an error naming the column and the Go type.
func (e *copyEncoder) appendRow(buf []byte, row []any) ([]byte, error) {
	if len(row) != len(e.oids) {
		return buf, fmt.Errorf("row has %d values for %d columns", len(row), len(e.oids))
	}
	start := len(buf)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
	for i, v := range row {
		lenPos := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		out, format, null, err := e.types.Encode(e.oids[i], v, buf)
		if err != nil {
			return buf[:start], fmt.Errorf("column %q: %w", e.names[i], err)
		}
		if null {
			buf = out[:lenPos+4]
			binary.BigEndian.PutUint32(buf[lenPos:], math.MaxUint32) // -1
			continue
		}
		if format != 1 {
			// A value with only a text form (a UUID or numeric string,
			// a string for an int column, a driver.Valuer's string):
			// the column's codec reads the text, as the server would,
			// and writes its binary form. Binary values never come here.
			text := append([]byte(nil), out[lenPos+4:]...) // out is rewritten below
			if _, array := e.types.ArrayElem(e.oids[i]); array && len(bytes.TrimLeft(text, " \t\n\r\v\f")) > 0 && bytes.TrimLeft(text, " \t\n\r\v\f")[0] == '[' {
				// "[0:1]={5,6}": the Go value the text decodes to has
				// no bounds, and re-encoded it would store {5,6}.
				return buf[:start], fmt.Errorf("column %q: array text with explicit bounds cannot be written by COPY FROM (binary) without losing them: pass a Go slice (bounds from 1), or copy text with CopyFromReader", e.names[i])
			}
			if val, derr := e.types.DecodeValue(e.oids[i], 0, text); derr == nil && val != nil {
				out, format, null, err = e.types.Encode(e.oids[i], val, out[:lenPos+4])
				if err != nil {
					return buf[:start], fmt.Errorf("column %q: %w", e.names[i], err)
				}
			} else if derr != nil {
				return buf[:start], fmt.Errorf("column %q: %T: %w", e.names[i], v, derr)
			}
		}
		if format != 1 || null {
			return buf[:start], fmt.Errorf("column %q: %T has no binary encoding for type %s (OID %d), and COPY FROM writes binary: pass a Go value of a type with one (int64, float64, string for text types, time.Time, []byte, ...)",
				e.names[i], v, e.types.TypeName(e.oids[i]), e.oids[i])
		}
		n := len(out) - lenPos - 4
		if n > math.MaxInt32 {
			return buf[:start], fmt.Errorf("column %q: value of %d bytes is too large", e.names[i], n)
		}
		binary.BigEndian.PutUint32(out[lenPos:], uint32(n))
		buf = out
	}
	return buf, nil
}

// Identifier is an SQL identifier made of parts, such as a table name
// qualified by its schema: Identifier{"public", "users"}.
type Identifier []string

// Sanitize returns the identifier quoted for use in SQL text:
// "public"."users", with each double quote doubled. Use Validate first to
// reject empty parts and NUL bytes, which no quoting can carry.
func (id Identifier) Sanitize() string {
	var b strings.Builder
	for i, part := range id {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quoteIdent(part))
	}
	return b.String()
}

// Validate reports an identifier that cannot be used: no parts, an empty
// part, or a part holding a NUL byte.
func (id Identifier) Validate() error {
	if len(id) == 0 {
		return errors.New("pgline: empty identifier")
	}
	for _, part := range id {
		if err := checkIdent(part); err != nil {
			return err
		}
	}
	return nil
}

func checkIdent(s string) error {
	if s == "" {
		return errors.New("pgline: empty identifier")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("pgline: identifier %q holds a NUL byte", s)
	}
	return nil
}

// quoteIdent quotes one identifier part.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// copyFromSQL returns the statement that describes the columns (their
// types) and the COPY statement itself, with every name quoted.
func copyFromSQL(table Identifier, columns []string) (describe, copySQL string, err error) {
	if err := table.Validate(); err != nil {
		return "", "", err
	}
	if len(columns) == 0 {
		return "", "", errors.New("pgline: CopyFrom needs at least one column")
	}
	var cols strings.Builder
	for i, c := range columns {
		if err := checkIdent(c); err != nil {
			return "", "", err
		}
		if i > 0 {
			cols.WriteString(", ")
		}
		cols.WriteString(quoteIdent(c))
	}
	t := table.Sanitize()
	return "SELECT " + cols.String() + " FROM " + t,
		"COPY " + t + " (" + cols.String() + ") FROM STDIN (FORMAT binary)", nil
}

// CopyFromSource is a source of rows for CopyFrom: Next advances to the
// next row and reports whether there is one, Values returns that row (one
// value per column, in the order of CopyFrom's columns), and Err the error
// that made Next return false, if any. CopyFrom encodes each row before
// calling Next again, so Values may reuse its slice.
type CopyFromSource interface {
	Next() bool
	Values() ([]any, error)
	Err() error
}

// CopyFromRows returns a CopyFromSource over rows.
func CopyFromRows(rows [][]any) CopyFromSource {
	return &rowsSource{rows: rows}
}

type rowsSource struct {
	rows [][]any
	i    int // rows[i-1] is the current row
}

func (s *rowsSource) Next() bool {
	if s.i >= len(s.rows) {
		return false
	}
	s.i++
	return true
}

func (s *rowsSource) Values() ([]any, error) {
	if s.i == 0 {
		return nil, errors.New("pgline: Values called before Next")
	}
	return s.rows[s.i-1], nil
}

func (s *rowsSource) Err() error { return nil }

// CopyFromFunc returns a CopyFromSource that calls next for each row: next
// returns the row, or (nil, nil) at the end, or an error that stops the
// copy. The returned row may be reused by next at its following call.
func CopyFromFunc(next func() (row []any, err error)) CopyFromSource {
	return &funcSource{next: next}
}

type funcSource struct {
	next func() ([]any, error)
	row  []any
	err  error
	done bool
}

func (s *funcSource) Next() bool {
	if s.done {
		return false
	}
	s.row, s.err = s.next()
	if s.err != nil || s.row == nil {
		s.row, s.done = nil, true
		return false
	}
	return true
}

func (s *funcSource) Values() ([]any, error) {
	if s.row == nil {
		return nil, errors.New("pgline: Values called without a current row")
	}
	return s.row, nil
}

func (s *funcSource) Err() error { return s.err }
