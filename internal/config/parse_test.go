package config

import (
	"errors"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/dsn"
)

// testMaxConns is the default pool_max_conns the tests give Parse.
const testMaxConns = 4

// testSource is a Source with only env in the environment, an
// operating-system user "osuser" and an empty home directory, which it
// returns. HOME and PGSYSCONFDIR point into that directory unless env sets
// them.
func testSource(t testing.TB, env map[string]string) (*dsn.Source, string) {
	t.Helper()
	home := t.TempDir()
	full := map[string]string{"HOME": home, "PGSYSCONFDIR": filepath.Join(home, "etc")}
	for k, v := range env {
		full[k] = v
	}
	return &dsn.Source{
		LookupEnv: func(k string) (string, bool) {
			v, ok := full[k]
			return v, ok
		},
		CurrentUser: func() (*user.User, error) {
			return &user.User{Username: "osuser", HomeDir: home}, nil
		},
	}, home
}

// defaultSettings is what Parse("") gives with testSource.
func defaultSettings(home string) *Settings {
	return &Settings{
		Hosts:                  []Host{{Host: "localhost", Port: 5432}},
		User:                   "osuser",
		Database:               "osuser",
		PassFile:               filepath.Join(home, ".pgpass"),
		RuntimeParams:          map[string]string{},
		SSLMode:                "prefer",
		SSLNegotiation:         "postgres",
		SSLSNI:                 true,
		ChannelBinding:         "prefer",
		TargetSessionAttrs:     "any",
		LoadBalanceHosts:       "disable",
		ReadBufferSize:         64 << 10,
		MaxMessageSize:         1 << 30,
		SSLMinProtocolVersion:  "TLSv1.2",
		MinProtocolVersion:     "3.0",
		MaxProtocolVersion:     "3.0",
		StatementCacheMode:     "auto",
		StatementCacheCapacity: DefaultCacheCapacity,
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		dsn  string
		env  map[string]string
		want func(c *Settings)
	}{
		{"empty", "", nil, func(c *Settings) {}},
		{"key=value", "host=db1 port=5433 dbname=app user=bob password=pw application_name='my app'",
			nil, func(c *Settings) {
				c.Hosts = []Host{{Host: "db1", Port: 5433}}
				c.Database, c.User, c.Password, c.ApplicationName = "app", "bob", "pw", "my app"
			}},
		{"URL", "postgres://bob:p%40ss@db1:5433/app?sslmode=require&connect_timeout=10",
			nil, func(c *Settings) {
				c.Hosts = []Host{{Host: "db1", Port: 5433}}
				c.Database, c.User, c.Password = "app", "bob", "p@ss"
				c.SSLMode, c.ConnectTimeout = "require", 10*time.Second
			}},
		{"URL IPv6", "postgresql://[::1]:6000/db", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "::1", Port: 6000}}
			c.Database = "db"
		}},
		{"URL socket dir", "postgres://%2Fvar%2Frun%2Fpostgresql/db", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "/var/run/postgresql", Port: 5432}}
			c.Database = "db"
		}},
		{"URL host param", "postgres:///db?host=/tmp/sock&port=7", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "/tmp/sock", Port: 7}}
			c.Database = "db"
		}},
		{"key=value socket dir", "host=/var/run/postgresql", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "/var/run/postgresql", Port: 5432}}
		}},
		{"host list one port", "host=a,b,/tmp port=5433", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "a", Port: 5433}, {Host: "b", Port: 5433}, {Host: "/tmp", Port: 5433}}
		}},
		{"host list port list", "host=a,b,/tmp port=5432,5433,5434", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "a", Port: 5432}, {Host: "b", Port: 5433}, {Host: "/tmp", Port: 5434}}
		}},
		{"host list empty entries", "host=a,,c port=1,,3", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "a", Port: 1}, {Host: "localhost", Port: 5432}, {Host: "c", Port: 3}}
		}},
		{"URL host list", "postgres://a:1,[::1],c:3/db", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "a", Port: 1}, {Host: "::1", Port: 5432}, {Host: "c", Port: 3}}
			c.Database = "db"
		}},
		{"password for every host, none looked up", "host=a,b password=pw", nil, func(c *Settings) {
			c.Password = "pw"
			c.Hosts = []Host{{Host: "a", Port: 5432}, {Host: "b", Port: 5432}}
		}},
		{"hostaddr", "host=db.example.com hostaddr=192.0.2.1", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "db.example.com", HostAddr: "192.0.2.1", Port: 5432}}
		}},
		{"hostaddr only", "hostaddr=192.0.2.1,2001:db8::1 port=1,2", nil, func(c *Settings) {
			c.Hosts = []Host{{HostAddr: "192.0.2.1", Port: 1}, {HostAddr: "2001:db8::1", Port: 2}}
		}},
		{"hostaddr list with empty entry", "host=a,b hostaddr=192.0.2.1,", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "a", HostAddr: "192.0.2.1", Port: 5432}, {Host: "b", Port: 5432}}
		}},
		{"runtime params", "search_path=app,public DateStyle='ISO, MDY' keepalives=1 gssencmode=disable", nil, func(c *Settings) {
			c.RuntimeParams = map[string]string{"search_path": "app,public", "DateStyle": "ISO, MDY"}
		}},
		{"URL runtime params", "postgres://h?search_path=s&work_mem=64MB", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "h", Port: 5432}}
			c.RuntimeParams = map[string]string{"search_path": "s", "work_mem": "64MB"}
		}},
		{"pgline keys", "statement_cache_mode=describe statement_cache_capacity=10 pipeline_sync=each pool_max_conns=8 pool_min_conns=2 " +
			"pool_max_conn_lifetime=1h pool_max_conn_idle_time=30s pool_health_check_period=1m pool_max_pipeline=64 " +
			"read_buffer_size=8192 max_message_size=1048576 cancel_timeout=3s cancel_grace=250ms", nil, func(c *Settings) {
			c.StatementCacheMode, c.StatementCacheCapacity, c.PipelineSyncEach = "describe", 10, true
			c.CancelTimeout, c.CancelGrace = 3*time.Second, 250*time.Millisecond
			c.Pool = Pool{MaxConns: 8, MinConns: 2, MaxConnLifetime: time.Hour, MaxConnIdleTime: 30 * time.Second,
				HealthCheckPeriod: time.Minute, MaxPipeline: 64}
			c.ReadBufferSize, c.MaxMessageSize = 8192, 1<<20
		}},
		{"statement_cache_capacity=0 turns the cache off", "statement_cache_capacity=0", nil, func(c *Settings) {
			c.StatementCacheMode, c.StatementCacheCapacity = "none", 0
		}},
		{"pool limits of 0 are off (-1)", "pool_max_conn_lifetime=0 pool_max_conn_idle_time=0s pool_health_check_period=0 " +
			"pool_idle_check=0 pool_max_replica_lag=1500ms", nil, func(c *Settings) {
			c.Pool = Pool{MaxConnLifetime: -1, MaxConnIdleTime: -1, HealthCheckPeriod: -1, IdleCheck: -1, MaxReplicaLag: 1500 * time.Millisecond}
		}},
		{"pool_min_conns up to the default pool_max_conns", "pool_min_conns=4", nil, func(c *Settings) { c.Pool.MinConns = testMaxConns }},
		{"fallback_application_name", "fallback_application_name=fb", nil, func(c *Settings) {
			c.ApplicationName = "fb"
		}},
		{"application_name wins over fallback", "fallback_application_name=fb application_name=app", nil, func(c *Settings) {
			c.ApplicationName = "app"
		}},
		{"options", "options='-c geqo=off'", nil, func(c *Settings) { c.Options = "-c geqo=off" }},
		{"tls keys", "sslmode=verify-full sslrootcert=/ca.pem sslcert=/c.pem sslkey=/k.pem sslpassword=x sslsni=0 sslnegotiation=postgres",
			nil, func(c *Settings) {
				c.SSLMode, c.SSLRootCert, c.SSLCert, c.SSLKey, c.SSLPassword = "verify-full", "/ca.pem", "/c.pem", "/k.pem", "x"
				c.SSLSNI = false
			}},
		{"sslrootcert=system defaults to verify-full", "sslrootcert=system", nil, func(c *Settings) {
			c.SSLRootCert, c.SSLMode = "system", "verify-full"
		}},
		{"session keys", "channel_binding=require require_auth=scram-sha-256 target_session_attrs=read-write load_balance_hosts=random",
			nil, func(c *Settings) {
				c.ChannelBinding, c.RequireAuth, c.TargetSessionAttrs, c.LoadBalanceHosts = "require", "scram-sha-256", "read-write", "random"
			}},
		{"require_auth negated list", "require_auth=!md5,!password", nil, func(c *Settings) { c.RequireAuth = "!md5,!password" }},
		{"connect_timeout 1 means 2", "connect_timeout=1", nil, func(c *Settings) { c.ConnectTimeout = 2 * time.Second }},
		{"connect_timeout 0 means none", "connect_timeout=0", nil, func(c *Settings) {}},
		{"connect_timeout negative means none", "connect_timeout=-5", nil, func(c *Settings) {}},
		{"connect_timeout with spaces", "connect_timeout=' 30 '", nil, func(c *Settings) { c.ConnectTimeout = 30 * time.Second }},
		{"keepalives keys", "keepalives=1 keepalives_idle=7 keepalives_interval=' 2 ' keepalives_count=4 tcp_user_timeout=2500", nil, func(c *Settings) {
			c.KeepalivesIdle, c.KeepalivesInterval, c.KeepalivesCount, c.TCPUserTimeout = 7*time.Second, 2*time.Second, 4, 2500*time.Millisecond
		}},
		{"keepalives=0 turns them off", "keepalives=0", nil, func(c *Settings) { c.NoKeepalives = true }},
		{"keepalives nonzero keeps them on", "keepalives=5", nil, func(c *Settings) {}},
		{"keepalives 0 or less leave the system's", "keepalives_idle=0 keepalives_interval=-3 keepalives_count=0 tcp_user_timeout=-1", nil, func(c *Settings) {
			c.KeepalivesIdle, c.KeepalivesInterval, c.KeepalivesCount = -1, -1, -1
		}},
		{"last duplicate wins", "port=1 port=2", nil, func(c *Settings) { c.Hosts[0].Port = 2 }},
		{"empty values take defaults", "host='' port='' sslmode='' user='' dbname='' connect_timeout=", nil, func(c *Settings) {}},
		{"dbname defaults to user", "user=bob", nil, func(c *Settings) { c.User, c.Database = "bob", "bob" }},
		{"passfile", "passfile=/nonexistent/pgpass", nil, func(c *Settings) { c.PassFile = "/nonexistent/pgpass" }},
		{"ssl=true in URL", "postgres://h?ssl=true", nil, func(c *Settings) {
			c.Hosts = []Host{{Host: "h", Port: 5432}}
			c.SSLMode = "require"
		}},
		{"hosts from PGHOST", "", map[string]string{"PGHOST": "a,b", "PGPORT": "1,2"}, func(c *Settings) {
			c.Hosts = []Host{{Host: "a", Port: 1}, {Host: "b", Port: 2}}
		}},
		{"PGPORT applies to URL hosts without ports", "postgres://a,b/db", map[string]string{"PGPORT": "6000"}, func(c *Settings) {
			c.Hosts = []Host{{Host: "a", Port: 6000}, {Host: "b", Port: 6000}}
			c.Database = "db"
		}},
		{"DSN overrides environment", "host=dsnhost port=1 user=dsnuser sslmode=disable",
			map[string]string{"PGHOST": "envhost", "PGPORT": "2", "PGUSER": "envuser", "PGSSLMODE": "require", "PGDATABASE": "envdb"},
			func(c *Settings) {
				c.Hosts = []Host{{Host: "dsnhost", Port: 1}}
				c.User, c.Database, c.SSLMode = "dsnuser", "envdb", "disable"
			}},
		{"empty DSN value blocks the environment", "host=''", map[string]string{"PGHOST": "envhost"}, func(c *Settings) {}},
		{"empty environment variable is unset", "", map[string]string{"PGHOST": "", "PGSSLMODE": ""}, func(c *Settings) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, home := testSource(t, tt.env)
			got, err := Parse(tt.dsn, src, testMaxConns)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.dsn, err)
			}
			want := defaultSettings(home)
			tt.want(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", tt.dsn, got, want)
			}
		})
	}
}

