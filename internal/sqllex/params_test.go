package sqllex

import (
	"math"
	"testing"
)

func TestHighestParamAboveLimit(t *testing.T) {
	const limit = 65535
	cases := []struct {
		sql  string
		want int
	}{
		{"", 0},
		{"SELECT $1, $2", 0},
		{"SELECT $65535", 0},
		{"SELECT $65536", 65536},
		{"SELECT $1, $70000::int, $3", 70000},
		{"SELECT $70_000", 70000}, // PostgreSQL 16 reads underscores between digits
		{"SELECT $99999999999999999999", math.MaxInt32},
		{"SELECT '$70000'", 0},
		{"SELECT E'\\'$70000'", 0},
		{`SELECT "$70000"`, 0},
		{"SELECT 1 -- $70000", 0},
		{"SELECT /* $70000 */ 1", 0},
		{"SELECT $$ $70000 $$", 0},
		{"SELECT $q$ $70000 $q$", 0},
		{"SELECT a$70000 FROM t", 0}, // an identifier
		{"SELECT @a, $1", 0},
		{"SELECT '$70000', $70001", 70001},
	}
	for _, tc := range cases {
		if got := HighestParam(tc.sql, limit); got != tc.want {
			t.Errorf("HighestParam(%q, %d) = %d, want %d", tc.sql, limit, got, tc.want)
		}
	}
}

// TestHighestParamAllocs: a text with no number above the limit after a
// $ is read once, allocation-free (HighestParam runs for every statement
// described).
func TestHighestParamAllocs(t *testing.T) {
	sql := "SELECT a, b FROM t WHERE id = $1 AND name = $2 AND note <> '$3'"
	if n := testing.AllocsPerRun(100, func() { HighestParam(sql, 65535) }); n != 0 {
		t.Errorf("HighestParam allocates %v times", n)
	}
}

// FuzzHighestParam: HighestParam never panics, and agrees with Params:
// its answer is 0 or above the limit, and the highest $n Params yields.
func FuzzHighestParam(f *testing.F) {
	for _, s := range []string{"", "SELECT $70000", "'$70000'", "$$ $70000 $$ $70001", "a$70000", "$7_0000", "$", "$9999999999999999999999"} {
		f.Add(s, 9)
	}
	f.Fuzz(func(t *testing.T, sql string, limit int) {
		got := HighestParam(sql, limit)
		want := 0
		for p := range Params(sql) {
			if p.Name == "" {
				want = max(want, paramNumber(sql[p.Start+1:p.End]))
			}
		}
		if want <= limit {
			want = 0
		}
		if got != want {
			t.Fatalf("HighestParam(%q, %d) = %d, want %d", sql, limit, got, want)
		}
	})
}
