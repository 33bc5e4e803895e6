package stdlib_test

import (
	"net"
	"testing"

	"github.com/pgline/pgline/internal/cutproxy"
)

// TestSocketEndMidRowsNotSilent: the connection's socket ends between two
// rows of a result. database/sql takes a driver's io.EOF from Next for
// the end of the rows: the loop must end with rows.Err() set, never with
// fewer rows and no error (it read 4,333 of 100,000 rows and no error).
func TestSocketEndMidRowsNotSilent(t *testing.T) {
	px, err := cutproxy.Start(srv.Addr(), 64<<10, true)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	host, port, _ := net.SplitHostPort(px.Addr())
	db := openDB(t, 1, "host="+host, "port="+port, "sslmode=disable")
	rows, err := db.QueryContext(testCtx(t), "SELECT g FROM generate_series(1, 100000) g")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err == nil {
		t.Fatalf("%d of 100000 rows and no error", n)
	}
}