// TestParseSSLNegotiation: sslnegotiation is postgres or direct, from the
// DSN or PGSSLNEGOTIATION; direct goes only with an sslmode that requires
// TLS (require, verify-ca, verify-full, or sslrootcert=system's default
// verify-full), as in libpq 17, and any other is refused naming both keys.
func TestParseSSLNegotiation(t *testing.T) {
	tests := []struct {
		dsn     string
		env     map[string]string
		want    string // SSLNegotiation, when wantErr is ""
		wantErr string
	}{
		{"", nil, "postgres", ""},
		{"sslnegotiation=postgres sslmode=disable", nil, "postgres", ""},
		{"sslnegotiation=direct sslmode=require", nil, "direct", ""},
		{"sslnegotiation=direct sslmode=verify-ca", nil, "direct", ""},
		{"sslnegotiation=direct sslmode=verify-full", nil, "direct", ""},
		{"sslnegotiation=direct sslrootcert=system", nil, "direct", ""},
		{"postgres://h?sslnegotiation=direct&sslmode=verify-full", nil, "direct", ""},
		{"sslmode=require", map[string]string{"PGSSLNEGOTIATION": "direct"}, "direct", ""},
		{"sslnegotiation=direct", map[string]string{"PGSSLMODE": "verify-ca"}, "direct", ""},
		{"sslnegotiation=postgres sslmode=prefer", map[string]string{"PGSSLNEGOTIATION": "direct"}, "postgres", ""},
		// The DSN's empty value takes the default, not the variable.
		{"sslnegotiation='' sslmode=disable", map[string]string{"PGSSLNEGOTIATION": "direct"}, "postgres", ""},

		{"sslnegotiation=direct", nil, "", "invalid sslnegotiation: direct requires sslmode require, verify-ca or verify-full"},
		{"sslnegotiation=direct sslmode=prefer", nil, "", "direct requires sslmode require"},
		{"sslnegotiation=direct sslmode=allow", nil, "", "direct requires sslmode require"},
		{"sslnegotiation=direct sslmode=disable", nil, "", "direct requires sslmode require"},
		{"sslmode=disable", map[string]string{"PGSSLNEGOTIATION": "direct"}, "", "invalid sslnegotiation (from PGSSLNEGOTIATION): direct requires sslmode"},
		{"sslnegotiation=direct", map[string]string{"PGSSLMODE": "prefer"}, "", "direct requires sslmode require"},
		{"sslnegotiation=requiredirect sslmode=require", nil, "", `invalid sslnegotiation value: "requiredirect": must be one of postgres, direct`},
		{"sslnegotiation=Direct sslmode=require", nil, "", `invalid sslnegotiation value: "Direct"`},
		// What pgline cannot do stays refused with direct TLS too.
		{"sslnegotiation=direct sslmode=require gssencmode=require", nil, "", "invalid gssencmode: require is not supported"},
	}
	for _, tt := range tests {
		src, _ := testSource(t, tt.env)
		c, err := Parse(tt.dsn, src, testMaxConns)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Parse(%q) with %v: error %v, want %q", tt.dsn, tt.env, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("Parse(%q) with %v: %v", tt.dsn, tt.env, err)
		case tt.wantErr == "" && c.SSLNegotiation != tt.want:
			t.Errorf("Parse(%q) with %v: SSLNegotiation %q, want %q", tt.dsn, tt.env, c.SSLNegotiation, tt.want)
		}
	}
}

