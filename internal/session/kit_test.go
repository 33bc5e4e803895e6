package session

import (
	"errors"
	"slices"
	"testing"
)

// TestKitQuery: the engine's test kit runs statements as the API does:
// arguments, rows, the command tag, and the server's error.
func TestKitQuery(t *testing.T) {
	ctx := testCtx(t)
	s := dialSession(t)
	rows, err := queryText(ctx, s, "SELECT g::text, NULL::text FROM generate_series(1, $1::int4) g", int32(3))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1", "NULL"}, {"2", "NULL"}, {"3", "NULL"}}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	if _, tag, err := query(ctx, s, "CREATE TEMP TABLE kit (a int)"); err != nil || tag != "CREATE TABLE" {
		t.Fatalf("tag %q, err %v", tag, err)
	}
	_, _, err = query(ctx, s, "SELECT 1/0")
	var se interface{ SQLState() string }
	if !errors.As(err, &se) || se.SQLState() != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
	if _, err := s.SimpleQueryUntraced(ctx, nil, "SELECT 1", nil, nil); err != nil {
		t.Fatalf("the session after an error: %v", err)
	}
}
