package dsn

import (
	"reflect"
	"strings"
	"testing"
)

// pairs builds a pair list from alternating keys and values.
func pairs(kv ...string) []Pair {
	var p []Pair
	for i := 0; i+1 < len(kv); i += 2 {
		p = append(p, Pair{kv[i], kv[i+1]})
	}
	return p
}

// testKnown stands for a caller's list of keys errors may name.
func testKnown(key string) bool {
	switch key {
	case "host", "password", "dbname":
		return true
	}
	return false
}

// splitTest is a DSN and the pairs Split gives for it.
type splitTest struct {
	in   string
	want []Pair
}

// checkSplit runs Split on each test's DSN.
func checkSplit(t *testing.T, tests []splitTest) {
	t.Helper()
	for _, tt := range tests {
		got, err := Split(tt.in, testKnown)
		if err != nil {
			t.Errorf("Split(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitKeyValue(t *testing.T) {
	tests := []splitTest{
		{"", nil},
		{" \t\n ", nil},
		{"host=a port=5432", pairs("host", "a", "port", "5432")},
		{"  host = a\tport =5432  dbname= db ", pairs("host", "a", "port", "5432", "dbname", "db")},
		{`a='x y' b='it\'s' c='back\\slash'`, pairs("a", "x y", "b", "it's", "c", `back\slash`)},
		{"a=", pairs("a", "")},
		{"a='' b=c", pairs("a", "", "b", "c")},
		{`a=x\ y`, pairs("a", "x y")},
		{`a=x\`, pairs("a", "x")}, // libpq drops a final backslash
		{"a='x'b=c", pairs("a", "x", "b", "c")},
		{"a= b", pairs("a", "b")}, // libpq skips white space after "="
		{"a=b=c", pairs("a", "b=c")},
		{"a=b'c", pairs("a", "b'c")},
		{"a=1 a=2", pairs("a", "1", "a", "2")},
		{"a='x\ny'", pairs("a", "x\ny")},
		{"a='é ü'", pairs("a", "é ü")},
		{"postgres=x", pairs("postgres", "x")},
		{"'a\x00b'=1", pairs("'a\x00b'", "1")}, // keys are not checked here
	}
	checkSplit(t, tests)
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
		_, err := Split(tt.in, testKnown)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Split(%q) error %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
	// Without a list of known keys, every key is named by its offset.
	if _, err := Split("x=1 host", nil); err == nil || !strings.HasSuffix(err.Error(), `missing "=" after key at offset 4`) {
		t.Errorf("Split with known nil: %v", err)
	}
}

func TestSplitURL(t *testing.T) {
	tests := []splitTest{
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
		{"postgres://h?b=2&a=1&b=3", pairs("host", "h", "b", "2", "a", "1", "b", "3")}, // order kept
		{"postgres://h/db%2Fx?options=-c%20geqo%3Doff", pairs("host", "h", "dbname", "db/x", "options", "-c geqo=off")},
		{"postgres://h?x=@y", pairs("host", "h", "x", "@y")},
		{"postgres://h/db?x=a/b", pairs("host", "h", "dbname", "db", "x", "a/b")},
		{"postgres://h?a%20b=1", pairs("host", "h", "a b", "1")}, // not a ValidKey
	}
	checkSplit(t, tests)
}

func TestSplitURLErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://[::1", `missing "]"`},
		{"postgres://[]", "empty IPv6 address"},
		{"postgres://[::1]z", "unexpected character after an IPv6 address"},
		{"postgres://h?zzz", `has no "="`},
		{"postgres://h?a&b", `has no "="`},
		{"postgres://h?a=1&&b=2", `has no "="`},
		{"postgres://h?key=key=value", `extra "=" in URL query parameter at offset 0`},
		{"postgres://h?dbname=a=b", `extra "=" in URL query parameter "dbname"`},
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
		{"postgres://h/db pool_max_conns=4", "query parameters"},
		{"postgres://h/db\tx", "cannot hold white space"},
	}
	for _, tt := range tests {
		_, err := Split(tt.in, testKnown)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Split(%q) error %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

// TestSplitErrorsHideText: no error shows text of the DSN but a known key.
func TestSplitErrorsHideText(t *testing.T) {
	const secret = "S3cr3tPw-xyzzy"
	for _, s := range []string{
		"password " + secret, secret, secret + " host=a", "host=a " + secret, "'" + secret, "=" + secret,
		"password='" + secret, secret + "='x", "postgres://user:" + secret + "%zz@host/db",
		"postgres://user:" + secret + "%@host/db", "postgres://user:" + secret + "@[::1/db",
		"postgres://user:" + secret + "@host/db?x", "postgres://user:" + secret + "@host/db%zz",
		"postgres://h?password=" + secret + "%zz", "postgres://h?password=" + secret + "=x",
		"postgres://h?" + secret, "postgres://h?" + secret + "%zz=1", "postgres://h?" + secret + "=a=b",
		"postgres://[" + secret, "postgres://" + secret + "%", "postgres://u:" + secret + "@h/db x=1",
	} {
		for _, known := range []func(string) bool{nil, testKnown, func(string) bool { return false }} {
			_, err := Split(s, known)
			if err == nil {
				t.Errorf("Split(%q) succeeded, want an error", s)
			} else if strings.Contains(err.Error(), secret[:6]) {
				t.Errorf("Split(%q) error shows the text: %v", s, err)
			}
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
