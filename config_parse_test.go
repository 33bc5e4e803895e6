package pgline

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
	"github.com/pgline/pgline/internal/pool"
)

// testSource is a configSource with only env in the environment, an
// operating-system user "osuser" and an empty home directory, which it
// returns. HOME and PGSYSCONFDIR point into that directory unless env sets
// them.
func testSource(t testing.TB, env map[string]string) (*configSource, string) {
	t.Helper()
	home := t.TempDir()
	full := map[string]string{"HOME": home, "PGSYSCONFDIR": filepath.Join(home, "etc")}
	for k, v := range env {
		full[k] = v
	}
	return &configSource{dsn.Source{
		LookupEnv: func(k string) (string, bool) {
			v, ok := full[k]
			return v, ok
		},
		CurrentUser: func() (*user.User, error) {
			return &user.User{Username: "osuser", HomeDir: home}, nil
		},
	}}, home
}

// defaultConfig is what ParseConfig("") gives with testSource.
func defaultConfig(home string) *Config {
	return &Config{
		Hosts:                 []HostConfig{{Host: "localhost", Port: 5432}},
		User:                  "osuser",
		Database:              "osuser",
		PassFile:              filepath.Join(home, ".pgpass"),
		RuntimeParams:         map[string]string{},
		SSLMode:               "prefer",
		SSLNegotiation:        "postgres",
		SSLSNI:                true,
		ChannelBinding:        "prefer",
		TargetSessionAttrs:    "any",
		LoadBalanceHosts:      "disable",
		ReadBufferSize:        64 << 10,
		MaxMessageSize:        1 << 30,
		SSLMinProtocolVersion: "TLSv1.2",
		cacheMode:             cacheAuto,
		cacheCapacity:         defaultCacheCapacity,
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		dsn  string
		env  map[string]string
		want func(c *Config)
	}{
		{"empty", "", nil, func(c *Config) {}},
		{"key=value", "host=db1 port=5433 dbname=app user=bob password=pw application_name='my app'",
			nil, func(c *Config) {
				c.Hosts = []HostConfig{{Host: "db1", Port: 5433}}
				c.Database, c.User, c.Password, c.ApplicationName = "app", "bob", "pw", "my app"
			}},
		{"URL", "postgres://bob:p%40ss@db1:5433/app?sslmode=require&connect_timeout=10",
			nil, func(c *Config) {
				c.Hosts = []HostConfig{{Host: "db1", Port: 5433}}
				c.Database, c.User, c.Password = "app", "bob", "p@ss"
				c.SSLMode, c.ConnectTimeout = "require", 10*time.Second
			}},
		{"URL IPv6", "postgresql://[::1]:6000/db", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "::1", Port: 6000}}
			c.Database = "db"
		}},
		{"URL socket dir", "postgres://%2Fvar%2Frun%2Fpostgresql/db", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "/var/run/postgresql", Port: 5432}}
			c.Database = "db"
		}},
		{"URL host param", "postgres:///db?host=/tmp/sock&port=7", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "/tmp/sock", Port: 7}}
			c.Database = "db"
		}},
		{"key=value socket dir", "host=/var/run/postgresql", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "/var/run/postgresql", Port: 5432}}
		}},
		{"host list one port", "host=a,b,/tmp port=5433", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "a", Port: 5433}, {Host: "b", Port: 5433}, {Host: "/tmp", Port: 5433}}
		}},
		{"host list port list", "host=a,b,/tmp port=5432,5433,5434", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "a", Port: 5432}, {Host: "b", Port: 5433}, {Host: "/tmp", Port: 5434}}
		}},
		{"host list empty entries", "host=a,,c port=1,,3", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "a", Port: 1}, {Host: "localhost", Port: 5432}, {Host: "c", Port: 3}}
		}},
		{"URL host list", "postgres://a:1,[::1],c:3/db", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "a", Port: 1}, {Host: "::1", Port: 5432}, {Host: "c", Port: 3}}
			c.Database = "db"
		}},
		{"password for every host, none looked up", "host=a,b password=pw", nil, func(c *Config) {
			c.Password = "pw"
			c.Hosts = []HostConfig{{Host: "a", Port: 5432}, {Host: "b", Port: 5432}}
		}},
		{"hostaddr", "host=db.example.com hostaddr=192.0.2.1", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "db.example.com", HostAddr: "192.0.2.1", Port: 5432}}
		}},
		{"hostaddr only", "hostaddr=192.0.2.1,2001:db8::1 port=1,2", nil, func(c *Config) {
			c.Hosts = []HostConfig{{HostAddr: "192.0.2.1", Port: 1}, {HostAddr: "2001:db8::1", Port: 2}}
		}},
		{"hostaddr list with empty entry", "host=a,b hostaddr=192.0.2.1,", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "a", HostAddr: "192.0.2.1", Port: 5432}, {Host: "b", Port: 5432}}
		}},
		{"runtime params", "search_path=app,public DateStyle='ISO, MDY' keepalives=1 gssencmode=disable", nil, func(c *Config) {
			c.RuntimeParams = map[string]string{"search_path": "app,public", "DateStyle": "ISO, MDY"}
		}},
		{"URL runtime params", "postgres://h?search_path=s&work_mem=64MB", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "h", Port: 5432}}
			c.RuntimeParams = map[string]string{"search_path": "s", "work_mem": "64MB"}
		}},
		{"pgline keys", "statement_cache_mode=describe statement_cache_capacity=10 pipeline_sync=each pool_max_conns=8 pool_min_conns=2 " +
			"pool_max_conn_lifetime=1h pool_max_conn_idle_time=30s pool_health_check_period=1m pool_max_pipeline=64 " +
			"read_buffer_size=8192 max_message_size=1048576 cancel_timeout=3s cancel_grace=250ms", nil, func(c *Config) {
			c.cacheMode, c.cacheCapacity, c.syncEach = cacheDescribe, 10, true
			c.CancelTimeout, c.CancelGrace = 3*time.Second, 250*time.Millisecond
			c.Pool = PoolConfig{MaxConns: 8, MinConns: 2, MaxConnLifetime: time.Hour, MaxConnIdleTime: 30 * time.Second,
				HealthCheckPeriod: time.Minute, MaxPipeline: 64}
			c.ReadBufferSize, c.MaxMessageSize = 8192, 1<<20
		}},
		{"fallback_application_name", "fallback_application_name=fb", nil, func(c *Config) {
			c.ApplicationName = "fb"
		}},
		{"application_name wins over fallback", "fallback_application_name=fb application_name=app", nil, func(c *Config) {
			c.ApplicationName = "app"
		}},
		{"options", "options='-c geqo=off'", nil, func(c *Config) { c.Options = "-c geqo=off" }},
		{"tls keys", "sslmode=verify-full sslrootcert=/ca.pem sslcert=/c.pem sslkey=/k.pem sslpassword=x sslsni=0 sslnegotiation=postgres",
			nil, func(c *Config) {
				c.SSLMode, c.SSLRootCert, c.SSLCert, c.SSLKey, c.SSLPassword = "verify-full", "/ca.pem", "/c.pem", "/k.pem", "x"
				c.SSLSNI = false
			}},
		{"sslrootcert=system defaults to verify-full", "sslrootcert=system", nil, func(c *Config) {
			c.SSLRootCert, c.SSLMode = "system", "verify-full"
		}},
		{"session keys", "channel_binding=require require_auth=scram-sha-256 target_session_attrs=read-write load_balance_hosts=random",
			nil, func(c *Config) {
				c.ChannelBinding, c.RequireAuth, c.TargetSessionAttrs, c.LoadBalanceHosts = "require", "scram-sha-256", "read-write", "random"
			}},
		{"require_auth negated list", "require_auth=!md5,!password", nil, func(c *Config) { c.RequireAuth = "!md5,!password" }},
		{"connect_timeout 1 means 2", "connect_timeout=1", nil, func(c *Config) { c.ConnectTimeout = 2 * time.Second }},
		{"connect_timeout 0 means none", "connect_timeout=0", nil, func(c *Config) {}},
		{"connect_timeout negative means none", "connect_timeout=-5", nil, func(c *Config) {}},
		{"connect_timeout with spaces", "connect_timeout=' 30 '", nil, func(c *Config) { c.ConnectTimeout = 30 * time.Second }},
		{"last duplicate wins", "port=1 port=2", nil, func(c *Config) { c.Hosts[0].Port = 2 }},
		{"empty values take defaults", "host='' port='' sslmode='' user='' dbname='' connect_timeout=", nil, func(c *Config) {}},
		{"dbname defaults to user", "user=bob", nil, func(c *Config) { c.User, c.Database = "bob", "bob" }},
		{"passfile", "passfile=/nonexistent/pgpass", nil, func(c *Config) { c.PassFile = "/nonexistent/pgpass" }},
		{"ssl=true in URL", "postgres://h?ssl=true", nil, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "h", Port: 5432}}
			c.SSLMode = "require"
		}},
		{"hosts from PGHOST", "", map[string]string{"PGHOST": "a,b", "PGPORT": "1,2"}, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "a", Port: 1}, {Host: "b", Port: 2}}
		}},
		{"PGPORT applies to URL hosts without ports", "postgres://a,b/db", map[string]string{"PGPORT": "6000"}, func(c *Config) {
			c.Hosts = []HostConfig{{Host: "a", Port: 6000}, {Host: "b", Port: 6000}}
			c.Database = "db"
		}},
		{"DSN overrides environment", "host=dsnhost port=1 user=dsnuser sslmode=disable",
			map[string]string{"PGHOST": "envhost", "PGPORT": "2", "PGUSER": "envuser", "PGSSLMODE": "require", "PGDATABASE": "envdb"},
			func(c *Config) {
				c.Hosts = []HostConfig{{Host: "dsnhost", Port: 1}}
				c.User, c.Database, c.SSLMode = "dsnuser", "envdb", "disable"
			}},
		{"empty DSN value blocks the environment", "host=''", map[string]string{"PGHOST": "envhost"}, func(c *Config) {}},
		{"empty environment variable is unset", "", map[string]string{"PGHOST": "", "PGSSLMODE": ""}, func(c *Config) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, home := testSource(t, tt.env)
			got, err := parseConfig(tt.dsn, src)
			if err != nil {
				t.Fatalf("parseConfig(%q): %v", tt.dsn, err)
			}
			want := defaultConfig(home)
			tt.want(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parseConfig(%q)\n got %+v\nwant %+v", tt.dsn, got, want)
			}
		})
	}
}

