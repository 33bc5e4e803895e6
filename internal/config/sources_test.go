package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
		c, err := Parse(tt.dsn, src, testMaxConns)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.dsn, err)
		}
		var got []string
		for _, h := range c.Hosts {
			got = append(got, h.Password)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) host passwords %q, want %q", tt.dsn, got, tt.want)
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
	if c, err := Parse(dsn, src, testMaxConns); err != nil || c.Hosts[0].Password != "db1-app-bob" {
		t.Errorf("~/.pgpass: %+v, %v", c, err)
	}
	// passfile in the DSN wins over PGPASSFILE and ~/.pgpass.
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("*:*:*:*:from-other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src2, _ := testSource(t, map[string]string{"PGPASSFILE": filepath.Join(home, ".pgpass")})
	if c, err := Parse(dsn+" passfile="+other, src2, testMaxConns); err != nil || c.Hosts[0].Password != "from-other" {
		t.Errorf("passfile key: %+v, %v", c, err)
	}
	// A symbolic link to a private file is followed.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if c, err := Parse(dsn+" passfile="+link, src2, testMaxConns); err != nil || c.Hosts[0].Password != "from-other" {
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
			c, err := Parse(dsn+" passfile="+tt.path(t), src, testMaxConns)
			if err != nil {
				t.Fatalf("an unusable password file must not be an error: %v", err)
			}
			if c.Hosts[0].Password != "" {
				t.Errorf("password %q read from an unusable file", c.Hosts[0].Password)
			}
		})
	}
}

func TestServiceFile(t *testing.T) {
	userFile, err := filepath.Abs(filepath.Join("testdata", "dsn_pg_service.conf"))
	if err != nil {
		t.Fatal(err)
	}
	sysDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(sysDir, "pg_service.conf"), []byte("[sysonly]\nhost=syshost\n[mydb]\nhost=sys-mydb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PGSERVICEFILE": userFile, "PGSYSCONFDIR": sysDir}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range env {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		dsn      string
		env      map[string]string
		host     string
		port     uint16
		database string
		params   string
	}{
		{"service=mydb", env, "svchost", 6000, "svcdb", "svc"},
		{"postgres:///?service=mydb", env, "svchost", 6000, "svcdb", "svc"},
		{"", with("PGSERVICE", "mydb"), "svchost", 6000, "svcdb", "svc"},
		{"service=mydb host=dsnhost", env, "dsnhost", 6000, "svcdb", "svc"},                     // the DSN wins
		{"service=mydb", with("PGHOST", "envhost"), "svchost", 6000, "svcdb", "svc"},            // the service wins over env
		{"service=mydb", with("PGDATABASE", "envdb"), "svchost", 6000, "svcdb", "svc"},          //
		{"service=other", with("PGDATABASE", "envdb"), "otherhost", 5432, "envdb", ""},          // env fills the rest
		{"service=sysonly", env, "syshost", 5432, "osuser", ""},                                 // system file
		{"service=mydb", with("PGSERVICEFILE", "/nonexistent"), "sys-mydb", 5432, "osuser", ""}, // user file missing
		{"service=''", with("PGSERVICE", "mydb"), "localhost", 5432, "osuser", ""},              // empty service in DSN
	}
	for _, tt := range tests {
		src, _ := testSource(t, tt.env)
		c, err := Parse(tt.dsn, src, testMaxConns)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.dsn, err)
			continue
		}
		h := c.Hosts[0]
		if h.Host != tt.host || h.Port != tt.port || c.Database != tt.database || c.RuntimeParams["search_path"] != tt.params {
			t.Errorf("Parse(%q) = host %q port %d db %q search_path %q; want %q %d %q %q",
				tt.dsn, h.Host, h.Port, c.Database, c.RuntimeParams["search_path"], tt.host, tt.port, tt.database, tt.params)
		}
	}

	// The default user file is ~/.pg_service.conf.
	src, home := testSource(t, map[string]string{"PGSYSCONFDIR": sysDir})
	data, err := os.ReadFile(userFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".pg_service.conf"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := Parse("service=mydb", src, testMaxConns); err != nil || c.Hosts[0].Host != "svchost" {
		t.Errorf("~/.pg_service.conf: %+v, %v", c, err)
	}
}

func TestServiceFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	userFile, err := filepath.Abs(filepath.Join("testdata", "dsn_pg_service.conf"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dsn, file, want string
	}{
		{"service=nope", userFile, "is not defined in " + userFile},
		{"service=nested", userFile, "line 15: nested service specifications are not supported"},
		{"service=s", write("noeq", "[s]\nhost\n"), "line 2: expected key=value"},
		{"service=s", write("nokey", "[s]\n=x\n"), "line 2: expected key=value"},
		{"service=s", write("bracket", "[s\nhost=x\n"), `line 1: missing "]"`},
		{"service=s", dir, "cannot read service file"},
		{"service=s", write("badvalue", "[s]\nsslmode=bogus\n"), `invalid sslmode value: "bogus" (from service file `},
	}
	for _, tt := range tests {
		src, _ := testSource(t, map[string]string{"PGSERVICEFILE": tt.file})
		_, err := Parse(tt.dsn, src, testMaxConns)
		if err == nil || !strings.HasPrefix(err.Error(), errPrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) with %s: error %v, want %q", tt.dsn, tt.file, err, tt.want)
		}
	}
}
