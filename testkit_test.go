package pgline

// The shared test kit for counting and waiting: how many rows a table
// holds, and waiting until a condition holds (a session shows in
// pg_stat_activity, sessions are gone). Fake servers are in
// fakeserver_test.go and the TCP proxy in proxy_test.go.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rowReader is what the counters read through: a *Conn, *Pool or *Tx.
type rowReader interface {
	QueryRow(ctx context.Context, sql string, args ...any) *Row
}

// rowCount returns count(*) of from, read through q: a table name, or a
// name with a WHERE clause whose parameters are args ("t WHERE k = $1").
// It fails the test on an error. Read through connect(t, srv.DSN()) to
// count from outside the test's own session.
func rowCount(t *testing.T, q rowReader, from string, args ...any) int64 {
	t.Helper()
	n, err := countRows(testCtx(t), q, from, args...)
	if err != nil {
		t.Fatalf("count %s: %v", from, err)
	}
	return n
}

// idleRowCount is rowCount through c, and fails the test unless c is
// idle afterwards (TxStatus 'I': no transaction open, nothing left of a
// COPY).
func idleRowCount(t *testing.T, c *Conn, from string, args ...any) int64 {
	t.Helper()
	n := rowCount(t, c, from, args...)
	if s := c.TxStatus(); s != 'I' {
		t.Fatalf("TxStatus %c after counting %s", s, from)
	}
	return n
}

// rowCountErr is rowCount for a goroutine other than the test's, or for a
// Conn that may be wedged: it returns the error instead of failing the
// test, and gives up after 5 s instead of hanging.
func rowCountErr(q rowReader, from string, args ...any) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return countRows(ctx, q, from, args...)
}

// countRows runs the count of rowCount and rowCountErr.
func countRows(ctx context.Context, q rowReader, from string, args ...any) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, "SELECT count(*) FROM "+from, args...).Scan(&n)
	return n, err
}

// waitFor polls cond every 2 ms until it returns true, for at most
// within, and reports whether it did. An error from cond ends the wait
// (false) and is logged.
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

// waitActivity waits, for at most within, until pg_stat_activity, read
// through mon, shows a session other than mon's own for which where holds
// (a condition on its columns, with parameters args), and returns that
// session's pid; it returns 0 if none showed. It does not fail the test,
// so that a goroutine may call it: the caller decides what 0 means.
func waitActivity(t testing.TB, mon *Conn, within time.Duration, where string, args ...any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within+5*time.Second)
	defer cancel()
	var pid int
	waitFor(t, within, func() (bool, error) {
		err := mon.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND ("+where+") LIMIT 1", args...).Scan(&pid)
		if errors.Is(err, ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	})
	return pid
}

// runningLike is a waitActivity condition: the session whose pid is $1
// runs a statement whose text contains $2.
const runningLike = "pid = $1 AND state = 'active' AND query LIKE '%' || $2 || '%'"

// waitSessionsGone waits, for at most 30 s, until none of the sessions
// pids shows in pg_stat_activity (read through mon), and fails the test
// otherwise.
func waitSessionsGone(t *testing.T, mon *Conn, pids []int) {
	t.Helper()
	list := make([]string, len(pids))
	for i, pid := range pids {
		list[i] = strconv.Itoa(pid)
	}
	from := "pg_stat_activity WHERE pid IN (" + strings.Join(list, ",") + ")"
	if !waitFor(t, 30*time.Second, func() (bool, error) {
		n, err := rowCountErr(mon, from)
		return n == 0, err
	}) {
		t.Fatalf("sessions %v still there", pids)
	}
}