// TestParseConfigEnv sets each environment variable alone and checks the
// field it fills.
func TestParseConfigEnv(t *testing.T) {
	tests := []struct {
		env, value string
		check      func(c *Config) any
		want       any
	}{
		{"PGHOST", "envhost", func(c *Config) any { return c.Hosts[0].Host }, "envhost"},
		{"PGHOSTADDR", "192.0.2.7", func(c *Config) any { return c.Hosts[0].HostAddr }, "192.0.2.7"},
		{"PGPORT", "6543", func(c *Config) any { return c.Hosts[0].Port }, uint16(6543)},
		{"PGDATABASE", "envdb", func(c *Config) any { return c.Database }, "envdb"},
		{"PGUSER", "envuser", func(c *Config) any { return c.User + "/" + c.Database }, "envuser/envuser"},
		{"PGPASSWORD", "envpw", func(c *Config) any { return c.Password + "/" + c.Hosts[0].Password }, "envpw/"},
		{"PGPASSFILE", "/some/pgpass", func(c *Config) any { return c.PassFile }, "/some/pgpass"},
		{"PGSSLMODE", "verify-ca", func(c *Config) any { return c.SSLMode }, "verify-ca"},
		{"PGSSLROOTCERT", "/ca.pem", func(c *Config) any { return c.SSLRootCert }, "/ca.pem"},
		{"PGSSLCERT", "/c.pem", func(c *Config) any { return c.SSLCert }, "/c.pem"},
		{"PGSSLKEY", "/k.pem", func(c *Config) any { return c.SSLKey }, "/k.pem"},
		{"PGSSLNEGOTIATION", "postgres", func(c *Config) any { return c.SSLNegotiation }, "postgres"},
		{"PGAPPNAME", "envapp", func(c *Config) any { return c.ApplicationName }, "envapp"},
		{"PGCONNECT_TIMEOUT", "7", func(c *Config) any { return c.ConnectTimeout }, 7 * time.Second},
		{"PGOPTIONS", "-c geqo=off", func(c *Config) any { return c.Options }, "-c geqo=off"},
		{"PGTARGETSESSIONATTRS", "standby", func(c *Config) any { return c.TargetSessionAttrs }, "standby"},
		{"PGLOADBALANCEHOSTS", "random", func(c *Config) any { return c.LoadBalanceHosts }, "random"},
		{"PGCHANNELBINDING", "disable", func(c *Config) any { return c.ChannelBinding }, "disable"},
		{"PGREQUIREAUTH", "md5", func(c *Config) any { return c.RequireAuth }, "md5"},
		{"PGSSLSNI", "0", func(c *Config) any { return c.SSLSNI }, false},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			src, _ := testSource(t, map[string]string{tt.env: tt.value})
			c, err := parseConfig("", src)
			if err != nil {
				t.Fatalf("%s=%s: %v", tt.env, tt.value, err)
			}
			if got := tt.check(c); got != tt.want {
				t.Errorf("%s=%s: got %v, want %v", tt.env, tt.value, got, tt.want)
			}
			if tt.env == "PGSSLNEGOTIATION" {
				return // its only valid value is the default
			}
			// A DSN value wins over the variable.
			if c2, err := parseConfig("postgres://dsnuser:dsnpw@dsnhost:1111/dsndb?"+
				"hostaddr=192.0.2.99&passfile=/dsn&sslmode=require&sslrootcert=/dsnca&sslcert=/dsnc&sslkey=/dsnk&"+
				"application_name=dsnapp&connect_timeout=60&options=dsnopt&target_session_attrs=any&"+
				"load_balance_hosts=disable&channel_binding=require&require_auth=password&sslsni=1", src); err != nil {
				t.Fatalf("with DSN: %v", err)
			} else if got := tt.check(c2); got == tt.want {
				t.Errorf("%s=%s: the environment overrode the DSN (%v)", tt.env, tt.value, got)
			}
		})
	}
}

