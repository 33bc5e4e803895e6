package pgtest

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"empty name", Options{Users: []User{{Method: "trust"}}}, "Users[0].Name is empty"},
		{"superuser", Options{Users: []User{{Name: "postgres", Method: "trust"}}}, "superuser"},
		{"duplicate", Options{Users: []User{{Name: "a", Method: "trust"}, {Name: "a", Method: "trust"}}}, "duplicate"},
		{"bad method", Options{Users: []User{{Name: "a", Method: "ident"}}}, `unknown method "ident"`},
		{"no method", Options{Users: []User{{Name: "a"}}}, `unknown method ""`},
		{"no password", Options{Users: []User{{Name: "a", Method: "md5"}}}, "non-empty Password"},
		{"cert without TLS", Options{Users: []User{{Name: "a", Method: "cert"}}}, "needs Options.TLS"},
		{"quote in name", Options{Users: []User{{Name: `a"b`, Method: "trust"}}}, "quote"},
		{"long name", Options{Users: []User{{Name: strings.Repeat("n", 64), Method: "trust"}}}, "63 bytes"},
		{"NUL password", Options{Users: []User{{Name: "a", Password: "x\x00", Method: "md5"}}}, "NUL"},
		{"bad cert user", Options{TLS: true, ClientCertUser: "a,b"}, "ClientCertUser"},
		{"hba newline", Options{HBA: []string{"local all all trust\nhost"}}, "HBA[0]"},
		{"setting name", Options{Settings: map[string]string{"a = 1; b": "x"}}, "invalid setting name"},
		{"setting value", Options{Settings: map[string]string{"work_mem": "1\n"}}, "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := privateTempDir(t)
			s, err := Start(tt.opts)
			if err == nil {
				s.Stop()
				t.Fatalf("Start succeeded, want error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if left := tempDirsIn(t, tmp); len(left) > 0 {
				t.Errorf("invalid options left a temp dir: %v", left)
			}
		})
	}
}

func TestConfigText(t *testing.T) {
	opts := Options{
		TLS:      true,
		Users:    []User{{Name: "u", Password: "p", Method: "md5"}, {Name: "s", Password: "p", Method: "scram-sha-256", HostSSLOnly: true}},
		HBA:      []string{"local all x reject"},
		Settings: map[string]string{"b": "it's", "a": "1"},
	}
	hba := hbaConf(&opts, true)
	wantOrder := []string{
		"local all x reject",
		`local    all "postgres"  trust`,
		`host     all "postgres" 127.0.0.1/32 trust`,
		`host     all "postgres" ::1/128 trust`,
		`local    replication "postgres"  trust`,
		`host     replication "postgres" 127.0.0.1/32 trust`,
		`host     replication "postgres" ::1/128 trust`,
		`local    all "u"  md5`,
		`host     all "u" 127.0.0.1/32 md5`,
		`host     all "u" ::1/128 md5`,
		`local    all "s"  scram-sha-256`,
		`hostssl  all "s" 127.0.0.1/32 scram-sha-256`,
		`hostssl  all "certuser" 127.0.0.1/32 cert`,
		`hostssl  all "certuser" ::1/128 cert`,
	}
	pos := -1
	for _, w := range wantOrder {
		i := strings.Index(hba, w+"\n")
		if i <= pos {
			t.Fatalf("pg_hba.conf lacks %q after position %d:\n%s", w, pos, hba)
		}
		pos = i
	}
	if strings.Contains(hba, `local    all "certuser"`) {
		t.Errorf("cert user got a local entry:\n%s", hba)
	}
	if hba4 := hbaConf(&opts, false); strings.Contains(hba4, "::1") {
		t.Errorf("IPv6 entries without IPv6:\n%s", hba4)
	}
	conf := postgresqlConf(&opts, "/tmp/s'ock", false, &tlsFiles{serverCert: "c", serverKey: "k", caCert: "ca"}, 15)
	for _, w := range []string{
		"listen_addresses = '127.0.0.1'\n", "unix_socket_directories = '/tmp/s''ock'\n",
		"ssl = 'on'\n", "ssl_ca_file = 'ca'\n", "wal_keep_size = '64MB'\n",
		"a = '1'\nb = 'it''s'\ninclude_if_exists 'pgtest_sync.conf'\n",
	} {
		if !strings.Contains(conf, w) {
			t.Errorf("postgresql.conf lacks %q:\n%s", w, conf)
		}
	}
	if conf12 := postgresqlConf(&opts, "/s", false, nil, 12); !strings.Contains(conf12, "wal_keep_segments = '4'\n") {
		t.Errorf("postgresql.conf for 12 lacks wal_keep_segments:\n%s", conf12)
	}
	sql := usersSQL(&Options{Users: []User{{Name: `O'Neil`, Password: `a'b`, Method: "md5"}}})
	if !strings.Contains(sql, `CREATE ROLE "O'Neil" LOGIN PASSWORD 'a''b';`) {
		t.Errorf("usersSQL quoting:\n%s", sql)
	}
}

func TestVersionLess(t *testing.T) {
	ordered := []string{"x", "9.6", "10", "15", "16.1", "16.2"}
	for i := range ordered {
		for j := range ordered {
			if got, want := versionLess(ordered[i], ordered[j]), i < j; got != want {
				t.Errorf("versionLess(%q, %q) = %v, want %v", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestFindBinariesPathEmpty(t *testing.T) {
	// With an empty PATH the versioned directories are still found when
	// present; otherwise the error says what to install.
	t.Setenv("PATH", "")
	b, err := findBinaries()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(dirs) == 0 {
		if err == nil || !strings.Contains(err.Error(), "apt-get install -y postgresql") {
			t.Errorf("err = %v", err)
		}
		return
	}
	if err != nil || !strings.HasPrefix(b.initdb, "/usr/lib/postgresql/") || b.psql == "" {
		t.Errorf("findBinaries = %+v, %v", b, err)
	}
}
