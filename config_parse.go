package pgline

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Defaults that ParseConfig applies.
const (
	defaultPort           = 5432
	defaultReadBufferSize = 64 << 10
	defaultMaxMessageSize = 1 << 30
)

// ParseConfig parses a DSN in URL form (postgres:// or postgresql://) or
// key=value form (which may be empty), and applies libpq's defaults and
// PG* environment variables for everything the DSN does not set. The
// precedence is: the DSN, then the service file entry named by service or
// PGSERVICE, then the environment, then the defaults. A key set to an empty
// value in the DSN takes its default and is not looked up in the
// environment.
//
// Keys are libpq's (host, hostaddr, port, dbname, user, password, passfile,
// connect_timeout, application_name, fallback_application_name, options,
// sslmode, sslrootcert, sslcert, sslkey, sslpassword, sslnegotiation,
// sslsni, sslcertmode, ssl_min_protocol_version, ssl_max_protocol_version,
// channel_binding, require_auth, target_session_attrs,
// load_balance_hosts, service) and pgline's own: read_buffer_size,
// max_message_size, statement_cache_capacity, statement_cache_mode (auto, prepare,
// describe or none: see the package docs),
// pipeline_sync (shared, the default, or each: see Conn), cancel_timeout
// and cancel_grace (durations: see Config.CancelTimeout) and the pool_*
// keys read by NewPool. Other libpq keywords pgline does not use
// (keepalives, krbsrvname, ...) are accepted and ignored, except those
// asking for a check pgline cannot make, which are refused rather than
// connect where libpq would not: gssencmode=require, requirepeer, sslcrl,
// sslcrldir, sslcertmode=require. Any other key is a runtime parameter
// sent to the server (Config.RuntimeParams).
//
// When no host is given, the default is the first of /var/run/postgresql,
// /run/postgresql and /tmp that holds the server socket .s.PGSQL.<port>,
// else "localhost". When no password is given, the password file is
// consulted for each host (see HostConfig.Password).
//
// Errors start with "pgline: cannot parse DSN: " and never contain values
// from the DSN or the environment, so a password cannot leak through them.
func ParseConfig(dsn string) (*Config, error) {
	return parseConfig(dsn, osConfigSource())
}

// setting is the value of one key and where it came from.
type setting struct {
	value string
	// origin is "" for the DSN, else the environment variable or service
	// file that gave the value.
	origin string
}

// settings holds every key set by the DSN, the service file or the
// environment.
type settings map[string]setting

func (s settings) get(key string) string { return s[key].value }

// invalid reports a bad value of key, naming where it came from.
func (s settings) invalid(key, why string) error {
	from := ""
	if o := s[key].origin; o != "" {
		from = " (from " + o + ")"
	}
	return parseError("invalid %s%s: %s", key, from, why)
}

// parseConfig is ParseConfig with its outside world in src.
func parseConfig(conninfo string, src *configSource) (*Config, error) {
	pairs, err := splitDSN(conninfo)
	if err != nil {
		return nil, err
	}
	s := make(settings, len(pairs))
	for _, p := range pairs {
		s[p.Key] = setting{value: p.Value} // the last one wins
	}
	if err := applyService(s, src); err != nil {
		return nil, err
	}
	applyEnv(s, src)
	return buildConfig(s, src)
}

// buildConfig turns the merged settings into a Config.
func buildConfig(s settings, src *configSource) (*Config, error) {
	c := &Config{
		RuntimeParams: make(map[string]string),
	}
	if err := classifyKeys(s, c); err != nil {
		return nil, err
	}

	c.User = s.get("user")
	if c.User == "" {
		if c.User = src.UserName(); c.User == "" {
			return nil, parseError("no user name given (set user or PGUSER) and the operating-system user is unknown")
		}
	}
	c.Database = s.get("dbname")
	if c.Database == "" {
		c.Database = c.User
	}
	c.Password = s.get("password")
	c.PassFile = s.get("passfile")
	if c.PassFile == "" {
		c.PassFile = src.DefaultPassFile()
	}
	c.ApplicationName = s.get("application_name")
	if c.ApplicationName == "" {
		c.ApplicationName = s.get("fallback_application_name")
	}
	c.Options = s.get("options")

	var err error
	if c.ConnectTimeout, err = parseConnectTimeout(s); err != nil {
		return nil, err
	}
	if err := parseTLSSettings(s, src, c); err != nil {
		return nil, err
	}
	if err := parseSessionSettings(s, c); err != nil {
		return nil, err
	}
	if err := parsePglineSettings(s, c); err != nil {
		return nil, err
	}
	if c.Hosts, err = parseHosts(s, src); err != nil {
		return nil, err
	}
	passFilePasswords(c, src)
	return c, nil
}

// Key classes for classifyKeys.
const (
	keyUnknown = iota // a runtime parameter
	keyLibpq          // read by pgline
	keyIgnored        // a libpq keyword pgline does not use
	keyPgline         // pgline's own (see parsePglineSettings)
)