func TestParseConfigDefaultSocket(t *testing.T) {
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
		want []HostConfig
	}{
		{"", []HostConfig{{Host: dir, Port: 5432}}},
		{"port=5433", []HostConfig{{Host: "localhost", Port: 5433}}},
		{"host=a, port=1,5432", []HostConfig{{Host: "a", Port: 1}, {Host: dir, Port: 5432}}},
		{"hostaddr=127.0.0.1", []HostConfig{{HostAddr: "127.0.0.1", Port: 5432}}},
	} {
		c, err := parseConfig(tt.dsn, src)
		if err != nil {
			t.Fatalf("parseConfig(%q): %v", tt.dsn, err)
		}
		if !reflect.DeepEqual(c.Hosts, tt.want) {
			t.Errorf("parseConfig(%q).Hosts = %+v, want %+v", tt.dsn, c.Hosts, tt.want)
		}
		if tt.want[0].Host == dir && !c.Hosts[0].IsUnixSocket() {
			t.Errorf("parseConfig(%q): default host %q is not a Unix socket", tt.dsn, c.Hosts[0].Host)
		}
	}
}

func TestParseConfigDefaultSSLFiles(t *testing.T) {
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
	c, err := parseConfig("", src)
	if err != nil {
		t.Fatal(err)
	}
	if c.SSLRootCert != filepath.Join(dir, "root.crt") || c.SSLCert != filepath.Join(dir, "postgresql.crt") ||
		c.SSLKey != filepath.Join(dir, "postgresql.key") {
		t.Errorf("default files: rootcert %q cert %q key %q", c.SSLRootCert, c.SSLCert, c.SSLKey)
	}
	c, err = parseConfig("sslrootcert=/mine.pem sslcert=/c sslkey=/k", src)
	if err != nil {
		t.Fatal(err)
	}
	if c.SSLRootCert != "/mine.pem" || c.SSLCert != "/c" || c.SSLKey != "/k" {
		t.Errorf("explicit files: rootcert %q cert %q key %q", c.SSLRootCert, c.SSLCert, c.SSLKey)
	}

	// Without the files the fields stay empty (checked by TestParseConfig);
	// a directory of that name is not a file.
	src2, home2 := testSource(t, nil)
	if err := os.MkdirAll(filepath.Join(home2, ".postgresql", "root.crt"), 0o700); err != nil {
		t.Fatal(err)
	}
	if c, err := parseConfig("", src2); err != nil || c.SSLRootCert != "" {
		t.Errorf("root.crt directory: SSLRootCert %q, err %v", c.SSLRootCert, err)
	}
}

