package stdlib_test

// Through database/sql: a connection cut at a chosen
// server message of a marked statement's reply never reads as a normal
// end (sql.ErrNoRows, fewer rows, an empty result).

import (
	"database/sql"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/cutproxy"
)

// midReplyCut is a proxy to the test server that cuts, once the client
// has sent the bytes "CUTHERE", the k-th server message of type typ: not
// sent at all (inside=false) or only its first half (inside).
type midReplyCut struct{ *cutproxy.Proxy }

func startCut(t *testing.T, typ byte, k int, inside bool) *midReplyCut {
	t.Helper()
	px, err := cutproxy.AtMessage(srv.Addr(), []byte("CUTHERE"), typ, k, inside)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	return &midReplyCut{px}
}

func (p *midReplyCut) db(t *testing.T) *sql.DB {
	host, port, _ := net.SplitHostPort(p.Addr())
	return openDB(t, 1, "host="+host, "port="+port, "sslmode=disable")
}

func wantCut(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || err == io.EOF || errors.Is(err, sql.ErrNoRows) {
		t.Errorf("%s: %v (%T); want an error saying the connection was closed", what, err, err)
		return
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "closed") && !strings.Contains(err.Error(), "bad connection") {
		t.Errorf("%s: %v: not the connection's end", what, err)
	}
}

// TestEOFMidReplyQueryRow: QueryRow cut before or inside its one
// row: Scan reports the cut, never sql.ErrNoRows.
func TestEOFMidReplyQueryRow(t *testing.T) {
	for _, inside := range []bool{false, true} {
		for _, q := range []string{"SELECT 42 /*CUTHERE*/", "SELECT $1::int+0 /*CUTHERE*/"} {
			p := startCut(t, 'D', 1, inside)
			db := p.db(t)
			var args []any
			if strings.Contains(q, "$1") {
				args = []any{42}
			}
			var v int
			err := db.QueryRowContext(testCtx(t), q, args...).Scan(&v)
			wantCut(t, q, err)
		}
	}
}

// TestEOFMidReplyRows: cut before CommandComplete, before a later
// row, inside a big row (read column by column): rows.Err() is set.
func TestEOFMidReplyRows(t *testing.T) {
	for _, tc := range []struct {
		typ byte
		k   int
		q   string
	}{
		{'C', 1, "SELECT g FROM generate_series(1, 10) g /*CUTHERE*/"},
		{'D', 5, "SELECT g FROM generate_series(1, 10) g /*CUTHERE*/"},
		{'D', 2, "SELECT g, repeat('y', 4<<20) FROM generate_series(1, 3) g /*CUTHERE*/"},
	} {
		for _, inside := range []bool{false, true} {
			p := startCut(t, tc.typ, tc.k, inside)
			db := p.db(t)
			rows, err := db.QueryContext(testCtx(t), tc.q)
			if err != nil {
				wantCut(t, "Query", err)
				continue
			}
			n := 0
			for rows.Next() {
				n++
				var g int
				var s string
				if strings.Contains(tc.q, "repeat") {
					if err := rows.Scan(&g, &s); err != nil {
						t.Logf("scan: %v", err)
					}
				}
			}
			err = rows.Err()
			t.Logf("%c#%d inside=%v: %d rows, %v", tc.typ, tc.k, inside, n, err)
			wantCut(t, "rows", err)
		}
	}
}

// TestEOFMidReplyExec: an Exec cut before or inside its
// CommandComplete reports an error, not a result.
func TestEOFMidReplyExec(t *testing.T) {
	for _, inside := range []bool{false, true} {
		p := startCut(t, 'C', 1, inside)
		db := p.db(t)
		_, err := db.ExecContext(testCtx(t), "SELECT 1 /*CUTHERE*/")
		wantCut(t, "Exec", err)
	}
}
