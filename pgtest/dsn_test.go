package pgtest

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		in   string
		want []pair
	}{
		{"", nil},
		{"host=h port=5", []pair{{"host", "h"}, {"port", "5"}}},
		{"  a = 1\tb='x y' c='it\\'s' d=\\ e  ", []pair{{"a", "1"}, {"b", "x y"}, {"c", "it's"}, {"d", " e"}}},
		{"a='' b=''", []pair{{"a", ""}, {"b", ""}}},
		{"postgres://u:p%40ss@h:6/db?sslmode=require", []pair{{"host", "h"}, {"port", "6"}, {"user", "u"}, {"password", "p@ss"}, {"dbname", "db"}, {"sslmode", "require"}}},
	}
	for _, tt := range tests {
		got, err := parseDSN(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseDSN(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"a", "=1", "a='x", "a b=1", "password secret", "postgres://h:x/"} {
		_, err := parseDSN(bad)
		if err == nil {
			t.Errorf("parseDSN(%q) succeeded", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("parseDSN(%q) error shows the text: %v", bad, err)
		}
	}
}

func TestRenderDSN(t *testing.T) {
	ps := []pair{{"host", "/tmp/a b"}, {"password", `it's\`}, {"dbname", ""}, {"port", "5"}}
	got := renderDSN(ps)
	if want := `host='/tmp/a b' password='it\'s\\' dbname='' port=5`; got != want {
		t.Errorf("renderDSN = %q, want %q", got, want)
	}
	if back, err := parseDSN(got); err != nil || !reflect.DeepEqual(back, ps) {
		t.Errorf("round trip = %q, %v", back, err)
	}
	if got := joinDSN("a=1", []string{"", " b=2 ", "c=3"}); got != "a=1 b=2 c=3" {
		t.Errorf("joinDSN = %q", got)
	}
	if v, ok := lookup([]pair{{"a", "1"}, {"a", "2"}}, "a"); !ok || v != "2" {
		t.Errorf("lookup = %q, %v; later keys must win", v, ok)
	}
}

// FuzzParseDSN: parseDSN never panics, and what it accepts in key=value
// form survives renderDSN and parseDSN unchanged.
func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{
		"host=h port=5", "a='x y' b=\\'", "a='it\\'s'", "a=", "= =", "a='", "a\\=b=c",
		"postgres://u:p@h:1/d?x=y", "postgresql://[::1]:5/d", "postgres://%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := parseDSN(s)
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.key == "" {
				t.Fatalf("parseDSN(%q) gave an empty key", s)
			}
		}
		out := renderDSN(ps)
		back, err := parseDSN(out)
		if err != nil {
			t.Fatalf("parseDSN(renderDSN(%q)) = %v (rendered %q)", s, err, out)
		}
		if len(ps) == 0 && len(back) == 0 {
			return
		}
		if !reflect.DeepEqual(back, ps) {
			t.Fatalf("round trip of %q: %q became %q via %q", s, ps, back, out)
		}
	})
}
