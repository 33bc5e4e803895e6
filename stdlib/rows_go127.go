//go:build go1.27

package stdlib

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"

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
// (driver.RowsColumnScanner). Destinations pgtype scans into directly go
// through the column's cached scan plan; *any, *sql.RawBytes and types
// pgtype does not know get database/sql's conversion of the column's
// driver value, as without this interface.
func (r *Rows) ScanColumn(scanCtx driver.ScanContext, index int, dest any) error {
	if r.r == nil {
		return errors.New("pgline/stdlib: ScanColumn on closed rows")
	}
	switch dest.(type) {
	case *any, *sql.RawBytes:
	default:
		err := r.r.ScanColumn(index, dest)
		if !errors.Is(err, pgtype.ErrUnsupportedDest) {
			return err
		}
	}
	raw := r.r.RawValues()
	if index < 0 || index >= len(raw) || index >= len(r.cols.dec) {
		return errors.New("pgline/stdlib: ScanColumn: column index out of range")
	}
	v, err := r.cols.dec[index](raw[index])
	if err != nil {
		return err
	}
	return sql.ConvertAssign(scanCtx, dest, v)
}
