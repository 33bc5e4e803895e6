package dsn

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const serviceFileText = `# A connection service file.
[mydb]
host=svchost
port = 6000
  dbname=svcdb  
search_path=a=b

[other]
host=otherhost
[empty]

[mydb]
host=second-section-ignored

[nested]
service=mydb
`

func TestReadServiceFile(t *testing.T) {
	path := writeFile(t, "pg_service.conf", serviceFileText, 0o644)
	for _, tt := range []struct {
		name  string
		want  []Pair
		found bool
	}{
		{"mydb", pairs("host", "svchost", "port", "6000", "dbname", "svcdb", "search_path", "a=b"), true},
		{"other", pairs("host", "otherhost"), true},
		{"empty", nil, true},
		{"nope", nil, false},
		{"MYDB", nil, false},
	} {
		got, found, err := ReadServiceFile(path, tt.name)
		if err != nil || found != tt.found || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ReadServiceFile(%q) = %q, %v, %v; want %q, %v", tt.name, got, found, err, tt.want, tt.found)
		}
	}
	if got, found, err := ReadServiceFile(filepath.Join(t.TempDir(), "none"), "mydb"); got != nil || found || err != nil {
		t.Errorf("missing file: %q, %v, %v", got, found, err)
	}
}

func TestReadServiceFileErrors(t *testing.T) {
	path := writeFile(t, "pg_service.conf", serviceFileText, 0o644)
	dir := t.TempDir()
	for _, tt := range []struct {
		content, name, want string
	}{
		{"", "nested", "line 16: nested service specifications are not supported"},
		{"[s]\nhost\n", "s", "line 2: expected key=value"},
		{"[s]\n=x\n", "s", "line 2: expected key=value"},
		{"[s\nhost=x\n", "s", `line 1: missing "]"`},
		{"[t]\nno equals sign here\n[s]\nhost=x\n", "s", ""}, // other sections are not read
		{"[s]\nhost=" + strings.Repeat("x", maxServiceFileLine) + "\n", "s", "cannot read service file"},
	} {
		p := path
		if tt.content != "" {
			p = writeFile(t, "f", tt.content, 0o644)
		}
		_, _, err := ReadServiceFile(p, tt.name)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.content, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q in %q: error %v, want it to name the file and contain %q", tt.name, tt.content, err, tt.want)
		}
	}
	if _, _, err := ReadServiceFile(dir, "s"); err == nil || !strings.Contains(err.Error(), "cannot read service file") {
		t.Errorf("a directory: %v", err)
	}
}

func TestService(t *testing.T) {
	home := t.TempDir()
	userFile := writeFile(t, "user.conf", "[mydb]\nhost=user-mydb\n", 0o600)
	sysDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(sysDir, "pg_service.conf"), []byte("[sysonly]\nhost=syshost\n[mydb]\nhost=sys-mydb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".pg_service.conf"), []byte("[mydb]\nhost=home-mydb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env       map[string]string
		service   string
		wantHost  string
		wantFile  string
		wantError string
	}{
		{map[string]string{"PGSERVICEFILE": userFile, "PGSYSCONFDIR": sysDir}, "mydb", "user-mydb", userFile, ""},
		{map[string]string{"HOME": home, "PGSYSCONFDIR": sysDir}, "mydb", "home-mydb", filepath.Join(home, ".pg_service.conf"), ""},
		{map[string]string{"PGSERVICEFILE": userFile, "PGSYSCONFDIR": sysDir}, "sysonly", "syshost", filepath.Join(sysDir, "pg_service.conf"), ""},
		{map[string]string{"PGSERVICEFILE": "/nonexistent", "PGSYSCONFDIR": sysDir}, "mydb", "sys-mydb", filepath.Join(sysDir, "pg_service.conf"), ""},
		{map[string]string{"PGSERVICEFILE": userFile, "PGSYSCONFDIR": sysDir}, "nope", "", "",
			"is not defined in " + userFile + " or " + filepath.Join(sysDir, "pg_service.conf")},
		{map[string]string{"PGSERVICEFILE": sysDir, "PGSYSCONFDIR": sysDir}, "mydb", "", "", "cannot read service file"},
	} {
		src := testSource(tt.env)
		ps, file, err := src.Service(tt.service)
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("Service(%q) with %v: error %v, want %q", tt.service, tt.env, err, tt.wantError)
			}
			continue
		}
		if host, _ := Lookup(ps, "host"); err != nil || host != tt.wantHost || file != tt.wantFile {
			t.Errorf("Service(%q) with %v = %q, %q, %v; want host %q from %q", tt.service, tt.env, ps, file, err, tt.wantHost, tt.wantFile)
		}
	}
}

func TestServiceFiles(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want []string
	}{
		{nil, []string{filepath.Join(DefaultSysConfDir, "pg_service.conf")}},
		{map[string]string{"HOME": "/h"}, []string{"/h/.pg_service.conf", filepath.Join(DefaultSysConfDir, "pg_service.conf")}},
		{map[string]string{"HOME": "/h", "PGSERVICEFILE": "/f", "PGSYSCONFDIR": "/etc/x"}, []string{"/f", "/etc/x/pg_service.conf"}},
	} {
		if got := testSource(tt.env).ServiceFiles(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ServiceFiles with %v = %q, want %q", tt.env, got, tt.want)
		}
	}
}
