package config

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pgline/pgline/internal/dsn"
)

// Parse parses conninfo, a DSN in URL form (postgres:// or postgresql://)
// or key=value form (which may be empty), with src as the outside world
// (the environment, the operating-system user, the socket directories:
// dsn.System for the real one). It applies the service file, the
// environment and the defaults in the order the package doc gives, checks
// every value and looks each host's password up in the password file.
//
// The keys it reads are libpq's and pgline's own (knownKeys); other libpq
// keywords are accepted and ignored, except those asking for a check
// pgline cannot make, which are refused; any other key is a runtime
// parameter (Settings.RuntimeParams). defaultMaxConns is pool_max_conns
// when it is not set, which pool_min_conns must not exceed.
//
// Errors follow the package doc's rule: the prefix, and no value but an
// enumerated key's (invalidValue).
func Parse(conninfo string, src *dsn.Source, defaultMaxConns int) (*Settings, error) {
	if err := checkScheme(conninfo); err != nil {
		return nil, err
	}
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
	if err := fromPgx(s); err != nil {
		return nil, err
	}
	return build(s, src, defaultMaxConns)
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

// invalid reports a bad value of key, naming where it came from but not
// the value.
func (s settings) invalid(key, why string) error {
	return parseError("invalid %s%s: %s", key, s.from(key), why)
}

// maxEcho is the most bytes of a value invalidValue shows.
const maxEcho = 64

// invalidValue reports a bad value of an enumerated key (one that takes a
// few fixed words, as sslmode), showing the value as libpq does:
// `invalid sslmode value: "bogus"`, then where it came from and why. It
// is the one place where an error of Parse shows a value (the package
// doc's rule); every enumerated key's error is made here. The value is
// quoted (%q: control bytes and invalid UTF-8 escaped) and clipped to
// maxEcho bytes. A value holding "=" is not shown: no enumerated value
// has one, and it is how a key=value pair reads when a space follows the
// "=" ("sslmode= password=x" sets sslmode to "password=x", in libpq too).
func (s settings) invalidValue(key, why string) error {
	v := s[key].value
	shown := "value (not shown: it holds \"=\")"
	if !strings.Contains(v, "=") {
		shown = "value: " + quoteClipped(v)
	}
	return parseError("invalid %s %s%s: %s", key, shown, s.from(key), why)
}

// quoteClipped quotes v, clipped at a rune boundary to at most maxEcho
// bytes; a clipped value is followed by "..." and its length.
func quoteClipped(v string) string {
	if len(v) <= maxEcho {
		return strconv.Quote(v)
	}
	n := maxEcho
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return strconv.Quote(v[:n]) + "... (" + strconv.Itoa(len(v)) + " bytes)"
}

// from names where key's value came from, " (from PGSSLMODE)", or "" for
// the DSN.
func (s settings) from(key string) string {
	if o := s[key].origin; o != "" {
		return " (from " + o + ")"
	}
	return ""
}

// build turns the merged settings into Settings.
func build(s settings, src *dsn.Source, defaultMaxConns int) (*Settings, error) {
	st := &Settings{
		RuntimeParams: make(map[string]string),
	}
	if err := classifyKeys(s, st); err != nil {
		return nil, err
	}

	st.User = s.get("user")
	if st.User == "" {
		if st.User = src.UserName(); st.User == "" {
			return nil, parseError("no user name given (set user or PGUSER) and the operating-system user is unknown")
		}
	}
	st.Database = s.get("dbname")
	if st.Database == "" {
		st.Database = st.User
	}
	st.Password = s.get("password")
	st.PassFile = s.get("passfile")
	if st.PassFile == "" {
		st.PassFile = src.DefaultPassFile()
	}
	st.ApplicationName = s.get("application_name")
	if st.ApplicationName == "" {
		st.ApplicationName = s.get("fallback_application_name")
	}
	st.Options = s.get("options")

	var err error
	if st.ConnectTimeout, err = parseConnectTimeout(s); err != nil {
		return nil, err
	}
	if err := parseTCPSettings(s, st); err != nil {
		return nil, err
	}
	if err := parseTLSSettings(s, src, st); err != nil {
		return nil, err
	}
	if err := parseSessionSettings(s, st); err != nil {
		return nil, err
	}
	if err := parsePglineSettings(s, st, defaultMaxConns); err != nil {
		return nil, err
	}
	if st.Hosts, err = parseHosts(s, src); err != nil {
		return nil, err
	}
	passFilePasswords(st, src)
	return st, nil
}

// Key classes for classifyKeys.
const (
	keyUnknown = iota // a runtime parameter
	keyLibpq          // read by pgline
	keyIgnored        // a libpq keyword pgline does not use
	keyPgline         // pgline's own (see parsePglineSettings)
	keyPgx            // pgx's, mapped to pgline's (see fromPgx)
)

// knownKeys classifies every key Parse does not pass to the server.
var knownKeys = map[string]int{
	"host": keyLibpq, "hostaddr": keyLibpq, "port": keyLibpq, "dbname": keyLibpq,
	"user": keyLibpq, "password": keyLibpq, "passfile": keyLibpq, "service": keyLibpq,
	"connect_timeout": keyLibpq, "application_name": keyLibpq,
	"fallback_application_name": keyLibpq, "options": keyLibpq,
	"sslmode": keyLibpq, "sslrootcert": keyLibpq, "sslcert": keyLibpq, "sslkey": keyLibpq,
	"sslpassword": keyLibpq, "sslnegotiation": keyLibpq, "sslsni": keyLibpq,
	"channel_binding": keyLibpq, "require_auth": keyLibpq,
	"target_session_attrs": keyLibpq, "load_balance_hosts": keyLibpq,

	"keepalives": keyLibpq, "keepalives_idle": keyLibpq, "keepalives_interval": keyLibpq,
	"keepalives_count": keyLibpq, "tcp_user_timeout": keyLibpq,
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

	// pgx's, mapped to pgline's or refused (see fromPgx).
	"default_query_exec_mode": keyPgx, "description_cache_capacity": keyPgx,
	"pool_min_idle_conns": keyPgx, "pool_max_conn_lifetime_jitter": keyPgx,
}

// isKnownKey reports whether key is a keyword Parse knows, so that errors
// may name it.
func isKnownKey(key string) bool {
	_, ok := knownKeys[key]
	return ok
}

// classifyKeys rejects NUL bytes and copies unknown keys into
// RuntimeParams.
func classifyKeys(s settings, st *Settings) error {
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
			case !isSettingName(k):
				// Not shown: a DSN of another form may hold a password
				// there ("root:secret@tcp(...)/db?x=1").
				return parseError("a key is not a setting name: %s", accepted)
			}
		}
		if strings.IndexByte(v, 0) >= 0 {
			if known {
				return s.invalid(k, "contains a NUL byte")
			}
			return parseError("the value of a runtime parameter contains a NUL byte")
		}
		if !known {
			st.RuntimeParams[k] = v
		}
	}
	return nil
}

// parseHosts builds the host list from host, hostaddr and port, which are
// comma-separated lists. hostaddr, when given, must have as many entries as
// host (as in libpq); port must have one entry, used for every host, or
// one per host. Empty entries take the defaults.
func parseHosts(s settings, src *dsn.Source) ([]Host, error) {
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

	list := make([]Host, n)
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
