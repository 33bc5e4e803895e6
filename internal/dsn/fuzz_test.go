package dsn

import (
	"reflect"
	"strings"
	"testing"
)

// encodeURLQuery writes pairs as the query of a postgres:// URL.
func encodeURLQuery(ps []Pair) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, percentEncode(p.Key)+"="+percentEncode(p.Value))
	}
	return "postgres://?" + strings.Join(parts, "&")
}

// FuzzSplit checks that Split never panics, that its errors never show
// the planted text, and that whatever it accepts survives a round trip
// through both forms (Render, and a URL query), and through Set.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"", "host=a port=5432", `a='x y' b='it\'s' c='back\\slash'`, `a=x\ y`, "a='x'b=c",
		"a= b", "a='x", "a b=c", "=b", "a=", "= =", "a='", `a\=b=c`, `a=x\`,
		"postgres://u:p@h:5433/db?sslmode=require", "postgres://h1:1,h2,h3:3/db",
		"postgres://[::1]:5433/db", "postgres://[fe80::1%25eth0]/", "postgres://%2Fvar%2Frun/db",
		"postgres://h?ssl=true", "postgres://h?a=1&", "postgres://[::1", "postgres://h?key=key=value",
		"postgresql://a%00b", "postgres://u:p@ss@h", "postgres://h?a&b", "postgres://%zz",
		"POSTGRESQL://h", " postgres://h ", "postgres://h/db x=1", "postgres://h?a%20b=1",
		"SECRET", "password SECRET", "postgres://u:SECRET/db",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Split(s, testKnown)
		if err != nil {
			if strings.Contains(s, "SECRET") && strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error shows the text: %v", err)
			}
			return
		}
		plainKeys, noNUL := true, true
		for _, p := range got {
			if p.Key == "" {
				t.Fatalf("empty key from %q", s)
			}
			plainKeys = plainKeys && ValidKey(p.Key)
			noNUL = noNUL && !strings.Contains(p.Key+p.Value, "\x00")
		}
		if _, isURL := urlScheme(s); !isURL && !plainKeys {
			t.Fatalf("a key from %q holds a separator: %q", s, got)
		}
		if plainKeys {
			kv := Render(got)
			again, err := Split(kv, nil)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("key=value round trip of %q via %q: %q, %v; want %q", s, kv, again, err, got)
			}
			// Set adds to either form; the value comes back last.
			// A URL cannot carry a NUL byte.
			for _, dsn := range []string{s, kv} {
				if _, isURL := urlScheme(dsn); isURL && strings.Contains(s, "\x00") {
					continue
				}
				set := Set(dsn, "k", s)
				again, err := Split(set, nil)
				want := append(append([]Pair(nil), got...), Pair{"k", s})
				if err != nil || !reflect.DeepEqual(again, want) {
					t.Fatalf("Set(%q, k, ...) = %q: %q, %v; want %q", dsn, set, again, err, want)
				}
			}
		}
		if !noNUL {
			return // %00 is refused in URLs
		}
		u := encodeURLQuery(got)
		again, err := splitURL(u, nil)
		if err != nil {
			t.Fatalf("URL round trip of %q via %q: %v", s, u, err)
		}
		// ssl=true is rewritten to sslmode=require, as on the first pass.
		want := append([]Pair(nil), got...)
		for i, p := range want {
			if p.Key == "ssl" && p.Value == "true" {
				want[i] = Pair{"sslmode", "require"}
			}
		}
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(again, want) {
			t.Fatalf("URL round trip of %q via %q: %q; want %q", s, u, again, want)
		}
	})
}
