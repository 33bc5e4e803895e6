package config

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgline/pgline/internal/dsn"
)

// oneOf returns the value of key, or def when it is empty, and checks that
// it is one of allowed; a bad value is shown (invalidValue).
func oneOf(s settings, key, def string, allowed ...string) (string, error) {
	v := s.get(key)
	if v == "" {
		return def, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", s.invalidValue(key, "must be one of "+strings.Join(allowed, ", "))
}

// parseBool reads a libpq-style boolean: 1/0, true/false, on/off, yes/no,
// t/f, y/n (any letter case); a bad value is shown (invalidValue).
func parseBool(s settings, key string, def bool) (bool, error) {
	v := strings.ToLower(strings.TrimSpace(s.get(key)))
	switch v {
	case "":
		return def, nil
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	return false, s.invalidValue(key, "must be 1 or 0 (true or false)")
}

// parseTLSSettings reads the ssl* keys. The per-user files
// ~/.postgresql/root.crt, postgresql.crt and postgresql.key are the
// defaults of sslrootcert, sslcert and sslkey when they exist.
// sslrootcert=system makes verify-full the default sslmode and rules out
// every weaker one, as in libpq.
func parseTLSSettings(s settings, src *dsn.Source, st *Settings) error {
	var err error
	st.SSLRootCert = s.get("sslrootcert")
	def := "prefer"
	if st.SSLRootCert == "system" {
		def = "verify-full"
	}
	st.SSLMode, err = oneOf(s, "sslmode", def, "disable", "allow", "prefer", "require", "verify-ca", "verify-full")
	if err != nil {
		return err
	}
	if st.SSLRootCert == "system" && st.SSLMode != "verify-full" {
		return s.invalid("sslmode", "sslrootcert=system requires sslmode verify-full")
	}
	if st.SSLRootCert == "" {
		st.SSLRootCert = src.UserFile("root.crt")
	}
	if st.SSLCert = s.get("sslcert"); st.SSLCert == "" {
		st.SSLCert = src.UserFile("postgresql.crt")
	}
	if st.SSLKey = s.get("sslkey"); st.SSLKey == "" {
		st.SSLKey = src.UserFile("postgresql.key")
	}
	st.SSLPassword = s.get("sslpassword")
	if st.SSLNegotiation, err = oneOf(s, "sslnegotiation", "postgres", "postgres", "direct"); err != nil {
		return err
	}
	if why := CheckSSLNegotiation(st.SSLNegotiation, st.SSLMode); why != "" {
		return s.invalid("sslnegotiation", why)
	}
	if st.SSLSNI, err = parseBool(s, "sslsni", true); err != nil {
		return err
	}
	versions := []string{"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}
	if st.SSLMinProtocolVersion, err = oneOf(s, "ssl_min_protocol_version", "TLSv1.2", versions...); err != nil {
		return err
	}
	if st.SSLMaxProtocolVersion, err = oneOf(s, "ssl_max_protocol_version", "", versions...); err != nil {
		return err
	}
	if st.SSLMaxProtocolVersion != "" && slices.Index(versions, st.SSLMaxProtocolVersion) < slices.Index(versions, st.SSLMinProtocolVersion) {
		return s.invalid("ssl_max_protocol_version", "must not be below ssl_min_protocol_version")
	}
	if err := parseProtocolSettings(s, st); err != nil {
		return err
	}
	certMode, err := oneOf(s, "sslcertmode", "allow", "disable", "allow", "require")
	if err != nil {
		return err
	}
	if certMode == "disable" {
		st.SSLCert, st.SSLKey = "", ""
	}
	return refuseUnenforced(s, certMode)
}

// CheckSSLNegotiation returns why sslnegotiation=negotiation cannot go
// with sslmode=mode, or "" when it can: direct TLS only with an sslmode
// that requires TLS (require, verify-ca, verify-full), as libpq 17 has it
// ("This is only allowed with sslmode=require or higher, because the
// weaker settings could lead to unintended fallback to plaintext
// authentication when the server does not support direct SSL handshake",
// https://www.postgresql.org/docs/17/libpq-connect.html#LIBPQ-CONNECT-SSLNEGOTIATION).
// It is the one place of the rule: Parse checks the DSN with it, and
// pgline's connect a Config made without ParseConfig.
func CheckSSLNegotiation(negotiation, mode string) string {
	switch negotiation {
	case "", "postgres":
		return ""
	case "direct":
		switch mode {
		case "require", "verify-ca", "verify-full":
			return ""
		}
		return "direct requires sslmode require, verify-ca or verify-full (as in libpq: a weaker sslmode could fall back to plaintext)"
	}
	return "must be postgres or direct"
}

// refuseUnenforced refuses the libpq settings that ask for a check pgline
// cannot make: ignoring them would connect where libpq refuses to.
func refuseUnenforced(s settings, certMode string) error {
	gssMode, err := oneOf(s, "gssencmode", "prefer", "disable", "prefer", "require")
	if err != nil {
		return err
	}
	switch {
	case gssMode == "require":
		return s.invalid("gssencmode", "require is not supported: pgline has no GSSAPI encryption")
	case s.get("requirepeer") != "":
		return s.invalid("requirepeer", "is not supported (the server's user is not checked)")
	case s.get("sslcrl") != "":
		return s.invalid("sslcrl", "is not supported (certificate revocation lists are not checked)")
	case s.get("sslcrldir") != "":
		return s.invalid("sslcrldir", "is not supported (certificate revocation lists are not checked)")
	case certMode == "require":
		return s.invalid("sslcertmode", "require is not supported; use allow or disable")
	}
	return nil
}

// parseTCPSettings reads keepalives, keepalives_idle,
// keepalives_interval, keepalives_count and tcp_user_timeout with
// libpq's rules: integers; keepalives=0 turns keepalives off; a count or
// time of 0 or less leaves the operating system's value (-1 here, zero
// for tcp_user_timeout), and one not set takes pgline's default (zero).
func parseTCPSettings(s settings, st *Settings) error {
	const maxSeconds = 24 * 3600 // a day: longer is no keepalive
	n, set, err := parseLibpqInt(s, "keepalives", 1<<31-1)
	if err != nil {
		return err
	}
	st.NoKeepalives = set && n == 0
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"keepalives_idle", &st.KeepalivesIdle}, {"keepalives_interval", &st.KeepalivesInterval}} {
		n, set, err := parseLibpqInt(s, k.key, maxSeconds)
		if err != nil {
			return err
		}
		switch {
		case set && n <= 0:
			*k.dst = -1
		case set:
			*k.dst = time.Duration(n) * time.Second
		}
	}
	if n, set, err = parseLibpqInt(s, "keepalives_count", 1<<15); err != nil {
		return err
	}
	switch {
	case set && n <= 0:
		st.KeepalivesCount = -1
	case set:
		st.KeepalivesCount = n
	}
	if n, _, err = parseLibpqInt(s, "tcp_user_timeout", maxSeconds*1000); err != nil {
		return err
	}
	if n > 0 {
		st.TCPUserTimeout = time.Duration(n) * time.Millisecond
	}
	return nil
}

// parseLibpqInt reads an integer key as libpq does (surrounding spaces
// allowed; any sign), at most hi; set reports whether it was given.
func parseLibpqInt(s settings, key string, hi int) (n int, set bool, err error) {
	v := strings.TrimSpace(s.get(key))
	if v == "" {
		return 0, false, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n > hi {
		return 0, false, s.invalid(key, "must be a whole number, at most "+strconv.Itoa(hi))
	}
	return n, true, nil
}

// parseSessionSettings reads channel_binding, require_auth,
// target_session_attrs and load_balance_hosts.
func parseSessionSettings(s settings, st *Settings) error {
	var err error
	if st.ChannelBinding, err = oneOf(s, "channel_binding", "prefer", "disable", "prefer", "require"); err != nil {
		return err
	}
	st.RequireAuth = s.get("require_auth")
	if err := checkRequireAuthList(st.RequireAuth); err != "" {
		return s.invalidValue("require_auth", err)
	}
	if st.TargetSessionAttrs, err = oneOf(s, "target_session_attrs", "any",
		"any", "read-write", "read-only", "primary", "standby", "prefer-standby"); err != nil {
		return err
	}
	st.LoadBalanceHosts, err = oneOf(s, "load_balance_hosts", "disable", "disable", "random")
	return err
}

// requireAuthMethods are the method names libpq's require_auth accepts.
var requireAuthMethods = []string{"password", "md5", "gss", "sspi", "scram-sha-256", "oauth", "none"}

// checkRequireAuthList checks a require_auth list: known method names,
// each at most once, either all or none negated with "!". It returns why
// the list is invalid, or "".
func checkRequireAuthList(list string) string {
	if list == "" {
		return ""
	}
	seen := make(map[string]bool)
	entries := strings.Split(list, ",")
	negated := strings.HasPrefix(entries[0], "!")
	for _, e := range entries {
		name, neg := strings.CutPrefix(e, "!")
		if neg != negated {
			return "negated (!) and non-negated methods cannot be mixed"
		}
		known := false
		for _, m := range requireAuthMethods {
			known = known || name == m
		}
		if !known {
			return "methods must be among " + strings.Join(requireAuthMethods, ", ") + ", optionally negated with \"!\""
		}
		if seen[name] {
			return "a method is listed more than once"
		}
		seen[name] = true
	}
	return ""
}

// parsePglineSettings reads pgline's own keys: the buffer sizes, the
// statement cache, pipeline_sync, the cancel durations and the pool_*
// keys.
func parsePglineSettings(s settings, st *Settings, defaultMaxConns int) error {
	var err error
	if st.ReadBufferSize, err = parseIntKey(s, "read_buffer_size", defaultReadBufferSize, 1024, 1<<30); err != nil {
		return err
	}
	if st.MaxMessageSize, err = parseIntKey(s, "max_message_size", defaultMaxMessageSize, 1024, 1<<31-1); err != nil {
		return err
	}
	if st.StatementCacheMode, err = oneOf(s, "statement_cache_mode", "auto", "auto", "prepare", "describe", "none"); err != nil {
		return err
	}
	if st.StatementCacheCapacity, err = parseIntKey(s, "statement_cache_capacity", DefaultCacheCapacity, 0, 1<<30); err != nil {
		return err
	}
	if st.StatementCacheCapacity == 0 {
		st.StatementCacheMode = "none"
	}
	syncMode, err := oneOf(s, "pipeline_sync", "shared", "shared", "each")
	if err != nil {
		return err
	}
	st.PipelineSyncEach = syncMode == "each"
	if st.CancelTimeout, err = parseDurationKey(s, "cancel_timeout"); err != nil {
		return err
	}
	if st.CancelGrace, err = parseDurationKey(s, "cancel_grace"); err != nil {
		return err
	}
	return parsePoolSettings(s, &st.Pool, defaultMaxConns)
}

// parsePoolSettings reads the pool_* keys into pc; keys not set stay zero
// (the defaults, see Pool), and a duration of 0 turns its limit off (-1,
// as in database/sql). pool_min_conns must not exceed pool_max_conns, or
// defaultMaxConns when that is not set.
func parsePoolSettings(s settings, pc *Pool, defaultMaxConns int) error {
	var err error
	if pc.MaxPipeline, err = parseIntKey(s, "pool_max_pipeline", 0, 1, 1<<30); err != nil {
		return err
	}
	if pc.MaxConns, err = parseIntKey(s, "pool_max_conns", 0, 1, 1<<20); err != nil {
		return err
	}
	if pc.MinConns, err = parseIntKey(s, "pool_min_conns", 0, 0, 1<<20); err != nil {
		return err
	}
	maxConns := pc.MaxConns
	if maxConns == 0 {
		maxConns = defaultMaxConns
	}
	if pc.MinConns > maxConns {
		return s.invalid("pool_min_conns", "must not exceed pool_max_conns")
	}
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"pool_max_conn_lifetime", &pc.MaxConnLifetime}, {"pool_max_conn_idle_time", &pc.MaxConnIdleTime}, {"pool_health_check_period", &pc.HealthCheckPeriod}, {"pool_idle_check", &pc.IdleCheck}, {"pool_max_replica_lag", &pc.MaxReplicaLag}} {
		if s.get(k.key) == "" {
			continue
		}
		d, err := parseDurationKey(s, k.key)
		if err != nil {
			return err
		}
		if d == 0 {
			d = -1 // 0 turns the limit off, as in database/sql
		}
		*k.dst = d
	}
	return nil
}

// parseDurationKey reads a non-negative duration key (0 when it is empty).
func parseDurationKey(s settings, key string) (time.Duration, error) {
	v := strings.TrimSpace(s.get(key))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, s.invalid(key, "must be a non-negative duration such as 30s or 1h")
	}
	return d, nil
}

// parseIntKey reads an integer key in [lo, hi], or def when it is empty.
func parseIntKey(s settings, key string, def, lo, hi int) (int, error) {
	v := strings.TrimSpace(s.get(key))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, s.invalid(key, "must be a whole number from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
	}
	return n, nil
}