// knownKeys classifies every key ParseConfig does not pass to the server.
var knownKeys = map[string]int{
	"host": keyLibpq, "hostaddr": keyLibpq, "port": keyLibpq, "dbname": keyLibpq,
	"user": keyLibpq, "password": keyLibpq, "passfile": keyLibpq, "service": keyLibpq,
	"connect_timeout": keyLibpq, "application_name": keyLibpq,
	"fallback_application_name": keyLibpq, "options": keyLibpq,
	"sslmode": keyLibpq, "sslrootcert": keyLibpq, "sslcert": keyLibpq, "sslkey": keyLibpq,
	"sslpassword": keyLibpq, "sslnegotiation": keyLibpq, "sslsni": keyLibpq,
	"channel_binding": keyLibpq, "require_auth": keyLibpq,
	"target_session_attrs": keyLibpq, "load_balance_hosts": keyLibpq,

	"keepalives": keyIgnored, "keepalives_idle": keyIgnored, "keepalives_interval": keyIgnored,
	"keepalives_count": keyIgnored, "tcp_user_timeout": keyIgnored,
	"gssencmode": keyLibpq, "gsslib": keyIgnored, "gssdelegation": keyIgnored,
	"krbsrvname": keyIgnored, "requirepeer": keyLibpq, "sslcompression": keyIgnored,
	"sslcrl": keyLibpq, "sslcrldir": keyLibpq, "sslcertmode": keyLibpq,
	"ssl_min_protocol_version": keyLibpq, "ssl_max_protocol_version": keyLibpq,
	"sslkeylogfile": keyIgnored, "min_protocol_version": keyLibpq,
	"max_protocol_version": keyLibpq, "oauth_issuer": keyIgnored,
	"oauth_client_id": keyIgnored, "oauth_client_secret": keyIgnored, "oauth_scope": keyIgnored,
	"scram_client_key": keyIgnored, "scram_server_key": keyIgnored,

	"read_buffer_size": keyPgline, "max_message_size": keyPgline,

	"statement_cache_capacity": keyPgline, "statement_cache_mode": keyPgline,
	"pipeline_sync": keyPgline, "cancel_timeout": keyPgline, "cancel_grace": keyPgline,
	"pool_max_conns": keyPgline, "pool_min_conns": keyPgline,
	"pool_max_conn_lifetime": keyPgline, "pool_max_conn_idle_time": keyPgline,
	"pool_health_check_period": keyPgline, "pool_max_pipeline": keyPgline, "pool_idle_check": keyPgline,
	"pool_max_replica_lag": keyPgline,
}

// isKnownKey reports whether key is a keyword ParseConfig knows, so that
// errors may name it.
func isKnownKey(key string) bool {
	_, ok := knownKeys[key]
	return ok
}

// classifyKeys rejects NUL bytes and copies unknown keys into
// RuntimeParams.
func classifyKeys(s settings, c *Config) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s[k].value
		_, known := knownKeys[k]
		if !known {
			switch {
			case strings.IndexByte(k, 0) >= 0:
				return parseError("a parameter name contains a NUL byte")
			case k == "database":
				return parseError("unknown key \"database\" (the database name is dbname)")
			case strings.HasPrefix(k, "_pq_."):
				return parseError("protocol options (_pq_.*) are not supported")
			}
		}
		if strings.IndexByte(v, 0) >= 0 {
			if known {
				return s.invalid(k, "contains a NUL byte")
			}
			return parseError("the value of a runtime parameter contains a NUL byte")
		}
		if !known {
			c.RuntimeParams[k] = v
		}
	}
	return nil
}

// parseHosts builds the host list from host, hostaddr and port, which are
// comma-separated lists. hostaddr, when given, must have as many entries as
// host (as in libpq); port must have one entry, used for every host, or
// one per host. Empty entries take the defaults.
func parseHosts(s settings, src *configSource) ([]HostConfig, error) {
	hosts := splitList(s.get("host"))
	addrs := splitList(s.get("hostaddr"))
	ports := splitList(s.get("port"))
	n := 1
	switch {
	case len(addrs) > 0:
		n = len(addrs)
		if len(hosts) > 0 && len(hosts) != n {
			return nil, parseError("%d host names but %d hostaddr values: give one hostaddr per host", len(hosts), n)
		}
	case len(hosts) > 0:
		n = len(hosts)
	}
	if len(ports) > 1 && len(ports) != n {
		return nil, parseError("%d ports for %d hosts: give one port for all hosts or one per host", len(ports), n)
	}

	list := make([]HostConfig, n)
	for i := range list {
		h := &list[i]
		h.Port = defaultPort
		if len(ports) > 0 {
			p := ports[0]
			if len(ports) > 1 {
				p = ports[i]
			}
			if p != "" {
				v, err := strconv.Atoi(p)
				if err != nil || v < 1 || v > 65535 {
					return nil, s.invalid("port", "must be a number from 1 to 65535")
				}
				h.Port = uint16(v)
			}
		}
		if len(addrs) > 0 && addrs[i] != "" {
			if _, err := netip.ParseAddr(addrs[i]); err != nil {
				return nil, s.invalid("hostaddr", "must be a numeric IPv4 or IPv6 address")
			}
			h.HostAddr = addrs[i]
		}
		if len(hosts) > 0 {
			h.Host = hosts[i]
		}
		if h.Host == "" && h.HostAddr == "" {
			h.Host = src.DefaultHost(h.Port)
		}
	}
	return list, nil
}

// splitList splits a comma-separated list, trimming white space around
// entries; "" gives nil.
func splitList(v string) []string {
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// parseConnectTimeout reads connect_timeout in whole seconds with libpq's
// rules: zero or negative means none, and 1 means 2 seconds.
func parseConnectTimeout(s settings) (time.Duration, error) {
	v := strings.TrimSpace(s.get("connect_timeout"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n > int64(24*365*time.Hour/time.Second) {
		return 0, s.invalid("connect_timeout", "must be a whole number of seconds, at most one year")
	}
	switch {
	case n <= 0:
		return 0, nil
	case n == 1:
		n = 2
	}
	return time.Duration(n) * time.Second, nil
}
