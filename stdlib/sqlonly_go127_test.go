//go:build go1.27

package stdlib_test

import (
	"database/sql"
	"database/sql/driver"
	"io"
	"time"
)

// With Go 1.27, sqlOnlyRows scans like pgline's Rows do there
// (driver.RowsColumnScanner): each value goes straight into its
// destination, so the sql-only benchmarks measure database/sql's own cost
// on that path too.
var _ driver.RowsColumnScanner = (*sqlOnlyRows)(nil)

func (r *sqlOnlyRows) NextRow() error {
	if len(r.rows) == 0 {
		return io.EOF
	}
	r.cur, r.rows = r.rows[0], r.rows[1:]
	return nil
}

func (r *sqlOnlyRows) ScanColumn(scanCtx driver.ScanContext, index int, dest any) error {
	v := r.cur[index]
	switch d := dest.(type) {
	case *int32:
		*d = int32(v.(int64))
	case *string:
		*d = v.(string)
	case *float64:
		*d = v.(float64)
	case *time.Time:
		*d = v.(time.Time)
	case *bool:
		*d = v.(bool)
	default:
		return sql.ConvertAssign(scanCtx, dest, v)
	}
	return nil
}
