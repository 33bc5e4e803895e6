package stdlib_test

// Helpers shared by the stdlib tests: counting rows, fresh tables, and
// the SQLSTATE of an error.

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/pgline/pgline"
)

// rowCount returns count(*) of from, read through q (a *sql.DB, *sql.Conn
// or *sql.Tx): a table name, or a name with a WHERE clause whose
// parameters are args. It fails the test on an error.
func rowCount(t *testing.T, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, from string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := q.QueryRowContext(testCtx(t), "SELECT count(*) FROM "+from, args...).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", from, err)
	}
	return n
}

// testTable creates, through db, a fresh table named after the test with
// the columns ddl ("(id int)"), dropped when the test ends, and returns
// its name.
func testTable(t *testing.T, db *sql.DB, ddl string) string {
	t.Helper()
	name := "sqlt_" + strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
	if len(name) > 55 {
		name = name[:55]
	}
	if _, err := db.Exec("DROP TABLE IF EXISTS " + name + "; CREATE TABLE " + name + " " + ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d, err := sql.Open("pgline", srv.DSN())
		if err == nil {
			d.Exec("DROP TABLE IF EXISTS " + name)
			d.Close()
		}
	})
	return name
}

// sqlState returns the SQLSTATE of the *pgline.PgError in err's chain, or "".
func sqlState(err error) string {
	var pgErr *pgline.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
