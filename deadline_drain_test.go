package pgline

// The drain of an abandoned request (its caller's ctx ended): it cancels
// only after cancel_grace, only once its statement was sent and while it
// still runs; a cancel that lands on the statement behind is marked
// ErrCanceledByOther, and a statement that may have committed work is never
// sent again. The tests driven through Session calls alone live beside the
// engine (internal/session/drain_test.go); these run Batches and Rows.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// effectsTable makes a fresh table name (id serial, k text) for the tests
// that count committed effects.
func effectsTable(t *testing.T, c *Conn, name string) {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" (id serial, k text)"); err != nil {
		t.Fatal(err)
	}
}

// drainReplyMBs are the sizes of A's reply in
// TestDrainNoCancelAfterServerEnded, in MB.
var drainReplyMBs = []int{1, 2, 4}

// TestDrainNoCancelAfterServerEnded: A's reply (several MB) has ended on
// the server (its bytes sit in socket buffers) and B runs; A's caller
// gives up after cancel_grace. The drain must not cancel while A's reply
// is still arriving: the cancel would hit B.
func TestDrainNoCancelAfterServerEnded(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, mb := range drainReplyMBs {
		for _, kind := range []string{"Batch", "QueryRow", "RowsMid"} {
			t.Run(fmt.Sprintf("%dMB-%s", mb, kind), func(t *testing.T) {
				c := connect(t, srv.DSN())
				admin := connect(t, srv.DSN())
				ctx := testCtx(t)
				n := mb * 1000
				asql := fmt.Sprintf("SELECT repeat('x', 1000) FROM generate_series(1, %d)", n)
				bsql := "SELECT g, pg_sleep(0.3) FROM generate_series(1, 3) g"
				c.Prepare(ctx, asql)
				c.Prepare(ctx, bsql)
				actx, acancel := context.WithCancel(context.Background())
				rows, err := c.Query(actx, asql)
				if err != nil {
					t.Fatal(err)
				}
				rows.Next()
				type res struct {
					err error
					got []int
				}
				bDone := make(chan res, 1)
				go func() {
					var r res
					switch kind {
					case "Batch":
						b := &Batch{}
						b.Queue(bsql)
						br := c.SendBatch(ctx, b)
						rr, err := br.Query()
						if err == nil {
							for rr.Next() {
								var g int
								rr.Scan(&g, nil)
								r.got = append(r.got, g)
							}
							err = rr.Err()
						}
						if e := br.Close(); err == nil {
							err = e
						}
						r.err = err
					case "QueryRow":
						var g int
						r.err = c.QueryRow(ctx, bsql).Scan(&g, nil)
						r.got = []int{g}
					case "RowsMid":
						rr, err := c.Query(ctx, bsql)
						if err == nil {
							for rr.Next() {
								var g int
								rr.Scan(&g, nil)
								r.got = append(r.got, g)
							}
							err = rr.Err()
						}
						r.err = err
					}
					bDone <- r
				}()
				// wait until B runs on the server: A has ended there
				ok := waitActivity(t, admin, 5*time.Second, runningLike, int(c.PID()), "generate_series(1, 3)") != 0
				if !ok {
					t.Logf("B never ran while A held the head (A's output did not fit the socket buffers)")
				}
				time.Sleep(150 * time.Millisecond) // > cancel_grace
				acancel()
				rows.Close()
				r := <-bDone
				t.Logf("A: %v; B: got=%v err=%v ErrCanceledByOther=%v", rows.Err(), r.got, r.err, errors.Is(r.err, ErrCanceledByOther))
				if r.err != nil {
					t.Errorf("B (ctx alive) failed because of A's cancel: %v", r.err)
				}
			})
		}
	}
}

// TestDrainOwnStatementTimeoutNotOthers: B's own statement_timeout (57014)
// while a driver cancel for A was under way is B's own error: not reported
// as ErrCanceledByOther, and B is not sent again.
func TestDrainOwnStatementTimeoutNotOthers(t *testing.T) {
	for _, kind := range []string{"Exec-simple", "Exec-args", "QueryRow", "Batch"} {
		t.Run(kind, func(t *testing.T) {
			c := connect(t, srv.DSN()+" cancel_grace=20ms") // A cancelled soon after its caller left
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, "SET statement_timeout = '400ms'"); err != nil {
				t.Fatal(err)
			}
			c.Prepare(ctx, "SELECT pg_sleep($1::float8)")
			aDone := startAbandonedBehind(t, c, 1) // given up once B is queued
			aEnded := make(chan time.Time, 1)
			go func() { <-aDone; aEnded <- time.Now() }()
			var err error
			switch kind {
			case "Exec-simple":
				_, err = c.Exec(ctx, "SELECT pg_sleep(1)")
			case "Exec-args":
				_, err = c.Exec(ctx, "SELECT pg_sleep($1::float8)", 1.0)
			case "QueryRow":
				err = c.QueryRow(ctx, "SELECT pg_sleep($1::float8)", 1.0).Scan(nil)
			case "Batch":
				b := &Batch{}
				b.Queue("SELECT pg_sleep($1::float8)", 1.0)
				br := c.SendBatch(ctx, b)
				_, err = br.Exec()
				br.Close()
			}
			bEnded := time.Now()
			// B runs once A's drain has ended (after at most cancel_grace, 20 ms):
			// B sent again after its own timeout would end 800 ms after A's
			// caller left at the earliest (a stamp taken late only shortens
			// d).
			d := bEnded.Sub(<-aEnded)
			t.Logf("%s: err=%v ErrCanceledByOther=%v, %v after A's caller left", kind, err, errors.Is(err, ErrCanceledByOther), d)
			if errors.Is(err, ErrCanceledByOther) {
				t.Errorf("own statement_timeout reported as ErrCanceledByOther")
			}
			if d > 750*time.Millisecond {
				t.Errorf("statement that times out after 400ms ended %v after A's caller left: it was run again", d)
			}
		})
	}
}
