package pgline

import (
	"reflect"
	"strings"
	"testing"
)

// quoteKeyValue writes value in the quoted key=value form.
func quoteKeyValue(value string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(value); i++ {
		if value[i] == '\'' || value[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(value[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// pairs builds a pair list from alternating keys and values.
func pairs(kv ...string) []dsnPair {
	var p []dsnPair
	for i := 0; i+1 < len(kv); i += 2 {
		p = append(p, dsnPair{kv[i], kv[i+1]})
	}
	return p
}

func TestSplitKeyValue(t *testing.T) {
	tests := []struct {
		in   string
		want []dsnPair
	}{
		{"", nil},
		{" \t\n ", nil},
		{"host=a port=5432", pairs("host", "a", "port", "5432")},
		{"  host = a\tport =5432  dbname= db ", pairs("host", "a", "port", "5432", "dbname", "db")},
		{`a='x y' b='it\'s' c='back\\slash'`, pairs("a", "x y", "b", "it's", "c", `back\slash`)},
		{"a=", pairs("a", "")},
		{"a='' b=c", pairs("a", "", "b", "c")},
		{`a=x\ y`, pairs("a", "x y")},
		{`a=x\`, pairs("a", "x")},
		{"a='x'b=c", pairs("a", "x", "b", "c")},
		{"a= b", pairs("a", "b")}, // libpq skips white space after "="
		{"a=b=c", pairs("a", "b=c")},
		{"a=b'c", pairs("a", "b'c")},
		{"a=1 a=2", pairs("a", "1", "a", "2")},
		{"a='x\ny'", pairs("a", "x\ny")},
		{"a='é ü'", pairs("a", "é ü")},
		{"postgres=x", pairs("postgres", "x")},
	}
	for _, tt := range tests {
		got, err := splitKeyValue(tt.in)
		if err != nil {
			t.Errorf("splitKeyValue(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitKeyValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitKeyValueErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"host", `missing "=" after key "host"`},
		{"host localhost", `missing "=" after key "host"`},
		{"a b=c", `missing "=" after key at offset 0`},
		{"x=1 =b", `missing key before "=" at offset 4`},
		{"a='x", "unterminated quoted value for key at offset 0"},
		{`password='x\'`, `unterminated quoted value for key "password"`},
		{`a= 'x\`, "unterminated quoted value"},
	}
	for _, tt := range tests {
		_, err := splitKeyValue(tt.in)
		if err == nil {
			t.Errorf("splitKeyValue(%q) succeeded, want error %q", tt.in, tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), errParsePrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("splitKeyValue(%q) error %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestSplitURL(t *testing.T) {
	tests := []struct {
		in   string
		want []dsnPair
	}{
		{"postgres://", nil},
		{"postgresql://", nil},
		{"POSTGRES://h", pairs("host", "h")},
		{"  postgres://h  ", pairs("host", "h")},
		{"postgresql://u:p@h:5433/db?sslmode=require&application_name=x%20y",
			pairs("user", "u", "password", "p", "host", "h", "port", "5433", "dbname", "db",
				"sslmode", "require", "application_name", "x y")},
		{"postgres://h1:1,h2,h3:3/db", pairs("host", "h1,h2,h3", "port", "1,,3", "dbname", "db")},
		{"postgres://h1,h2/db", pairs("host", "h1,h2", "dbname", "db")},
		{"postgres://[::1]:5433/db", pairs("host", "::1", "port", "5433", "dbname", "db")},
		{"postgres://[::1],[2001:db8::1]:7", pairs("host", "::1,2001:db8::1", "port", ",7")},
		{"postgres://[fe80::1%25eth0]/", pairs("host", "fe80::1%eth0")},
		{"postgres://%2Fvar%2Frun%2Fpostgresql/db", pairs("host", "/var/run/postgresql", "dbname", "db")},
		{"postgres:///db?host=/tmp", pairs("dbname", "db", "host", "/tmp")},
		{"postgres://:12345/db?host=%2Fpath", pairs("port", "12345", "dbname", "db", "host", "/path")},
		{"postgres://@host", pairs("host", "host")},
		{"postgres://host:/", pairs("host", "host")},
		{"postgres://user@", pairs("user", "user")},
		{"postgres://u:@h", pairs("user", "u", "host", "h")},
		{"postgres://:pw@h", pairs("password", "pw", "host", "h")},
		{"postgres://u:p%40ss%3Aw%2F@h", pairs("user", "u", "password", "p@ss:w/", "host", "h")},
		{"postgres://u:p@ss@h", pairs("user", "u", "password", "p@ss", "host", "h")},
		{"postgres://u%20x@h", pairs("user", "u x", "host", "h")},
		{"postgres://h?ssl=true", pairs("host", "h", "sslmode", "require")},
		{"postgres://h?ssl=false", pairs("host", "h", "ssl", "false")},
		{"postgres://h?", pairs("host", "h")},
		{"postgres://h/?", pairs("host", "h")},
		{"postgres://h?a=1&", pairs("host", "h", "a", "1")},
		{"postgres://h?a=", pairs("host", "h", "a", "")},
		{"postgres://h?a=1+2", pairs("host", "h", "a", "1+2")},
		{"postgres://h?u%73er=x", pairs("host", "h", "user", "x")},
		{"postgres://h/db%2Fx?options=-c%20geqo%3Doff", pairs("host", "h", "dbname", "db/x", "options", "-c geqo=off")},
		{"postgres://h?x=@y", pairs("host", "h", "x", "@y")},
		{"postgres://h/db?x=a/b", pairs("host", "h", "dbname", "db", "x", "a/b")},
	}
	for _, tt := range tests {
		got, err := splitDSN(tt.in)
		if err != nil {
			t.Errorf("splitDSN(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitURLErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://[::1", `missing "]"`},
		{"postgres://[]", "empty IPv6 address"},
		{"postgres://[::1]z", "unexpected character after an IPv6 address"},
		{"postgres://h?zzz", `has no "="`},
		{"postgres://h?a&b", `has no "="`},
		{"postgres://h?a=1&&b=2", `has no "="`},
		{"postgres://h?key=key=value", `extra "="`},
		{"postgres://h?=v", "empty name"},
		{"postgres://h?dbname=%XXfoo", `invalid percent-encoding in the value of URL query parameter "dbname"`},
		{"postgres://h?%zz=1", "invalid percent-encoding in a URL query parameter name"},
		{"postgresql://a%00b", "invalid percent-encoding in a host"},
		{"postgresql://%zz", "invalid percent-encoding in a host"},
		{"postgresql://%1", "invalid percent-encoding in a host"},
		{"postgresql://%", "invalid percent-encoding in a host"},
		{"postgresql://h:%3", "invalid percent-encoding in a port"},
		{"postgres://u%zz:p@h", "invalid percent-encoding in the user name"},
		{"postgres://u:p%zz@h", "invalid percent-encoding in the password"},
		{"postgres://h/d%zz", "invalid percent-encoding in the database name"},
	}
	for _, tt := range tests {
		_, err := splitDSN(tt.in)
		if err == nil {
			t.Errorf("splitDSN(%q) succeeded, want error %q", tt.in, tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), errParsePrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("splitDSN(%q) error %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestPercentDecode(t *testing.T) {
	for in, want := range map[string]string{
		"":          "",
		"abc":       "abc",
		"%41%62%2f": "Ab/",
		"%e2%82%ac": "€",
		"a+b":       "a+b",
		"100%25":    "100%",
	} {
		got, err := percentDecode(in)
		if err != nil || got != want {
			t.Errorf("percentDecode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"%", "%4", "%g0", "%0g", "a%00", "%%41"} {
		if got, err := percentDecode(in); err == nil {
			t.Errorf("percentDecode(%q) = %q, want an error", in, got)
		}
	}
}

// encodeKeyValue writes pairs in the quoted key=value form.
func encodeKeyValue(ps []dsnPair) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.key+"="+quoteKeyValue(p.value))
	}
	return strings.Join(parts, " ")
}

// encodeURLQuery writes pairs as the query of a postgres:// URL.
func encodeURLQuery(ps []dsnPair) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, percentEncode(p.key)+"="+percentEncode(p.value))
	}
	return "postgres://?" + strings.Join(parts, "&")
}

// FuzzSplitDSN checks that the tokenizers never panic and that whatever
// they accept survives a round trip through both forms.
func FuzzSplitDSN(f *testing.F) {
	for _, s := range []string{
		"", "host=a port=5432", `a='x y' b='it\'s' c='back\\slash'`, `a=x\ y`, "a='x'b=c",
		"a= b", "a='x", "a b=c", "=b",
		"postgres://u:p@h:5433/db?sslmode=require", "postgres://h1:1,h2,h3:3/db",
		"postgres://[::1]:5433/db", "postgres://[fe80::1%25eth0]/", "postgres://%2Fvar%2Frun/db",
		"postgres://h?ssl=true", "postgres://h?a=1&", "postgres://[::1", "postgres://h?key=key=value",
		"postgresql://a%00b", "postgres://u:p@ss@h", "postgres://h?a&b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := splitDSN(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), errParsePrefix) {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		plainKeys, noNUL := true, true
		for _, p := range got {
			if p.key == "" {
				t.Fatalf("empty key from %q", s)
			}
			plainKeys = plainKeys && !strings.ContainsAny(p.key, "= \t\n\v\f\r")
			noNUL = noNUL && !strings.Contains(p.key+p.value, "\x00")
		}
		if _, isURL := urlScheme(s); !isURL && !plainKeys {
			t.Fatalf("a key from %q holds a separator: %q", s, got)
		}
		if plainKeys {
			kv := encodeKeyValue(got)
			again, err := splitKeyValue(kv)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("key=value round trip of %q via %q: %q, %v; want %q", s, kv, again, err, got)
			}
		}
		if !noNUL {
			return // %00 is refused in URLs
		}
		u := encodeURLQuery(got)
		again, err := splitURL(u)
		if err != nil {
			t.Fatalf("URL round trip of %q via %q: %v", s, u, err)
		}
		// ssl=true is rewritten to sslmode=require, as on the first pass.
		want := append([]dsnPair(nil), got...)
		for i, p := range want {
			if p.key == "ssl" && p.value == "true" {
				want[i] = dsnPair{"sslmode", "require"}
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
		"postgresql://h",
		"host=h port=5433 user=u dbname=db",
		"",
	} {
		for _, v := range []string{"4", "a b", `it's \ odd`, "x&y=z?#", ""} {
			got := SetDSNParam(dsn, "search_path", v)
			got = SetDSNParam(got, "pool_max_conns", "4")
			src, _ := testSource(t, nil)
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
	src, _ := testSource(t, nil)
	if c, err := parseConfig(SetDSNParam(`host=h password=abc\ `, "sslmode", "disable"), src); err != nil || c.Password != "abc " || c.SSLMode != "disable" {
		t.Errorf("after a value ending with an escaped space: %v", err)
	}
	for _, dsn := range []string{"postgres://u:secret@h/db pool_max_conns=4", "postgres://h/db?sslmode=disable pool_max_conns=4"} {
		_, err := parseConfig(dsn, src)
		if err == nil || !strings.Contains(err.Error(), "query parameters") || strings.Contains(err.Error(), "secret") {
			t.Errorf("parseConfig(%q): %v; want a refusal naming query parameters, without the password", dsn, err)
		}
	}
}
