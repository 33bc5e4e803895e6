package session

// The statement cache on a live session, and what is not a pooler's sign
// (see txpooler.go). Moved from the root's txpooler_test.go: a Conn's
// QueryRow is the kit's query here, its Exec without arguments
// SimpleQueryUntraced.

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
)

// int4Of reads the one value of rows, an int4 in binary (as the session
// asks for it).
func int4Of(rows [][][]byte) (int32, error) {
	if len(rows) != 1 || len(rows[0]) != 1 || len(rows[0][0]) != 4 {
		return 0, fmt.Errorf("not one int4 in binary: %q", rows)
	}
	return int32(binary.BigEndian.Uint32(rows[0][0])), nil
}

// queryInt4 runs sql with args on s and returns its one int4 value.
func queryInt4(ctx context.Context, s *Session, sql string, args ...any) (int32, error) {
	rows, _, err := query(ctx, s, sql, args...)
	if err != nil {
		return 0, err
	}
	return int4Of(rows)
}

// preparedNames returns the names of the statements prepared in s's
// session.
func preparedNames(t *testing.T, ctx context.Context, s *Session) []string {
	t.Helper()
	rows, err := queryText(ctx, s, "SELECT name FROM pg_prepared_statements WHERE name LIKE 'pgline%' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r[0])
	}
	return names
}

// TestStatementNamesIdentifyText checks the names the server sees: each
// identifies its text, and a statement prepared again after eviction
// gets the same name.
func TestStatementNamesIdentifyText(t *testing.T) {
	ctx := testCtx(t)
	// statement_cache_capacity=3, the mode auto (the root's default)
	s := dialSessionOpts(t, func(o *SessionOpts) { o.CacheMode, o.CacheCapacity = CacheAuto, 3 })
	if m := s.StatementCacheMode(); m != CachePrepare {
		t.Fatalf("direct connection runs in %q mode, want prepare", m)
	}
	for _, sql := range []string{"SELECT $1::int + 1", "SELECT $1::int + 2"} {
		if _, err := queryInt4(ctx, s, sql, 1); err != nil {
			t.Fatal(err)
		}
	}
	names := preparedNames(t, ctx, s)
	want := map[string]bool{
		stmtName(s.Stmts.Prefix, "SELECT $1::int + 1", nil): true,
		stmtName(s.Stmts.Prefix, "SELECT $1::int + 2", nil): true,
	}
	for _, n := range names {
		delete(want, n)
	}
	if len(want) > 0 {
		t.Errorf("prepared statements %v lack %v", names, want)
	}
	// The cache holds 3 (the two and the names query): the next one evicts the first, which
	// comes back under its name.
	for _, sql := range []string{"SELECT $1::int + 3", "SELECT $1::int + 1"} {
		if _, err := queryInt4(ctx, s, sql, 1); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := queryInt4(ctx, s, "SELECT $1::int + 1", 41); err != nil || v != 42 {
		t.Fatalf("after eviction: %d %v", v, err)
	}
}

// TestDeallocateIsNoPoolerSign: statements missing after the application's
// own DEALLOCATE ALL are prepared again, and the session stays in
// prepare mode.
func TestDeallocateIsNoPoolerSign(t *testing.T) {
	ctx := testCtx(t)
	s := dialSessionOpts(t, func(o *SessionOpts) { o.CacheMode = CacheAuto }) // the root's default
	if _, err := queryInt4(ctx, s, "SELECT $1::int * 2", 2); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"DEALLOCATE ALL", "DISCARD ALL"} {
		if _, err := s.SimpleQueryUntraced(ctx, nil, sql, nil, nil); err != nil {
			t.Fatal(err)
		}
		if v, err := queryInt4(ctx, s, "SELECT $1::int * 2", 21); err != nil || v != 42 {
			t.Fatalf("after %s: %d %v", sql, v, err)
		}
		if m := s.StatementCacheMode(); m != CachePrepare {
			t.Fatalf("after %s the session switched to %q", sql, m)
		}
	}
}
