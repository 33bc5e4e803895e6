package pgline

import (
	"strings"
	"testing"
)

// TestSetDSNParam: a setting added to a DSN in either form reads back as
// set, after the DSN's own settings, whatever its value holds; and a URL
// with key=value glued after it is refused with a message that says what
// to do (ExampleNewPool did that once: the setting became part of the
// database name, or of sslmode's value).
func TestSetDSNParam(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:p%40ss@h:5433/db",
		"postgres://u@h/db?sslmode=disable",
		"postgres://u@h/db?",
		"postgres://u@h/db?sslmode=disable&",
		`host=h password=abc\ `, // the value ends with an escaped space
		"host=h password=",      // an empty value at the end would take the setting in
		`host=h password=abc\`,  // and so would a final backslash
		"postgresql://h",
		"host=h port=5433 user=u dbname=db",
		"",
	} {
		for _, v := range []string{"4", "a b", `it's \ odd`, "x&y=z?#", ""} {
			got := SetDSNParam(dsn, "search_path", v)
			got = SetDSNParam(got, "pool_max_conns", "4")
			src := testSource(t)
			c, err := parseConfig(got, src)
			if err != nil {
				t.Errorf("SetDSNParam(%q, %q) = %q: %v", dsn, v, got, err)
				continue
			}
			if c.RuntimeParams["search_path"] != v {
				t.Errorf("SetDSNParam(%q, %q) = %q: search_path %q", dsn, v, got, c.RuntimeParams["search_path"])
			}
			if c.Pool.MaxConns != 4 {
				t.Errorf("SetDSNParam(%q, pool_max_conns) = %q: pool_max_conns %d", dsn, got, c.Pool.MaxConns)
			}
		}
	}
	src := testSource(t)
	for dsn, password := range map[string]string{`host=h password=abc\ `: "abc ", "host=h password=": "", `host=h password=abc\`: "abc"} {
		if c, err := parseConfig(SetDSNParam(dsn, "sslmode", "disable"), src); err != nil || c.Password != password || c.SSLMode != "disable" {
			t.Errorf("SetDSNParam(%q, sslmode, disable): %+v, %v; want password %q", dsn, c, err, password)
		}
	}
	for _, dsn := range []string{"postgres://u:secret@h/db pool_max_conns=4", "postgres://h/db?sslmode=disable pool_max_conns=4"} {
		_, err := parseConfig(dsn, src)
		if err == nil || !strings.Contains(err.Error(), "query parameters") || strings.Contains(err.Error(), "secret") {
			t.Errorf("parseConfig(%q): %v; want a refusal naming query parameters, without the password", dsn, err)
		}
	}
}