func TestParseConfigUnknownOSUser(t *testing.T) {
	src, _ := testSource(t, nil)
	src.CurrentUser = func() (*user.User, error) { return nil, errors.New("no such user") }
	if _, err := parseConfig("host=h", src); err == nil || !strings.Contains(err.Error(), "no user name given") {
		t.Errorf("without a user: err %v, want a clear error", err)
	}
	c, err := parseConfig("host=h user=bob", src)
	if err != nil || c.User != "bob" || c.PassFile != filepath.Join(src.Env("HOME"), ".pgpass") {
		t.Errorf("with user=bob: %+v, %v", c, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		dsn  string
		env  map[string]string
		want string
	}{
		{"host", nil, `missing "="`},
		{"port=0", nil, "invalid port: must be a number from 1 to 65535"},
		{"port=65536", nil, "invalid port"},
		{"port=abc", nil, "invalid port"},
		{"port=-1", nil, "invalid port"},
		{"", map[string]string{"PGPORT": "x"}, "invalid port (from PGPORT)"},
		{"host=a,b,c port=1,2", nil, "2 ports for 3 hosts"},
		{"postgres://a:1,b:2,c:3?port=1,2", nil, "2 ports for 3 hosts"},
		{"host=a,b hostaddr=192.0.2.1", nil, "2 host names but 1 hostaddr values"},
		{"hostaddr=db.example.com", nil, "invalid hostaddr: must be a numeric IPv4 or IPv6 address"},
		{"connect_timeout=abc", nil, "invalid connect_timeout"},
		{"connect_timeout=1.5", nil, "invalid connect_timeout"},
		{"connect_timeout=99999999999999999999", nil, "invalid connect_timeout"},
		{"sslmode=bogus", nil, "invalid sslmode: must be one of disable, allow, prefer, require, verify-ca, verify-full"},
		{"", map[string]string{"PGSSLMODE": "bogus"}, "invalid sslmode (from PGSSLMODE)"},
		{"sslrootcert=system sslmode=require", nil, "sslrootcert=system requires sslmode verify-full"},
		{"sslrootcert=system", map[string]string{"PGSSLMODE": "verify-ca"}, "sslrootcert=system requires sslmode verify-full"},
		{"sslnegotiation=direct", nil, "direct TLS negotiation is not supported"},
		{"sslnegotiation=bogus", nil, "invalid sslnegotiation"},
		{"sslsni=maybe", nil, "invalid sslsni"},
		{"channel_binding=always", nil, "invalid channel_binding"},
		{"target_session_attrs=master", nil, "invalid target_session_attrs"},
		{"load_balance_hosts=yes", nil, "invalid load_balance_hosts"},
		{"require_auth=kerberos", nil, "invalid require_auth: methods must be among"},
		{"require_auth=md5,!password", nil, "cannot be mixed"},
		{"require_auth=!md5,password", nil, "cannot be mixed"},
		{"require_auth=md5,md5", nil, "more than once"},
		{"require_auth=md5,", nil, "methods must be among"},
		{"statement_cache_mode=always", nil, "invalid statement_cache_mode"},
		{"pipeline_sync=sometimes", nil, "invalid pipeline_sync"},
		{"cancel_timeout=10", nil, "invalid cancel_timeout"},
		{"cancel_grace=-1ms", nil, "invalid cancel_grace"},
		{"statement_cache_capacity=-1", nil, "invalid statement_cache_capacity"},
		{"pool_max_conns=0", nil, "invalid pool_max_conns"},
		{"pool_min_conns=x", nil, "invalid pool_min_conns"},
		{"pool_max_conns=2 pool_min_conns=3", nil, "must not exceed pool_max_conns"},
		{"pool_max_conn_lifetime=10", nil, "invalid pool_max_conn_lifetime"},
		{"pool_max_conn_idle_time=-1s", nil, "invalid pool_max_conn_idle_time"},
		{"pool_health_check_period=soon", nil, "invalid pool_health_check_period"},
		{"pool_max_pipeline=0", nil, "invalid pool_max_pipeline"},
		{"read_buffer_size=10", nil, "invalid read_buffer_size"},
		// Checks pgline cannot make are refused, not ignored (libpq would
		// refuse to connect where pgline would).
		{"gssencmode=require", nil, "invalid gssencmode: require is not supported"},
		{"gssencmode=maybe", nil, "invalid gssencmode"},
		{"requirepeer=postgres", nil, "invalid requirepeer"},
		{"sslcrl=/crl.pem", nil, "invalid sslcrl"},
		{"sslcrldir=/crls", nil, "invalid sslcrldir"},
		{"sslcertmode=require", nil, "invalid sslcertmode"},
		{"ssl_min_protocol_version=SSLv3", nil, "invalid ssl_min_protocol_version"},
		{"ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=TLSv1.2", nil, "must not be below"},
		{"min_protocol_version=3.2", nil, "invalid min_protocol_version: pgline speaks protocol version 3.0 only"},
		{"", map[string]string{"PGMINPROTOCOLVERSION": "3.2"}, "invalid min_protocol_version (from PGMINPROTOCOLVERSION)"},
		{"min_protocol_version=3.1", nil, "invalid min_protocol_version: must be one of"},
		{"max_protocol_version=4.0", nil, "invalid max_protocol_version: must be one of"},
		{"", map[string]string{"PGREQUIREPEER": "postgres"}, "invalid requirepeer"},
		{"max_message_size=4294967296", nil, "invalid max_message_size"},
		{"database=x", nil, `unknown key "database"`},
		{"_pq_.x=1", nil, "protocol options"},
		{"application_name='a\x00b'", nil, "invalid application_name: contains a NUL byte"},
		{"search_path='a\x00b'", nil, "runtime parameter contains a NUL byte"},
		{"'a\x00b'=1", nil, "parameter name contains a NUL byte"},
		{"postgres://h?x=%zz", nil, "invalid percent-encoding"},
		{"service=nope", nil, "service named by service or PGSERVICE is not defined"},
	}
	for _, tt := range tests {
		src, _ := testSource(t, tt.env)
		c, err := parseConfig(tt.dsn, src)
		if err == nil {
			t.Errorf("parseConfig(%q) = %+v, want error %q", tt.dsn, c, tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), errParsePrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) error %q, want it to contain %q", tt.dsn, err, tt.want)
		}
	}
}

