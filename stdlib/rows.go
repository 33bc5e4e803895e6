package stdlib

import (
	"database/sql/driver"
	"fmt"
	"io"
	"reflect"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/internal/strblock"
	"github.com/pgline/pgline/pgtype"
)

// Rows is the driver.Rows of a query. Next decodes each column straight
// from the row as the server sent it into the value database/sql expects
// (see pgtype.Map.DriverValue): int64, float64, bool, []byte, string or
// time.Time.
type Rows struct {
	c      *Conn
	r      *pgline.Rows // nil once closed
	fields []pgline.FieldDescription
	cols   *colInfo
	// short holds the short text values Next has handed out.
	short strblock.Block
}

func (c *Conn) newRows(r *pgline.Rows) *Rows {
	fields := r.FieldDescriptions()
	rows := &Rows{c: c, r: r, fields: fields, cols: c.cols.get(fields, c.types)}
	c.rows = rows
	return rows
}

// Columns returns the names of the result columns.
func (r *Rows) Columns() []string { return r.cols.names }

// Close discards the rows not read and frees the connection. It returns
// the error that ended the statement, if any.
func (r *Rows) Close() error {
	if r.r == nil {
		return nil
	}
	r.r.Close()
	return r.finish()
}

// finish records that the rows are done and returns their error.
func (r *Rows) finish() error {
	err := r.r.Err()
	r.r = nil
	if r.c.rows == r {
		r.c.rows = nil
	}
	return r.c.driverErr(err)
}

// Next decodes the next row into dest; it returns io.EOF after the last
// row. []byte values are copies: database/sql may keep them.
func (r *Rows) Next(dest []driver.Value) error {
	if r.r == nil {
		return io.EOF
	}
	if !r.r.Next() {
		if err := r.finish(); err != nil {
			return err
		}
		return io.EOF
	}
	raw, err := r.rawValues()
	if err != nil {
		return err
	}
	if len(raw) != len(dest) || len(raw) != len(r.cols.dec) {
		return fmt.Errorf("pgline/stdlib: row has %d columns, want %d", len(raw), len(dest))
	}
	for i, src := range raw {
		if r.cols.copiesText[i] && src != nil && len(src) <= strblock.MaxLen {
			// A short text value goes into the rows' shared block: one
			// allocation for many values and rows.
			dest[i] = r.short.String(src)
			continue
		}
		v, err := r.cols.dec[i](src)
		if err != nil {
			return fmt.Errorf("pgline/stdlib: column %d (%s): %w", i, r.fields[i].Name, err)
		}
		dest[i] = v
	}
	return nil
}

// rawValues returns the current row's values as pgline's RawValues does,
// or, for a row larger than the read buffer that could not be read whole
// (its reading failed, its ctx ended, or it exceeds max_message_size),
// why: RawValues then returns nil, and the rows' error or Values says why.
func (r *Rows) rawValues() ([][]byte, error) {
	raw := r.r.RawValues()
	if raw == nil && len(r.cols.dec) > 0 {
		if err := r.r.Err(); err != nil {
			return nil, err
		}
		if _, err := r.r.Values(); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// colInfo is what rows of one result description need: column names and
// a decoder per column.
type colInfo struct {
	names []string
	dec   []pgtype.DriverDecoder
	// asText[i] reports that column i's driver value is its text form
	// (a string, or an int64, which database/sql formats in decimal as
	// PostgreSQL does), so that scanning it into a string gives the same
	// as database/sql's conversion (see ScanColumn, Go 1.27).
	asText []bool
	// copiesText[i]: column i's driver value is its bytes as a string
	// (pgtype.Map.DriverCopiesText), which Next copies into r.short.
	copiesText []bool
}

// colCache keeps the colInfo of the result descriptions seen on a
// connection, so that a statement run again allocates no decoders. It is
// keyed by the description's first element: pgline keeps one description
// slice per cached statement, and replaces it (a new slice) when the
// statement's columns change.
type colCache struct {
	m map[*pgline.FieldDescription]*colInfo
}

// maxColCache bounds colCache; it is emptied when full.
const maxColCache = 1024

var noCols = &colInfo{names: []string{}}

func (cc *colCache) get(fields []pgline.FieldDescription, types *pgtype.Map) *colInfo {
	if len(fields) == 0 {
		return noCols
	}
	key := &fields[0]
	if ci := cc.m[key]; ci != nil && len(ci.dec) == len(fields) {
		return ci
	}
	ci := newColInfo(fields, types)
	if cc.m == nil || len(cc.m) >= maxColCache {
		cc.m = make(map[*pgline.FieldDescription]*colInfo)
	}
	cc.m[key] = ci
	return ci
}

func newColInfo(fields []pgline.FieldDescription, types *pgtype.Map) *colInfo {
	ci := &colInfo{names: make([]string, len(fields)), dec: make([]pgtype.DriverDecoder, len(fields)),
		asText: make([]bool, len(fields)), copiesText: make([]bool, len(fields))}
	for i, f := range fields {
		ci.names[i] = f.Name
		st := types.DriverScanType(f.DataTypeOID)
		ci.asText[i] = st == reflect.TypeFor[string]() || st == reflect.TypeFor[int64]()
		ci.copiesText[i] = types.DriverCopiesText(f.DataTypeOID)
		dec, err := types.DriverDecoder(f.DataTypeOID, f.Format)
		if err != nil {
			dec = func([]byte) (driver.Value, error) { return nil, err }
		}
		ci.dec[i] = dec
	}
	return ci
}
