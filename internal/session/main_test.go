package session

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtest"
	"github.com/pgline/pgline/pgtype"
)

// srv is the cluster the engine's connection-level tests dial.
var srv *pgtest.Server

func TestMain(m *testing.M) {
	setTestAPIErrors()
	os.Exit(pgtest.Run(m, pgtest.Options{}, &srv))
}

// testServerError is the kit's error for an ErrorResponse (the API's is
// *PgError).
type testServerError struct{ f wire.ErrorFields }

func (e *testServerError) Error() string {
	return e.f.Severity + ": " + e.f.Message + " (" + e.f.Code + ")"
}
func (e *testServerError) SQLState() string { return e.f.Code }

// testProtocolError is the kit's protocol error (the API's is
// *ProtocolError).
type testProtocolError struct{ msg string }

func (e *testProtocolError) Error() string { return "protocol error: " + e.msg }

// setTestAPIErrors gives the engine the errors the API gives it
// (errors.go's init), made by the kit.
func setTestAPIErrors() {
	APIErrors.Closed = errors.New("test: connection closed")
	APIErrors.CanceledByOther = errors.New("test: canceled by another's CancelRequest")
	APIErrors.TxClosed = errors.New("test: transaction closed")
	APIErrors.IdleEnded = errors.New("test: the session ended while idle")
	APIErrors.Protocol = func(msg string) error { return &testProtocolError{msg} }
	APIErrors.IsProtocol = func(err error) bool {
		var pe *testProtocolError
		return errors.As(err, &pe)
	}
	APIErrors.Server = func(f wire.ErrorFields) error { return &testServerError{f} }
	APIErrors.ServerCode = func(err error) (code, message string, ok bool) {
		var se *testServerError
		if !errors.As(err, &se) {
			return "", "", false
		}
		return se.f.Code, se.f.Message, true
	}
}

// testCtx is a ctx that ends with the test, or after 30 s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialSession opens a session to srv as the root's connect does, without
// TLS: Init, StartReading, Startup, Started. It is closed when the test
// ends.
func dialSession(t *testing.T) *Session {
	t.Helper()
	return dialSessionOpts(t, nil)
}

// dialSessionOpts is dialSession with the options changed by set, when
// not nil (OnNotice, ShareSyncs false for pipeline_sync=each, CacheMode,
// CancelGrace...).
func dialSessionOpts(t *testing.T, set func(*SessionOpts)) *Session {
	t.Helper()
	return dialSessionAt(t, "tcp", srv.Addr(), set)
}

// dialSessionUnix is dialSessionOpts over srv's Unix socket (over TCP for
// a server without one, as the root's SocketDSN).
func dialSessionUnix(t *testing.T, set func(*SessionOpts)) *Session {
	t.Helper()
	if srv.External || srv.SocketDir == "" {
		return dialSessionOpts(t, set)
	}
	return dialSessionAt(t, "unix", filepath.Join(srv.SocketDir, ".s.PGSQL."+strconv.Itoa(srv.Port)), set)
}

// dialSessionAt is dialSessionOpts to addr on network.
func dialSessionAt(t *testing.T, network, addr string, set func(*SessionOpts)) *Session {
	t.Helper()
	ctx := testCtx(t)
	var d net.Dialer
	netConn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		t.Fatal(err)
	}
	opts := SessionOpts{
		DialCancel: func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, network, addr) },
		Types:      pgtype.NewMap(),
		CacheMode:  CachePrepare,
		ShareSyncs: true,
	}
	if set != nil {
		set(&opts)
	}
	s := new(Session)
	s.Init(netConn, opts)
	s.StartReading(0, 0)
	netConn.SetDeadline(time.Now().Add(10 * time.Second))
	err = s.Startup(StartupConfig{
		Params: []string{"user", srv.User, "database", srv.Database, "client_encoding", "UTF8"},
		User:   srv.User,
	})
	if err != nil {
		netConn.Close()
		t.Fatalf("startup: %v", err)
	}
	s.Started(netConn)
	t.Cleanup(func() { s.Close() })
	return s
}

// query runs sql with args on s as the API's Query does (Session.Run, its
// retry budget its own) and reads the reply to its end. It returns each
// row's values, copied (nil for NULL), in the formats the session chose
// (binary for the types pgtype decodes in binary, text for the others:
// cast in the SQL to get text), the command tag and the statement's
// error.
func query(ctx context.Context, s *Session, sql string, args ...any) (rows [][][]byte, tag string, err error) {
	var budget Resends
	rows, tag, _, err = runQuery(ctx, s, &budget, sql, args)
	return rows, tag, err
}