// TestCheckSSLNegotiation: the rule Parse and pgline's connect share.
func TestCheckSSLNegotiation(t *testing.T) {
	for _, tt := range []struct {
		negotiation, mode string
		ok                bool
	}{
		{"", "", true}, {"postgres", "disable", true}, {"postgres", "verify-full", true},
		{"direct", "require", true}, {"direct", "verify-ca", true}, {"direct", "verify-full", true},
		{"direct", "", false}, {"direct", "prefer", false}, {"direct", "allow", false}, {"direct", "disable", false},
		{"requiredirect", "require", false},
	} {
		if got := CheckSSLNegotiation(tt.negotiation, tt.mode); (got == "") != tt.ok {
			t.Errorf("CheckSSLNegotiation(%q, %q) = %q, want ok %v", tt.negotiation, tt.mode, got, tt.ok)
		}
	}
}

// TestParseEnv sets each environment variable alone and checks the field
// it fills.
func TestParseEnv(t *testing.T) {
	tests := []struct {
		env, value string
		check      func(c *Settings) any
		want       any
	}{
		{"PGHOST", "envhost", func(c *Settings) any { return c.Hosts[0].Host }, "envhost"},
		{"PGHOSTADDR", "192.0.2.7", func(c *Settings) any { return c.Hosts[0].HostAddr }, "192.0.2.7"},
		{"PGPORT", "6543", func(c *Settings) any { return c.Hosts[0].Port }, uint16(6543)},
		{"PGDATABASE", "envdb", func(c *Settings) any { return c.Database }, "envdb"},
		{"PGUSER", "envuser", func(c *Settings) any { return c.User + "/" + c.Database }, "envuser/envuser"},
		{"PGPASSWORD", "envpw", func(c *Settings) any { return c.Password + "/" + c.Hosts[0].Password }, "envpw/"},
		{"PGPASSFILE", "/some/pgpass", func(c *Settings) any { return c.PassFile }, "/some/pgpass"},
		{"PGSSLMODE", "verify-ca", func(c *Settings) any { return c.SSLMode }, "verify-ca"},
		{"PGSSLROOTCERT", "/ca.pem", func(c *Settings) any { return c.SSLRootCert }, "/ca.pem"},
		{"PGSSLCERT", "/c.pem", func(c *Settings) any { return c.SSLCert }, "/c.pem"},
		{"PGSSLKEY", "/k.pem", func(c *Settings) any { return c.SSLKey }, "/k.pem"},
		{"PGSSLNEGOTIATION", "postgres", func(c *Settings) any { return c.SSLNegotiation }, "postgres"},
		{"PGAPPNAME", "envapp", func(c *Settings) any { return c.ApplicationName }, "envapp"},
		{"PGCONNECT_TIMEOUT", "7", func(c *Settings) any { return c.ConnectTimeout }, 7 * time.Second},
		{"PGOPTIONS", "-c geqo=off", func(c *Settings) any { return c.Options }, "-c geqo=off"},
		{"PGTARGETSESSIONATTRS", "standby", func(c *Settings) any { return c.TargetSessionAttrs }, "standby"},
		{"PGLOADBALANCEHOSTS", "random", func(c *Settings) any { return c.LoadBalanceHosts }, "random"},
		{"PGCHANNELBINDING", "disable", func(c *Settings) any { return c.ChannelBinding }, "disable"},
		{"PGREQUIREAUTH", "md5", func(c *Settings) any { return c.RequireAuth }, "md5"},
		{"PGSSLSNI", "0", func(c *Settings) any { return c.SSLSNI }, false},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			src, _ := testSource(t, map[string]string{tt.env: tt.value})
			c, err := Parse("", src, testMaxConns)
			if err != nil {
				t.Fatalf("%s=%s: %v", tt.env, tt.value, err)
			}
			if got := tt.check(c); got != tt.want {
				t.Errorf("%s=%s: got %v, want %v", tt.env, tt.value, got, tt.want)
			}
			if tt.env == "PGSSLNEGOTIATION" {
				return // its other value, direct, needs sslmode too (TestParseSSLNegotiation)
			}
			// A DSN value wins over the variable.
			if c2, err := Parse("postgres://dsnuser:dsnpw@dsnhost:1111/dsndb?"+
				"hostaddr=192.0.2.99&passfile=/dsn&sslmode=require&sslrootcert=/dsnca&sslcert=/dsnc&sslkey=/dsnk&"+
				"application_name=dsnapp&connect_timeout=60&options=dsnopt&target_session_attrs=any&"+
				"load_balance_hosts=disable&channel_binding=require&require_auth=password&sslsni=1", src, testMaxConns); err != nil {
				t.Fatalf("with DSN: %v", err)
			} else if got := tt.check(c2); got == tt.want {
				t.Errorf("%s=%s: the environment overrode the DSN (%v)", tt.env, tt.value, got)
			}
		})
	}
}

func TestParseDefaultSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "pgl") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A regular file with a socket's name is not a socket.
	if err := os.WriteFile(filepath.Join(dir, ".s.PGSQL.5433"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()

	src, _ := testSource(t, nil)
	src.SocketDirs = []string{empty, dir}
	for _, tt := range []struct {
		dsn  string
		want []Host
	}{
		{"", []Host{{Host: dir, Port: 5432}}},
		{"port=5433", []Host{{Host: "localhost", Port: 5433}}},
		{"host=a, port=1,5432", []Host{{Host: "a", Port: 1}, {Host: dir, Port: 5432}}},
		{"hostaddr=127.0.0.1", []Host{{HostAddr: "127.0.0.1", Port: 5432}}},
	} {
		c, err := Parse(tt.dsn, src, testMaxConns)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.dsn, err)
		}
		if !reflect.DeepEqual(c.Hosts, tt.want) {
			t.Errorf("Parse(%q).Hosts = %+v, want %+v", tt.dsn, c.Hosts, tt.want)
		}
		if tt.want[0].Host == dir && !c.Hosts[0].IsUnixSocket() {
			t.Errorf("Parse(%q): default host %q is not a Unix socket", tt.dsn, c.Hosts[0].Host)
		}
	}
}

func TestParseDefaultSSLFiles(t *testing.T) {
	src, home := testSource(t, nil)
	dir := filepath.Join(home, ".postgresql")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"root.crt", "postgresql.crt", "postgresql.key"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Parse("", src, testMaxConns)
	if err != nil {
		t.Fatal(err)
	}
	if c.SSLRootCert != filepath.Join(dir, "root.crt") || c.SSLCert != filepath.Join(dir, "postgresql.crt") ||
		c.SSLKey != filepath.Join(dir, "postgresql.key") {
		t.Errorf("default files: rootcert %q cert %q key %q", c.SSLRootCert, c.SSLCert, c.SSLKey)
	}
	c, err = Parse("sslrootcert=/mine.pem sslcert=/c sslkey=/k", src, testMaxConns)
	if err != nil {
		t.Fatal(err)
	}
	if c.SSLRootCert != "/mine.pem" || c.SSLCert != "/c" || c.SSLKey != "/k" {
		t.Errorf("explicit files: rootcert %q cert %q key %q", c.SSLRootCert, c.SSLCert, c.SSLKey)
	}

	// Without the files the fields stay empty (checked by TestParse);
	// a directory of that name is not a file.
	src2, home2 := testSource(t, nil)
	if err := os.MkdirAll(filepath.Join(home2, ".postgresql", "root.crt"), 0o700); err != nil {
		t.Fatal(err)
	}
	if c, err := Parse("", src2, testMaxConns); err != nil || c.SSLRootCert != "" {
		t.Errorf("root.crt directory: SSLRootCert %q, err %v", c.SSLRootCert, err)
	}
}

