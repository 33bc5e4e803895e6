package pgline

import (
	"os/user"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/config"
	pgdsn "github.com/pgline/pgline/internal/dsn"
	"github.com/pgline/pgline/internal/pool"
)

// Package config parses and checks DSNs, and tests that (the DSN forms,
// the environment, the service and password files, every error); these
// tests pin what ParseConfig adds: the Config it makes of the result.

// testSource is an outside world for parseConfig with nothing in the
// environment but HOME and PGSYSCONFDIR, which point into an empty
// directory, and an operating-system user "osuser" at home there.
func testSource(t testing.TB) *pgdsn.Source {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "PGSYSCONFDIR": filepath.Join(home, "etc")}
	return &pgdsn.Source{
		LookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
		CurrentUser: func() (*user.User, error) {
			return &user.User{Username: "osuser", HomeDir: home}, nil
		},
	}
}

// TestParseConfig_EverySettingReachesConfig: configOf puts each field of
// config.Settings into its Config field. The Settings below sets every
// field (checked, so a field added to Settings fails here until the
// test, and configOf, take it in).
func TestParseConfig_EverySettingReachesConfig(t *testing.T) {
	s := &config.Settings{
		Hosts:                  []config.Host{{Host: "h1", HostAddr: "192.0.2.1", Port: 1, Password: "hpw1"}, {Host: "/sock", Port: 2, Password: "hpw2"}},
		User:                   "user",
		Password:               "pw",
		Database:               "db",
		PassFile:               "/passfile",
		ApplicationName:        "app",
		Options:                "-c geqo=off",
		RuntimeParams:          map[string]string{"search_path": "s"},
		ConnectTimeout:         3 * time.Second,
		NoKeepalives:           true,
		KeepalivesIdle:         6 * time.Second,
		KeepalivesInterval:     -1,
		KeepalivesCount:        7,
		TCPUserTimeout:         1500 * time.Millisecond,
		SSLMode:                "verify-full",
		SSLRootCert:            "/ca",
		SSLCert:                "/cert",
		SSLKey:                 "/key",
		SSLPassword:            "sslpw",
		SSLNegotiation:         "postgres",
		SSLSNI:                 true,
		SSLMinProtocolVersion:  "TLSv1.2",
		SSLMaxProtocolVersion:  "TLSv1.3",
		MinProtocolVersion:     "3.2",
		MaxProtocolVersion:     "latest",
		ChannelBinding:         "require",
		RequireAuth:            "scram-sha-256",
		TargetSessionAttrs:     "read-write",
		LoadBalanceHosts:       "random",
		ReadBufferSize:         8192,
		MaxMessageSize:         1 << 20,
		StatementCacheMode:     "describe",
		StatementCacheCapacity: 10,
		PipelineSyncEach:       true,
		CancelTimeout:          4 * time.Second,
		CancelGrace:            5 * time.Millisecond,
		Pool: config.Pool{MaxConns: 8, MinConns: 2, MaxConnLifetime: time.Hour, MaxConnIdleTime: time.Minute,
			HealthCheckPeriod: time.Second, MaxPipeline: 16, IdleCheck: -1, MaxReplicaLag: 6 * time.Second},
	}
	for _, v := range []reflect.Value{reflect.ValueOf(*s), reflect.ValueOf(s.Hosts[0]), reflect.ValueOf(s.Pool)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("the test's %s leaves %s zero: set it, and check that configOf copies it", v.Type(), v.Type().Field(i).Name)
			}
		}
	}
	want := &Config{
		Hosts:                 []HostConfig{{Host: "h1", HostAddr: "192.0.2.1", Port: 1, Password: "hpw1"}, {Host: "/sock", Port: 2, Password: "hpw2"}},
		User:                  "user",
		Password:              "pw",
		Database:              "db",
		PassFile:              "/passfile",
		ApplicationName:       "app",
		Options:               "-c geqo=off",
		RuntimeParams:         map[string]string{"search_path": "s"},
		ConnectTimeout:        3 * time.Second,
		NoKeepalives:          true,
		KeepalivesIdle:        6 * time.Second,
		KeepalivesInterval:    -1,
		KeepalivesCount:       7,
		TCPUserTimeout:        1500 * time.Millisecond,
		SSLMode:               "verify-full",
		SSLRootCert:           "/ca",
		SSLCert:               "/cert",
		SSLKey:                "/key",
		SSLPassword:           "sslpw",
		SSLNegotiation:        "postgres",
		SSLSNI:                true,
		SSLMinProtocolVersion: "TLSv1.2",
		SSLMaxProtocolVersion: "TLSv1.3",
		MinProtocolVersion:    "3.2",
		MaxProtocolVersion:    "latest",
		ChannelBinding:        "require",
		RequireAuth:           "scram-sha-256",
		TargetSessionAttrs:    "read-write",
		LoadBalanceHosts:      "random",
		ReadBufferSize:        8192,
		MaxMessageSize:        1 << 20,
		CancelTimeout:         4 * time.Second,
		CancelGrace:           5 * time.Millisecond,
		Pool: PoolConfig{MaxConns: 8, MinConns: 2, MaxConnLifetime: time.Hour, MaxConnIdleTime: time.Minute,
			HealthCheckPeriod: time.Second, MaxPipeline: 16, IdleCheck: -1, MaxReplicaLag: 6 * time.Second},
		cacheMode:     session.CacheDescribe,
		cacheCapacity: 10,
		syncEach:      true,
	}
	if got := configOf(s); !reflect.DeepEqual(got, want) {
		t.Errorf("configOf\n got %+v\nwant %+v", got, want)
	}
	if !configOf(s).Hosts[1].IsUnixSocket() || configOf(s).Hosts[0].IsUnixSocket() {
		t.Error("HostConfig.IsUnixSocket does not follow config.Host's")
	}
}

// TestParseConfig_DefaultsReachConfig: the Config of an empty DSN holds
// Settings' defaults, in the form the connection reads (the statement
// cache's mode "auto" is cacheAuto, its capacity the cache's default).
func TestParseConfig_DefaultsReachConfig(t *testing.T) {
	c, err := parseConfig("", testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.cacheMode != session.CacheAuto || c.cacheCapacity != config.DefaultCacheCapacity || c.syncEach ||
		c.SSLMode != "prefer" || c.User != "osuser" || len(c.Hosts) != 1 || c.RuntimeParams == nil {
		t.Errorf("parseConfig(\"\") = %+v", c)
	}
}

func TestPglineSettings(t *testing.T) {
	src := testSource(t)
	c, err := parseConfig("postgres://h/db?pool_max_conns=8&statement_cache_capacity=0&search_path=x&pool_max_conn_lifetime=0&pool_max_conn_idle_time=0s&pool_health_check_period=0&pool_idle_check=0&pool_max_replica_lag=1500ms", src)
	if err != nil {
		t.Fatal(err)
	}
	if c.cacheMode != session.CacheNone {
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
	// A bad value of an enumerated key is shown as libpq shows it, with
	// the variable it came from.
	t.Setenv("PGSSLMODE", "nope")
	if _, err := ParseConfig(""); err == nil || !strings.Contains(err.Error(), `invalid sslmode value: "nope" (from PGSSLMODE): must be one of disable, allow,`) {
		t.Errorf("ParseConfig with PGSSLMODE=nope: %v", err)
	}
}