// secret is the password planted in malformed DSNs.
const secret = "S3cr3tPw-xyzzy"

func TestParseConfigErrorsHidePassword(t *testing.T) {
	dsns := []string{
		"password=" + secret + " port=x",
		"password='" + secret,
		"password='" + secret + `\'`,
		"password=" + secret + " bogus",
		"password " + secret,
		secret,
		secret + " host=a",
		"host=a " + secret,
		"host=a " + secret + "=1 port=x",
		"'" + secret,
		"=" + secret,
		"sslmode=" + secret,
		"port=" + secret,
		"hostaddr=" + secret,
		"connect_timeout=" + secret,
		"require_auth=" + secret,
		"host=a,b port=1,2,3 password=" + secret,
		"postgres://user:" + secret + "@host:badport/db",
		"postgres://user:" + secret + "/db",          // no "@": the password looks like a port
		"postgres://user:" + secret + "%zz@host/db",  // bad percent-encoding in the password
		"postgres://user:" + secret + "%@host/db",    // truncated percent-encoding
		"postgres://user:" + secret + "%00@host/db",  // NUL
		"postgres://user:" + secret + "@[::1/db",     // bad IPv6 after the password
		"postgres://user:" + secret + "@host/db?x",   // bad query
		"postgres://user:" + secret + "@host/db%zz",  // bad database
		"postgres://user:" + secret + "@h?sslmode=x", // bad value
		"postgres://h?password=" + secret + "%zz",
		"postgres://h?password=" + secret + "=x",
		"postgres://h?" + secret,
		"postgres://h?" + secret + "%zz=1",
		"postgres://[" + secret,
		"postgres://" + secret + "%",
		"postgres://h:" + secret,
		"postgres://h/" + secret + "?" + secret + "&",
		"postgres://h?sslrootcert=system&sslmode=require&password=" + secret,
	}
	for _, dsn := range dsns {
		src, _ := testSource(t, map[string]string{"PGPASSWORD": secret})
		_, err := parseConfig(dsn, src)
		if err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", dsn)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:6]) {
			t.Errorf("parseConfig(%q) error shows the password: %v", dsn, err)
		}
	}
}