// queryResending is query as the API's Row.Scan and Exec with arguments
// run a statement: sent again, on the budget of its runs, when a
// CancelRequest meant for another statement hit it (Resendable).
func queryResending(ctx context.Context, s *Session, sql string, args ...any) (rows [][][]byte, tag string, err error) {
	var budget Resends
	for {
		var status byte
		rows, tag, status, err = runQuery(ctx, s, &budget, sql, args)
		if !Resendable(nil, sql, err, status) || !budget.Again(ctx, ResendInterfered) {
			return rows, tag, err
		}
	}
}

// queryResendingText is queryResending with rows as queryText's.
func queryResendingText(ctx context.Context, s *Session, sql string, args ...any) ([][]string, error) {
	rows, _, err := queryResending(ctx, s, sql, args...)
	return textRows(rows), err
}

// runQuery is query on budget; status is that of the ReadyForQuery that
// ended the reply.
func runQuery(ctx context.Context, s *Session, budget *Resends, sql string, args []any) (rows [][][]byte, tag string, status byte, err error) {
	var res Result
	if err := s.Run(ctx, nil, &res, budget, sql, args); err != nil {
		return nil, "", 0, err
	}
	for !res.Done {
		if res.Pending {
			res.Pending = false
		} else if !res.ReadRow(s) {
			break
		}
		if res.Big {
			if err := res.Materialize(s); err != nil {
				break
			}
		}
		if err := res.Row.Check(); err != nil {
			res.SetErr(err)
			break
		}
		var row [][]byte
		for _, v := range res.Row.Values(nil) {
			if v != nil {
				v = append([]byte{}, v...)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	for !res.Done {
		res.ReadRow(s)
	}
	res.End(s)
	return rows, res.Tag, res.TxStatus, res.Err
}

// queryText runs sql (its columns cast to text) and returns its rows as
// strings ("NULL" for NULL).
func queryText(ctx context.Context, s *Session, sql string, args ...any) ([][]string, error) {
	rows, _, err := query(ctx, s, sql, args...)
	return textRows(rows), err
}

// textRows is rows as strings ("NULL" for NULL).
func textRows(rows [][][]byte) [][]string {
	var out [][]string
	for _, r := range rows {
		var row []string
		for _, v := range r {
			if v == nil {
				row = append(row, "NULL")
			} else {
				row = append(row, string(v))
			}
		}
		out = append(out, row)
	}
	return out
}

// storm skips t unless PGLINE_STORMS is set: the root's gate for tests
// that hammer a connection for seconds (see the root's main_test.go),
// which .ci/run sets.
func storm(t *testing.T) {
	t.Helper()
	if os.Getenv("PGLINE_STORMS") == "" {
		t.Skip("a storm: set PGLINE_STORMS=1 to run it (.ci/run does)")
	}
}

// waitFor polls cond every 2 ms until it returns true, for at most
// within, and reports whether it did. An error from cond ends the wait
// (false) and is logged. (The root kit's waitFor.)
func waitFor(t testing.TB, within time.Duration, cond func() (bool, error)) bool {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(2 * time.Millisecond) {
		ok, err := cond()
		if err != nil {
			t.Logf("waiting: %v", err)
			return false
		}
		if ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// waitActivity waits, for at most within, until pg_stat_activity (read
// through mon, another session) shows a session other than mon's where
// the condition where holds (args are its parameters), and returns its
// pid, or 0. (The root kit's waitActivity.)
func waitActivity(t testing.TB, mon *Session, within time.Duration, where string, args ...any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within+5*time.Second)
	defer cancel()
	var pid int
	waitFor(t, within, func() (bool, error) {
		rows, err := queryText(ctx, mon, "SELECT pid::text FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND ("+where+") LIMIT 1", args...)
		if err != nil || len(rows) == 0 {
			return false, err
		}
		pid, err = strconv.Atoi(rows[0][0])
		return err == nil, err
	})
	return pid
}

// runningLike is a waitActivity condition: the session whose pid is $1
// runs a statement whose text contains $2.
const runningLike = "pid = $1 AND state = 'active' AND query LIKE '%' || $2 || '%'"

// countRows returns the number of rows of from (a table, or a table and
// a WHERE clause), read through s as the root's rowCount does.
func countRows(t *testing.T, s *Session, from string) int64 {
	t.Helper()
	rows, err := queryText(testCtx(t), s, "SELECT count(*)::text FROM "+from)
	if err != nil {
		t.Fatalf("count %s: %v", from, err)
	}
	n, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		t.Fatalf("count %s: %v", from, err)
	}
	return n
}
