package session

import (
	"fmt"
	"regexp"
	"testing"
)

func TestStmtName(t *testing.T) {
	p1, p2 := stmtPrefix(), stmtPrefix()
	if p1 == p2 {
		t.Fatalf("two connections got the same prefix %q", p1)
	}
	shape := regexp.MustCompile(`^pgline_[a-z2-7]{7}[a-z2-7]{13}$`)
	names := map[string]string{}
	for _, c := range []struct {
		sql   string
		types []uint32
	}{
		{"SELECT 1", nil},
		{"SELECT 2", nil},
		{"SELECT 1 ", nil},
		{"SELECT $1", nil},
		{"SELECT $1", []uint32{23}},
		{"SELECT $1", []uint32{20}},
		{"SELECT $1, $2", []uint32{23, 23}},
	} {
		n := stmtName(p1, c.sql, c.types)
		if !shape.MatchString(n) || len(n) > 63 {
			t.Errorf("stmtName(%q, %v) = %q: not pgline_<tag>_<hash> within 63 bytes", c.sql, c.types, n)
		}
		key := fmt.Sprintf("%q %v", c.sql, c.types)
		for k, other := range names {
			if other == n {
				t.Errorf("%s and %s share the name %s", k, key, n)
			}
		}
		names[key] = n
		if again := stmtName(p1, c.sql, c.types); again != n {
			t.Errorf("stmtName is not stable: %q then %q", n, again)
		}
		if stmtName(p2, c.sql, c.types) == n {
			t.Errorf("two connections name %s alike", key)
		}
	}
}
