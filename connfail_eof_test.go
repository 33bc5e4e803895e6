package pgline

// A connection cut in the middle of a reply (readErr: never a bare io.EOF):
// a proxy cuts the connection at a chosen server message of the reply to a
// marked statement, between messages or inside one; every reading API must
// fail with an error, never end normally with part of the result.

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/cutproxy"
)

// cutProxy is a proxy to the test server that cuts, once the client
// has sent the bytes "CUTHERE", the k-th server message of type typ: not
// sent at all (inside=false) or only its first half (inside).
type cutProxy struct{ *cutproxy.Proxy }

// startCutProxy starts a cutProxy, closed when the test ends.
func startCutProxy(t *testing.T, typ byte, k int, inside bool) *cutProxy {
	t.Helper()
	px, err := cutproxy.AtMessage(srv.Addr(), []byte("CUTHERE"), typ, k, inside)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	return &cutProxy{px}
}

// conn connects through the proxy, without TLS; the connection is closed
// when the test ends.
func (p *cutProxy) conn(t *testing.T, extra ...string) *Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(p.Addr())
	c, err := Connect(testCtx(t), srv.DSN(append([]string{"host=" + host, "port=" + port, "sslmode=disable"}, extra...)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return settled(c) // the cut is for the statement's reply, not the check's
}

// wantCutErr fails the test unless err reports the cut connection.
func wantCutErr(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || err == io.EOF || errors.Is(err, ErrNoRows) {
		t.Errorf("%s: %v (%T); want an error saying the connection was closed", what, err, err)
		return
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "closed") {
		t.Errorf("%s: %v: not the connection's end", what, err)
	}
	if session.SafeToRetry(err) {
		t.Errorf("%s: SafeToRetry after the statement was sent: %v", what, err)
	}
}

// cutModes runs f as two subtests: the cut between messages and inside one.
func cutModes(t *testing.T, f func(t *testing.T, inside bool)) {
	for _, inside := range []bool{false, true} {
		t.Run(map[bool]string{false: "between", true: "inside"}[inside], func(t *testing.T) { f(t, inside) })
	}
}

// TestConnCutRowScan: QueryRow cut before (or inside) its one
// DataRow: Scan reports the cut, not ErrNoRows.
func TestConnCutRowScan(t *testing.T) {
	cutModes(t, func(t *testing.T, inside bool) {
		for _, q := range []string{"SELECT 42 /*CUTHERE*/", "SELECT $1::int+0 /*CUTHERE*/"} {
			p := startCutProxy(t, 'D', 1, inside)
			c := p.conn(t)
			var args []any
			if strings.Contains(q, "$1") {
				args = []any{42}
			}
			var v int
			err := c.QueryRow(testCtx(t), q, args...).Scan(&v)
			wantCutErr(t, q, err)
		}
	})
}

// TestConnCutBeforeComplete: rows all sent, the connection cut
// before CommandComplete: the loop ends with an error.
func TestConnCutBeforeComplete(t *testing.T) {
	cutModes(t, func(t *testing.T, inside bool) {
		p := startCutProxy(t, 'C', 1, inside)
		c := p.conn(t)
		rows, err := c.Query(testCtx(t), "SELECT g FROM generate_series(1, 10) g /*CUTHERE*/")
		if err != nil {
			wantCutErr(t, "Query", err)
			return
		}
		n := 0
		for rows.Next() {
			n++
		}
		wantCutErr(t, "rows after "+string(rune('0'+n%10)), rows.Err())
	})
}

// TestConnCutCopyTo: COPY TO cut at its 500th CopyData (or before
// CopyDone): CopyTo reports the cut.
func TestConnCutCopyTo(t *testing.T) {
	for _, typ := range []byte{'d', 'c', 'C'} {
		cutModes(t, func(t *testing.T, inside bool) {
			k := 1
			if typ == 'd' {
				k = 500
			}
			p := startCutProxy(t, typ, k, inside)
			c := p.conn(t)
			var buf bytes.Buffer
			_, err := c.CopyTo(testCtx(t), &buf, "COPY (SELECT g FROM generate_series(1, 1000) g) TO STDOUT /*CUTHERE*/")
			wantCutErr(t, "CopyTo cut at "+string(typ), err)
		})
	}
}

// TestConnCutBigRowStream: a row larger than the read buffer,
// streamed column by column (StreamTo), cut inside it: Scan or Err
// reports the cut; the writer never gets a short value with no error.
func TestConnCutBigRowStream(t *testing.T) {
	for _, nextOnly := range []bool{false, true} {
		p := startCutProxy(t, 'D', 2, true)
		c := p.conn(t)
		rows, err := c.Query(testCtx(t), "SELECT g, repeat('y', 4<<20) FROM generate_series(1, 3) g /*CUTHERE*/")
		if err != nil {
			wantCutErr(t, "Query", err)
			continue
		}
		n := 0
		var scanErr error
		for rows.Next() {
			n++
			if nextOnly {
				continue
			}
			var g int
			var w bytes.Buffer
			if err := rows.Scan(&g, StreamTo(&w)); err != nil {
				scanErr = err
				break
			}
			if w.Len() != 4<<20 {
				t.Errorf("row %d: streamed %d bytes with no error", g, w.Len())
			}
		}
		rows.Close()
		err = rows.Err()
		if err == nil {
			err = scanErr
		}
		t.Logf("nextOnly=%v: %d rows, err %v, scanErr %v", nextOnly, n, rows.Err(), scanErr)
		wantCutErr(t, "big rows", err)
	}
}

// TestConnCutBatch: a batch of three queries cut before the
// second's row: its result, and the third's, fail; none reads as empty.
func TestConnCutBatch(t *testing.T) {
	cutModes(t, func(t *testing.T, inside bool) {
		p := startCutProxy(t, 'D', 2, inside)
		c := p.conn(t)
		b := &Batch{}
		b.Queue("SELECT 1 /*CUTHERE*/")
		b.Queue("SELECT 2")
		b.Queue("SELECT 3")
		br := c.SendBatch(testCtx(t), b)
		var v int
		if err := br.QueryRow().Scan(&v); err != nil || v != 1 {
			t.Errorf("first: %d %v", v, err)
		}
		err := br.QueryRow().Scan(&v)
		wantCutErr(t, "second", err)
		rows, err := br.Query()
		if err == nil {
			for rows.Next() {
				t.Errorf("third: a row")
			}
			err = rows.Err()
		}
		if err == nil {
			t.Errorf("third: no error")
		}
		if err := br.Close(); err == nil {
			t.Errorf("Close: no error")
		}
	})
}

// TestConnCutWaitForNotification: the connection is cut while a
// caller waits for a notification (cut at the NOTIFY's delivery, before
// or inside the NotificationResponse).
func TestConnCutWaitForNotification(t *testing.T) {
	cutModes(t, func(t *testing.T, inside bool) {
		p := startCutProxy(t, 'A', 1, inside)
		c := p.conn(t)
		if _, err := c.Exec(testCtx(t), "LISTEN fatal_chan /*CUTHERE*/"); err != nil {
			t.Fatal(err)
		}
		admin := connect(t, srv.DSN())
		go func() {
			time.Sleep(200 * time.Millisecond)
			admin.Exec(testCtx(t), "NOTIFY fatal_chan, 'x'")
		}()
		n, err := c.WaitForNotification(testCtx(t))
		if n != nil {
			t.Errorf("a notification: %+v", n)
		}
		wantCutErr(t, "WaitForNotification", err)
	})
}