func TestParseUnknownOSUser(t *testing.T) {
	src, _ := testSource(t, nil)
	src.CurrentUser = func() (*user.User, error) { return nil, errors.New("no such user") }
	if _, err := Parse("host=h", src, testMaxConns); err == nil || !strings.Contains(err.Error(), "no user name given") {
		t.Errorf("without a user: err %v, want a clear error", err)
	}
	c, err := Parse("host=h user=bob", src, testMaxConns)
	if err != nil || c.User != "bob" || c.PassFile != filepath.Join(src.Env("HOME"), ".pgpass") {
		t.Errorf("with user=bob: %+v, %v", c, err)
	}
}

// TestProtocolVersionKeys: min_protocol_version and max_protocol_version
// as libpq 18 has them: 3.0, 3.2 or latest, from the DSN or
// PGMINPROTOCOLVERSION and PGMAXPROTOCOLVERSION; the minimum defaults to
// 3.0, the maximum to 3.0, or to latest when the minimum is above 3.0.
// Bad values and a maximum below the minimum are in TestParseErrors.
func TestProtocolVersionKeys(t *testing.T) {
	tests := []struct {
		dsn      string
		env      map[string]string
		min, max string
	}{
		{"", nil, "3.0", "3.0"},
		{"max_protocol_version=3.2", nil, "3.0", "3.2"},
		{"max_protocol_version=latest", nil, "3.0", "latest"},
		{"max_protocol_version=3.0", nil, "3.0", "3.0"},
		{"min_protocol_version=3.0", nil, "3.0", "3.0"},
		{"min_protocol_version=3.2", nil, "3.2", "latest"},
		{"min_protocol_version=latest", nil, "latest", "latest"},
		{"min_protocol_version=3.2 max_protocol_version=3.2", nil, "3.2", "3.2"},
		{"min_protocol_version=latest max_protocol_version=3.2", nil, "latest", "3.2"},
		{"", map[string]string{"PGMAXPROTOCOLVERSION": "3.2"}, "3.0", "3.2"},
		{"", map[string]string{"PGMINPROTOCOLVERSION": "3.2"}, "3.2", "latest"},
		{"", map[string]string{"PGMINPROTOCOLVERSION": "3.2", "PGMAXPROTOCOLVERSION": "3.2"}, "3.2", "3.2"},
		// The DSN wins over the environment; an empty key takes its default.
		{"max_protocol_version=3.0", map[string]string{"PGMAXPROTOCOLVERSION": "3.2"}, "3.0", "3.0"},
		{"min_protocol_version=''", map[string]string{"PGMINPROTOCOLVERSION": "3.2"}, "3.0", "3.0"},
		{"postgres://h/db?max_protocol_version=latest", nil, "3.0", "latest"},
	}
	for _, tt := range tests {
		src, _ := testSource(t, tt.env)
		s, err := Parse("host=h "+tt.dsn, src, testMaxConns)
		if strings.HasPrefix(tt.dsn, "postgres://") {
			s, err = Parse(tt.dsn, src, testMaxConns)
		}
		if err != nil {
			t.Errorf("%q %v: %v", tt.dsn, tt.env, err)
			continue
		}
		if s.MinProtocolVersion != tt.min || s.MaxProtocolVersion != tt.max {
			t.Errorf("%q %v: min %q, max %q; want %q, %q", tt.dsn, tt.env, s.MinProtocolVersion, s.MaxProtocolVersion, tt.min, tt.max)
		}
	}
}