// FuzzParseConfig checks that ParseConfig never panics, that what it
// accepts is usable, and that its errors never show the planted password.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"", "host=a,b,/tmp port=5432,5433,5434 password=SECRETpw",
		"postgres://u:SECRETpw@h1:1,[::1]:2/db?sslmode=require&search_path=x",
		"postgres://u:SECRETpw%zz@h/db", "password='SECRETpw", "password=SECRETpw port=x",
		"hostaddr=192.0.2.1,::1 host=a,b password=SECRETpw", "postgres://%2Ftmp/db?password=SECRETpw",
		"sslrootcert=system sslmode=require password=SECRETpw", "connect_timeout=1 require_auth=!md5",
		"service=x password=SECRETpw", "pool_max_conns=3 statement_cache_mode=none",
		"postgres://h?ssl=true&password=SECRETpw&port=0",
	} {
		f.Add(s)
	}
	home := f.TempDir()
	env := map[string]string{"HOME": home, "PGSYSCONFDIR": home}
	src := &configSource{dsn.Source{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		CurrentUser: func() (*user.User, error) {
			return &user.User{Username: "osuser", HomeDir: home}, nil
		},
	}}
	f.Fuzz(func(t *testing.T, dsn string) {
		c, err := parseConfig(dsn, src)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, errParsePrefix) {
				t.Fatalf("error without prefix: %v", err)
			}
			if strings.Contains(dsn, "SECRET") && strings.Contains(msg, "SECRET") {
				t.Fatalf("error shows the password: %v", err)
			}
			return
		}
		if len(c.Hosts) == 0 {
			t.Fatalf("%q: no hosts", dsn)
		}
		for _, h := range c.Hosts {
			if h.Port == 0 || h.Host == "" && h.HostAddr == "" {
				t.Fatalf("%q: bad host %+v", dsn, h)
			}
			if c.Password != "" && h.Password != "" {
				t.Fatalf("%q: host password %q looked up although the DSN gives one", dsn, h.Password)
			}
		}
		if c.User == "" || c.Database == "" || c.SSLMode == "" || c.ReadBufferSize <= 0 || c.MaxMessageSize <= 0 {
			t.Fatalf("%q: missing defaults: %+v", dsn, c)
		}
		for k, v := range c.RuntimeParams {
			if k == "" || isKnownKey(k) || strings.Contains(k+v, "\x00") {
				t.Fatalf("%q: bad runtime parameter %q=%q", dsn, k, v)
			}
		}
	})
}

