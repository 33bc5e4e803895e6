package pgline

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/pgline/pgline/pgtype"
)

// TestScanShortStrings: short text values, which Scan copies into blocks
// shared by the rows, are each the right value, outlive the read buffer
// (kept from every row of a reply larger than it) and the blocks' growth,
// and mix with long values, empty strings, NULLs and other destination
// types.
func TestScanShortStrings(t *testing.T) {
	c := connect(t, srv.DSN("read_buffer_size=4096"))
	ctx := testCtx(t)
	const cols = 12
	var sel []string
	for j := range cols {
		switch j {
		case 3:
			sel = append(sel, "repeat('x', 100 + g)") // long from row 29 on
		case 5:
			sel = append(sel, "''")
		case 7:
			sel = append(sel, "g::varchar")
		default:
			sel = append(sel, "'c"+strconv.Itoa(j)+"-' || g")
		}
	}
	rows, err := c.Query(ctx, "SELECT "+strings.Join(sel, ", ")+", g FROM generate_series(1, 500) g")
	if err != nil {
		t.Fatal(err)
	}
	var kept [][]string
	for rows.Next() {
		vals := make([]string, cols)
		dest := make([]any, cols+1)
		for j := range vals {
			dest[j] = &vals[j]
		}
		var g int32
		dest[cols] = &g
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 500 {
		t.Fatalf("%d rows", len(kept))
	}
	for i, vals := range kept {
		g := i + 1
		for j, v := range vals {
			var want string
			switch j {
			case 3:
				want = strings.Repeat("x", 100+g)
			case 5:
				want = ""
			case 7:
				want = strconv.Itoa(g)
			default:
				want = "c" + strconv.Itoa(j) + "-" + strconv.Itoa(g)
			}
			if v != want {
				t.Fatalf("row %d column %d: %q, want %q", g, j, v, want)
			}
		}
	}

	// NULL into *string is an error naming the column; the short values
	// before it in the row are still set.
	var a, b string
	err = c.QueryRow(ctx, "SELECT 'first', NULL::text").Scan(&a, &b)
	if !errors.Is(err, pgtype.ErrNull) || !strings.Contains(err.Error(), "column 1") {
		t.Fatalf("NULL into *string: %v", err)
	}
	if a != "first" {
		t.Fatalf("value before the NULL: %q", a)
	}
}
