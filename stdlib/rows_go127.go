//go:build go1.27

package stdlib

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// With Go 1.27, database/sql hands the caller's destinations to the driver
// (driver.RowsColumnScanner): each column is decoded by pgline's scan plan
// straight into its destination, without a driver.Value in between.
var _ driver.RowsColumnScanner = (*Rows)(nil)

// NextRow advances to the next row (driver.RowsColumnScanner); its
// columns are decoded by ScanColumn. It returns io.EOF after the last row.
func (r *Rows) NextRow() error {
	if r.r == nil {
		return io.EOF
	}
	if !r.r.Next() {
		if err := r.finish(); err != nil {
			return err
		}
		return io.EOF
	}
	return nil
}

// ScanColumn decodes column index of the current row into dest
// (driver.RowsColumnScanner), with the result database/sql's conversion of
// the column's driver value gives (as without this interface). Most
// destinations go through the column's cached scan plan. *any,
// *sql.RawBytes, types pgtype does not scan into, and text destinations
// of columns whose driver value is not their text (a bool, a float, a
// time: database/sql writes "true" and RFC 3339 where PostgreSQL writes
// "t" and its own format) get database/sql's conversion of the driver
// value.
func (r *Rows) ScanColumn(scanCtx driver.ScanContext, index int, dest any) error {
	if r.r == nil {
		return errors.New("pgline/stdlib: ScanColumn on closed rows")
	}
	if index < 0 || index >= len(r.cols.dec) {
		return errors.New("pgline/stdlib: ScanColumn: column index out of range")
	}
	switch dest.(type) {
	case *any, *sql.RawBytes:
	default:
		if r.cols.asText[index] || !textDest(dest) {
			err := r.r.ScanColumn(index, dest)
			if !errors.Is(err, pgtype.ErrUnsupportedDest) {
				return err
			}
		}
	}
	raw, err := r.rawValues()
	if err != nil {
		return err
	}
	if index >= len(raw) {
		return errors.New("pgline/stdlib: ScanColumn: column index out of range")
	}
	v, err := r.cols.dec[index](raw[index])
	if err != nil {
		return err
	}
	return sql.ConvertAssign(scanCtx, dest, v)
}

// textDest reports whether dest receives a value as text: a string or
// bytes (through pointers, or a named type), or a sql.Scanner other than
// the sql.Null types of numbers, bools and times.
func textDest(dest any) bool {
	switch dest.(type) {
	case *string, *[]byte, *sql.NullString, *sql.Null[string], *sql.Null[[]byte]:
		return true
	case *int, *int8, *int16, *int32, *int64, *uint, *uint8, *uint16, *uint32, *uint64,
		*float32, *float64, *bool, *time.Time,
		*sql.NullInt64, *sql.NullInt32, *sql.NullInt16, *sql.NullByte, *sql.NullFloat64, *sql.NullBool, *sql.NullTime:
		return false
	case sql.Scanner:
		return true
	}
	t := reflect.TypeOf(dest)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && (t.Kind() == reflect.String || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8)
}