func TestPglineSettings(t *testing.T) {
	src, _ := testSource(t, nil)
	c, err := parseConfig("postgres://h/db?pool_max_conns=8&statement_cache_capacity=0&search_path=x&pool_max_conn_lifetime=0&pool_max_conn_idle_time=0s&pool_health_check_period=0&pool_idle_check=0&pool_max_replica_lag=1500ms", src)
	if err != nil {
		t.Fatal(err)
	}
	if c.cacheMode != cacheNone {
		t.Errorf("statement_cache_capacity=0 gave mode %q, want none", c.cacheMode)
	}
	if c.Pool.MaxReplicaLag != 1500*time.Millisecond {
		t.Errorf("pool_max_replica_lag=1500ms gave %v", c.Pool.MaxReplicaLag)
	}
	if c.Pool.MaxConnLifetime != -1 || c.Pool.IdleCheck != -1 {
		t.Errorf("a limit of 0 in the DSN: %+v, want -1 (off)", c.Pool)
	}
	pc := c.Pool.settings()
	want := pool.Settings{MaxConns: 8, MaxLifetime: pool.NoLimit, MaxIdle: pool.NoLimit, HealthPeriod: time.Minute, MaxPipeline: 64, IdleCheck: pool.NoLimit}
	if pc != want {
		t.Errorf("pool settings %+v, want %+v", pc, want)
	}
	if _, ok := c.RuntimeParams["pool_max_conns"]; ok {
		t.Error("pool_max_conns was made a runtime parameter")
	}
	if c.RuntimeParams["search_path"] != "x" {
		t.Errorf("runtime parameters %v", c.RuntimeParams)
	}
	// Defaults, for a Config ParseConfig did not make too.
	def := (&Config{}).Pool.settings()
	if def.MaxConns < 4 || def.MaxLifetime != time.Hour || def.MaxIdle != 30*time.Minute || def.MaxPipeline != 64 {
		t.Errorf("default pool settings %+v", def)
	}
}

