package pgline

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/cutproxy"
)

// TestSocketEndMidRowsIsAnError: a connection whose socket ends in the
// middle of a reply's rows (the server crashed, a proxy cut it) gives
// the rows an error that says so, never a bare io.EOF, which database/sql
// and many loops take for the normal end of the rows: the caller would
// see fewer rows and no error.
func TestSocketEndMidRowsIsAnError(t *testing.T) {
	for _, whole := range []bool{true, false} {
		t.Run(map[bool]string{true: "between messages", false: "inside a message"}[whole], func(t *testing.T) {
			px, err := cutproxy.Start(srv.Addr(), 64<<10, whole)
			if err != nil {
				t.Fatal(err)
			}
			defer px.Close()
			host, port, _ := net.SplitHostPort(px.Addr())
			c, err := Connect(testCtx(t), srv.DSN("host="+host, "port="+port, "sslmode=disable"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rows, err := c.Query(testCtx(t), "SELECT g, repeat('x', 100) FROM generate_series(1, 100000) g")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			err = rows.Err()
			if err == nil || err == io.EOF || !strings.Contains(err.Error(), "closed") {
				t.Fatalf("after %d rows: %v (%T); want an error saying the connection was closed", n, err, err)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%v does not wrap io.ErrUnexpectedEOF", err)
			}
		})
	}
}
