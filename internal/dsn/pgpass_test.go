package dsn

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func strp(s string) *string { return &s }

func TestParsePassLine(t *testing.T) {
	tests := []struct {
		line string
		want passEntry
		ok   bool
	}{
		{"h:1:d:u:pw", passEntry{strp("h"), strp("1"), strp("d"), strp("u"), "pw"}, true},
		{"*:*:*:*:pw", passEntry{password: "pw"}, true},
		{`a\:b:1:d\\x:u:p\:w\\`, passEntry{strp("a:b"), strp("1"), strp(`d\x`), strp("u"), `p:w\`}, true},
		{"h:1:d:u:pw:extra", passEntry{strp("h"), strp("1"), strp("d"), strp("u"), "pw"}, true},
		{"h:1:d:u:", passEntry{strp("h"), strp("1"), strp("d"), strp("u"), ""}, true},
		{"h:1:d:u:pw\r", passEntry{strp("h"), strp("1"), strp("d"), strp("u"), "pw"}, true},
		{"**:1:d:u:pw", passEntry{strp("**"), strp("1"), strp("d"), strp("u"), "pw"}, true},
		{"h*:1:d:u:pw", passEntry{strp("h*"), strp("1"), strp("d"), strp("u"), "pw"}, true},
		{"::::", passEntry{strp(""), strp(""), strp(""), strp(""), ""}, true},
		{"# h:1:d:u:pw", passEntry{}, false},
		{"", passEntry{}, false},
		{"h:1:d:u", passEntry{}, false},
		{`h:1:d:u\:pw`, passEntry{}, false},
		{`h:1:d:u\`, passEntry{}, false},
	}
	for _, tt := range tests {
		got, ok := parsePassLine(tt.line)
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePassLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// writeFile writes content to name in a fresh directory with mode, and
// returns its path.
func writeFile(t *testing.T, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

const passFileText = `# hostname:port:database:username:password

db1:5432:app:bob:db1-app-bob
db1:5432:*:bob:db1-any-bob
db1:*:*:*:db1-fallback
weird\:host:5432:*:*:colon-host
db2:5432:app:*:pw\:with\\escapes\:
too:few:fields
db3:5432:*:*:crlf-line` + "\r" + `
*:*:*:carol:carol-anywhere
*:*:*:*:last-resort
`

func TestPassFilePassword(t *testing.T) {
	f := ReadPassFile(writeFile(t, "pgpass", passFileText, 0o600))
	for _, tt := range []struct {
		host, port, db, user, want string
	}{
		{"db1", "5432", "app", "bob", "db1-app-bob"},
		{"db1", "5432", "other", "bob", "db1-any-bob"},
		{"db1", "6000", "app", "bob", "db1-fallback"},
		{"weird:host", "5432", "x", "x", "colon-host"},
		{"db2", "5432", "app", "x", `pw:with\escapes:`},
		{"db3", "5432", "x", "x", "crlf-line"},
		{"too", "few", "fields", "x", "last-resort"},
		{"anywhere", "1", "x", "carol", "carol-anywhere"},
		{"DB1", "5432", "app", "bob", "last-resort"}, // fields are compared exactly
	} {
		if got := f.Password(tt.host, tt.port, tt.db, tt.user); got != tt.want {
			t.Errorf("Password(%q, %q, %q, %q) = %q, want %q", tt.host, tt.port, tt.db, tt.user, got, tt.want)
		}
	}
	// A symbolic link to a private file is followed.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(writeFile(t, "pgpass", "*:*:*:*:linked\n", 0o600), link); err != nil {
		t.Fatal(err)
	}
	if got := ReadPassFile(link).Password("h", "1", "d", "u"); got != "linked" {
		t.Errorf("through a link: %q", got)
	}
}

func TestReadPassFileIgnored(t *testing.T) {
	for _, tt := range []struct {
		name string
		path func(t *testing.T) string
	}{
		{"mode 0644", func(t *testing.T) string { return writeFile(t, "p", passFileText, 0o644) }},
		{"mode 0640", func(t *testing.T) string { return writeFile(t, "p", passFileText, 0o640) }},
		{"mode 0604", func(t *testing.T) string { return writeFile(t, "p", passFileText, 0o604) }},
		{"mode 0601", func(t *testing.T) string { return writeFile(t, "p", passFileText, 0o601) }},
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }},
		{"directory", func(t *testing.T) string { return t.TempDir() }},
		{"empty", func(t *testing.T) string { return writeFile(t, "p", "", 0o600) }},
		{"no path", func(t *testing.T) string { return "" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReadPassFile(tt.path(t)).Password("db1", "5432", "app", "bob"); got != "" {
				t.Errorf("password %q read from an unusable file", got)
			}
		})
	}
	if got := (PassFile{}).Password("h", "1", "d", "u"); got != "" {
		t.Errorf("zero PassFile: %q", got)
	}
}
