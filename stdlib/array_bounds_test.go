package stdlib_test

import "testing"

// Arrays come out of database/sql as "the PostgreSQL text form" (doc.go),
// but a non-default lower bound is dropped: element [2] becomes [1].
func TestArrayLowerBoundKept(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	for _, e := range []string{"'[2:3]={1,2}'::int4[]", "'[0:1][1:2]={{1,2},{3,4}}'::int4[]", "'[0:0]={a}'::text[]"} {
		var got, want string
		if err := db.QueryRowContext(ctx, "SELECT "+e+", ("+e+")::text").Scan(&got, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: driver value %q, server text form %q", e, got, want)
		}
	}
	// And a user computing the element at an index from the string, as
	// array_lower would tell them:
	var lower int
	var s string
	db.QueryRowContext(ctx, "SELECT array_lower(a, 1), a FROM (SELECT '[5:6]={x,y}'::text[] a) q").Scan(&lower, &s)
	t.Logf("array_lower=%d value=%q", lower, s)
}
