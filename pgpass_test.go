package pgline

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// privateCopy copies a testdata file to a fresh file with the given mode
// (git does not keep 0600) and returns its path.
func privateCopy(t *testing.T, name string, mode os.FileMode) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPassFileLookup(t *testing.T) {
	pgpass := privateCopy(t, "pgpass_example", 0o600)
	tests := []struct {
		dsn  string
		want []string // per host
	}{
		{"host=db1.example.com dbname=app user=bob", []string{"db1-app-bob"}},
		{"host=db1.example.com dbname=other user=bob", []string{"db1-any-bob"}},
		{"host=db1.example.com port=6000 user=x", []string{"db1-fallback"}},
		{"host=db1.example.com,db1.example.com dbname=app user=bob port=5432,6000", []string{"db1-app-bob", "db1-fallback"}},
		{"postgres://bob@db1.example.com/app", []string{"db1-app-bob"}},
		{`host=weird:host user=x`, []string{"colon-host"}},
		{`host=back\\slash user=x`, []string{"backslash-host"}},
		{"host=db2 dbname=app user=x", []string{`pw:with\escapes:`}},
		{"host=db2 dbname=other user=x", []string{"last-resort"}},
		{"host=localhost user=alice", []string{"localhost-alice"}},
		{"host=/var/run/postgresql user=alice", []string{"localhost-alice"}}, // a default socket directory
		{"user=alice", []string{"localhost-alice"}},                          // default host
		{"host=/srv/pg port=5433 user=alice", []string{"custom-socket-dir"}}, // matched by path
		{"host=/srv/pg port=5432 user=alice", []string{"last-resort"}},       // not localhost
		{"hostaddr=192.0.2.1 user=x", []string{"by-hostaddr"}},
		{"host=other hostaddr=192.0.2.1 user=x", []string{"last-resort"}}, // host wins over hostaddr
		{"host=db3 user=x", []string{"crlf-line"}},
		{"host=anything user=carol", []string{"carol-anywhere"}},
		{"host=db1.example.com,nowhere dbname=app user=bob password=given", []string{"", ""}}, // Config.Password is used: no lookup
	}
	for _, tt := range tests {
		src, _ := testSource(t, map[string]string{"PGPASSFILE": pgpass})
		src.SocketDirs = []string{"/var/run/postgresql", "/tmp"}
		c, err := parseConfig(tt.dsn, src)
		if err != nil {
			t.Fatalf("parseConfig(%q): %v", tt.dsn, err)
		}
		var got []string
		for _, h := range c.Hosts {
			got = append(got, h.Password)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseConfig(%q) host passwords %q, want %q", tt.dsn, got, tt.want)
		}
	}
}

func TestPassFileLocation(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "pgpass_example"))
	if err != nil {
		t.Fatal(err)
	}
	const dsn = "host=db1.example.com dbname=app user=bob"

	// The default is ~/.pgpass.
	src, home := testSource(t, nil)
	if err := os.WriteFile(filepath.Join(home, ".pgpass"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := parseConfig(dsn, src); err != nil || c.Hosts[0].Password != "db1-app-bob" {
		t.Errorf("~/.pgpass: %+v, %v", c, err)
	}
	// passfile in the DSN wins over PGPASSFILE and ~/.pgpass.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("*:*:*:*:from-other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src2, _ := testSource(t, map[string]string{"PGPASSFILE": filepath.Join(home, ".pgpass")})
	if c, err := parseConfig(dsn+" passfile="+other, src2); err != nil || c.Hosts[0].Password != "from-other" {
		t.Errorf("passfile key: %+v, %v", c, err)
	}
	// A symbolic link to a private file is followed.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if c, err := parseConfig(dsn+" passfile="+link, src2); err != nil || c.Hosts[0].Password != "from-other" {
		t.Errorf("symlink: %+v, %v", c, err)
	}
}

func TestPassFileIgnored(t *testing.T) {
	const dsn = "host=db1.example.com dbname=app user=bob"
	for _, tt := range []struct {
		name string
		path func(t *testing.T) string
	}{
		{"mode 0644", func(t *testing.T) string { return privateCopy(t, "pgpass_example", 0o644) }},
		{"mode 0640", func(t *testing.T) string { return privateCopy(t, "pgpass_example", 0o640) }},
		{"mode 0604", func(t *testing.T) string { return privateCopy(t, "pgpass_example", 0o604) }},
		{"mode 0601", func(t *testing.T) string { return privateCopy(t, "pgpass_example", 0o601) }},
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }},
		{"directory", func(t *testing.T) string { return t.TempDir() }},
		{"empty", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "empty")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, _ := testSource(t, nil)
			c, err := parseConfig(dsn+" passfile="+tt.path(t), src)
			if err != nil {
				t.Fatalf("an unusable password file must not be an error: %v", err)
			}
			if c.Hosts[0].Password != "" {
				t.Errorf("password %q read from an unusable file", c.Hosts[0].Password)
			}
		})
	}
}