// TestProtocolRange: the versions the values name, with the defaults,
// and the key at fault when they are wrong (a Config filled in by hand
// reaches the connect with them).
func TestProtocolRange(t *testing.T) {
	const v30, v32 = 3 << 16, 3<<16 | 2
	tests := []struct {
		min, max string
		lo, hi   uint32
		bad      string
	}{
		{"", "", v30, v30, ""},
		{"", "3.2", v30, v32, ""},
		{"", "latest", v30, v32, ""},
		{"3.2", "", v32, v32, ""},
		{"latest", "", v32, v32, ""},
		{"3.0", "3.0", v30, v30, ""},
		{"3.2", "latest", v32, v32, ""},
		{"3.2", "3.0", 0, 0, "max_protocol_version"},
		{"3.1", "", 0, 0, "min_protocol_version"},
		{"", "3.1", 0, 0, "max_protocol_version"},
		{"", "4.0", 0, 0, "max_protocol_version"},
	}
	for _, tt := range tests {
		lo, hi, bad := ProtocolRange(tt.min, tt.max)
		if lo != tt.lo || hi != tt.hi || bad != tt.bad {
			t.Errorf("ProtocolRange(%q, %q) = %#x, %#x, %q; want %#x, %#x, %q", tt.min, tt.max, lo, hi, bad, tt.lo, tt.hi, tt.bad)
		}
	}
}
