package pgline

// SafeToRetry: an error says nothing was done only when nothing was (a
// write the socket refused), never after a commit.

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestCommitThenTerminatedNotResent: a CALL or DO that commits and then
// works on, ended by pg_terminate_backend during the work, gets the
// server's FATAL as the first message of its reply, yet its INSERT is
// committed: the FATAL is not SafeToRetry, and the Pool does not run the
// text again.
func TestCommitThenTerminatedNotResent(t *testing.T) {
	ctx := testCtx(t)
	direct := connect(t, srv.DSN())
	if _, err := direct.Exec(ctx, `DROP TABLE IF EXISTS committed_then_killed;
CREATE TABLE committed_then_killed (n int8 NOT NULL);
CREATE OR REPLACE PROCEDURE commit_then_sleep(v int8) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO committed_then_killed VALUES (v);
  COMMIT;
  PERFORM pg_sleep(5);
END $$`); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name string
		sql  string
	}{
		{"CALL", "CALL commit_then_sleep(%d)"},
		{"DO", "DO $$BEGIN INSERT INTO committed_then_killed VALUES (%d); COMMIT; PERFORM pg_sleep(5); END$$"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := fmt.Sprintf("commit_then_killed_%d", i)
			p, err := NewPool(ctx, srv.DSN("pool_max_conns=2", "application_name="+app))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			done := make(chan error, 1)
			go func() {
				_, err := p.Exec(ctx, fmt.Sprintf(tc.sql, i))
				done <- err
			}()
			// Once the row is committed, end the session running it.
			for deadline := time.Now().Add(10 * time.Second); ; {
				var k int
				if err := direct.QueryRow(ctx, "SELECT count(*)::int FROM committed_then_killed WHERE n = $1", i).Scan(&k); err != nil {
					t.Fatal(err)
				}
				if k > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the row was never committed")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if _, err := direct.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '"+app+"' AND state = 'active'"); err != nil {
				t.Fatal(err)
			}
			err = <-done
			var k int
			if err := direct.QueryRow(ctx, "SELECT count(*)::int FROM committed_then_killed WHERE n = $1", i).Scan(&k); err != nil {
				t.Fatal(err)
			}
			var pgErr *PgError
			if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "57P01" {
				t.Errorf("%s returned %v, want the server's FATAL 57P01", tc.name, err)
			}
			if session.SafeToRetry(err) {
				t.Errorf("%s committed, yet its error says SafeToRetry: %v", tc.name, err)
			}
			if k != 1 {
				t.Errorf("%s ran %d times", tc.name, k)
			}
		})
	}
}

// TestWriteRefusedIsNotSent: a server that reset the connection while it
// sat idle refuses the next write outright (ECONNRESET or EPIPE, no byte
// taken): the statement was never sent, and its error says so, so that a
// Pool sends it on another connection.
func TestWriteRefusedIsNotSent(t *testing.T) {
	dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
		if cancel, err := fakeAccept(c); cancel || err != nil {
			return
		}
		c.(*net.TCPConn).SetLinger(0) // Close sends RST
		c.Close()
	})
	for _, via := range []string{"QueryRow", "Exec"} {
		c := connect(t, dsn)
		time.Sleep(100 * time.Millisecond) // the RST arrives
		var err error
		if via == "QueryRow" {
			err = c.QueryRow(testCtx(t), "SELECT $1::int", 1).Scan(new(int))
		} else {
			_, err = c.Exec(testCtx(t), "SELECT 1")
		}
		if err == nil || !session.SafeToRetry(err) {
			t.Errorf("%s on a connection the server had reset: %v, want an error marked SafeToRetry", via, err)
		}
	}
}
