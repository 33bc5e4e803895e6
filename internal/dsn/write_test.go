package dsn

import (
	"reflect"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":        "''",
		"abc":     "abc",
		"a=b,c":   "a=b,c",
		"a b":     "'a b'",
		"\tx":     "'\tx'",
		"it's":    `'it\'s'`,
		`back\`:   `'back\\'`,
		`'\`:      `'\'\\'`,
		"é":       "é",
		"x\ny\rz": "'x\ny\rz'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRender(t *testing.T) {
	ps := pairs("host", "/tmp/a b", "password", `it's\`, "dbname", "", "port", "5")
	got := Render(ps)
	if want := `host='/tmp/a b' password='it\'s\\' dbname='' port=5`; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if back, err := Split(got, nil); err != nil || !reflect.DeepEqual(back, ps) {
		t.Errorf("round trip = %q, %v", back, err)
	}
	if got := Render(nil); got != "" {
		t.Errorf("Render(nil) = %q", got)
	}
}

func TestValidKey(t *testing.T) {
	for key, want := range map[string]bool{
		"host": true, "a.b": true, "'x'": true, "": false, "a b": false, "a=b": false, "a\n": false,
	} {
		if got := ValidKey(key); got != want {
			t.Errorf("ValidKey(%q) = %v", key, got)
		}
	}
}

func TestLookup(t *testing.T) {
	ps := pairs("a", "1", "b", "", "a", "2")
	for _, tt := range []struct {
		key, want string
		ok        bool
	}{{"a", "2", true}, {"b", "", true}, {"c", "", false}} {
		if v, ok := Lookup(ps, tt.key); v != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v (the last one wins)", tt.key, v, ok, tt.want, tt.ok)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, tt := range []struct {
		base  string
		extra []string
		want  string
	}{
		{"a=1", []string{"", " \t", "b=2", "c=3"}, "a=1 b=2 c=3"},
		{"", []string{"b=2"}, "b=2"},
		{"  ", nil, ""},
		{`p=abc\ `, []string{"b=2"}, `p=abc\  b=2`}, // the escaped space stays
	} {
		if got := Join(tt.base, tt.extra...); got != tt.want {
			t.Errorf("Join(%q, %q) = %q, want %q", tt.base, tt.extra, got, tt.want)
		}
	}
}

// TestSet: a setting added to a DSN in either form reads back as set, after
// the DSN's own settings, whatever its value holds.
func TestSet(t *testing.T) {
	for _, tt := range []struct {
		dsn, want string
	}{
		{"", "k='x y'"},
		{" \t", "k='x y'"},
		{"host=h", "host=h k='x y'"},
		{"host=h ", "host=h  k='x y'"},
		{"a=", "a='' k='x y'"}, // "a= k=..." would give a the value "k=..."
		{"a=1 b=  ", "a=1 b='' k='x y'"},
		{`a=x\`, "a=x k='x y'"},  // the final backslash would escape the space
		{"a='x", "a='x k='x y'"}, // malformed, and stays so
		{"postgres://h/db", "postgres://h/db?k=x%20y"},
		{"postgres://h/db  ", "postgres://h/db?k=x%20y"},
		{"postgres://h/db?", "postgres://h/db?k=x%20y"},
		{"postgres://h/db?a=1", "postgres://h/db?a=1&k=x%20y"},
		{"postgres://h/db?a=1&", "postgres://h/db?a=1&k=x%20y"},
		{"postgres://h&", "postgres://h&?k=x%20y"},       // "&" outside the query is a host's
		{"postgres://h?a=?", "postgres://h?a=?&k=x%20y"}, // a "?" in the query is a value's
	} {
		if got := Set(tt.dsn, "k", "x y"); got != tt.want {
			t.Errorf("Set(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
	}
	for _, dsn := range []string{
		"postgres://u:p%40ss@h:5433/db", "postgres://u@h/db?sslmode=disable", "postgres://u@h/db?",
		"postgres://u@h/db?sslmode=disable&", `host=h password=abc\ `, "postgresql://h",
		"host=h port=5433 user=u dbname=db", "",
	} {
		before, err := Split(dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"4", "a b", `it's \ odd`, "x&y=z?#%", "", "é\n"} {
			got := Set(Set(dsn, "search_path", v), "k", "1")
			ps, err := Split(got, nil)
			want := append(append(append([]Pair(nil), before...), Pair{"search_path", v}), Pair{"k", "1"})
			if err != nil || !reflect.DeepEqual(ps, want) {
				t.Errorf("Set(%q, %q) = %q: %q, %v; want %q", dsn, v, got, ps, err, want)
			}
		}
	}
}

func TestPercentEncode(t *testing.T) {
	if got, want := percentEncode("aZ09-._~ /%?&=é"), "aZ09-._~%20%2F%25%3F%26%3D%C3%A9"; got != want {
		t.Errorf("percentEncode = %q, want %q", got, want)
	}
}
