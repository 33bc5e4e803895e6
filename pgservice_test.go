package pgline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
		c, err := parseConfig(tt.dsn, src)
		if err != nil {
			t.Errorf("parseConfig(%q): %v", tt.dsn, err)
			continue
		}
		h := c.Hosts[0]
		if h.Host != tt.host || h.Port != tt.port || c.Database != tt.database || c.RuntimeParams["search_path"] != tt.params {
			t.Errorf("parseConfig(%q) = host %q port %d db %q search_path %q; want %q %d %q %q",
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
	if c, err := parseConfig("service=mydb", src); err != nil || c.Hosts[0].Host != "svchost" {
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
		{"service=s", write("badvalue", "[s]\nsslmode=bogus\n"), "invalid sslmode (from service file "},
	}
	for _, tt := range tests {
		src, _ := testSource(t, map[string]string{"PGSERVICEFILE": tt.file})
		_, err := parseConfig(tt.dsn, src)
		if err == nil || !strings.HasPrefix(err.Error(), errParsePrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) with %s: error %v, want %q", tt.dsn, tt.file, err, tt.want)
		}
	}
}