// TestParseConfigProcessEnv checks that ParseConfig reads the real
// environment.
func TestParseConfigProcessEnv(t *testing.T) {
	t.Setenv("PGAPPNAME", "from-process-env")
	t.Setenv("PGSSLMODE", "disable")
	t.Setenv("PGUSER", "envuser")
	c, err := ParseConfig("host=h application_name=''")
	if err != nil {
		t.Fatal(err)
	}
	if c.ApplicationName != "" || c.SSLMode != "disable" || c.User != "envuser" || c.Hosts[0].Host != "h" {
		t.Errorf("ParseConfig = %+v", c)
	}
	c, err = ParseConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if c.ApplicationName != "from-process-env" {
		t.Errorf("ApplicationName = %q, want the value of PGAPPNAME", c.ApplicationName)
	}
	if _, err := ParseConfig("sslmode=nope"); err == nil {
		t.Error("ParseConfig accepted sslmode=nope")
	}
}

// TestProtocolVersionKeys: the protocol versions pgline can honour (3.0,
// the latest it speaks) are accepted; a minimum of 3.2 is refused above
// (TestParseConfigErrors' table).
func TestProtocolVersionKeys(t *testing.T) {
	for _, dsn := range []string{"min_protocol_version=3.0", "min_protocol_version=latest", "max_protocol_version=3.2", "max_protocol_version=3.0 min_protocol_version=3.0"} {
		src, _ := testSource(t, nil)
		if _, err := parseConfig("host=h "+dsn, src); err != nil {
			t.Errorf("%s: %v", dsn, err)
		}
	}
}
