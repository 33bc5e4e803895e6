package stdlib_test

import (
	"strconv"
	"strings"
	"testing"
)

// TestShortTextValues: short text values, which Next copies into blocks
// shared by the rows, are each their own value as database/sql sees it (string),
// kept across rows, beside empty strings, NULLs, long values and other
// types.
func TestShortTextValues(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	rows, err := db.QueryContext(ctx, `SELECT 'a' || g, '', NULL::text, repeat('x', 120 + g), g, g::varchar, 'z'::name
		FROM generate_series(1, 20) g`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var kept [][]any
	for rows.Next() {
		vals := make([]any, 7)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 20 {
		t.Fatalf("%d rows", len(kept))
	}
	for i, v := range kept {
		g := i + 1
		want := []any{"a" + strconv.Itoa(g), "", nil, strings.Repeat("x", 120+g), int64(g), strconv.Itoa(g), "z"}
		for j := range want {
			if v[j] != want[j] {
				t.Fatalf("row %d column %d: %#v, want %#v", g, j, v[j], want[j])
			}
		}
	}
}
