package pgline

import (
	"github.com/pgline/pgline/internal/config"
	pgdsn "github.com/pgline/pgline/internal/dsn"
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
// connect_timeout, keepalives, keepalives_idle, keepalives_interval,
// keepalives_count, tcp_user_timeout (see Config.KeepalivesIdle),
// application_name, fallback_application_name, options,
// sslmode, sslrootcert, sslcert, sslkey, sslpassword, sslnegotiation
// (postgres or direct: see Config.SSLNegotiation; direct with an sslmode
// that requires TLS only, as libpq),
// sslsni, sslcertmode, ssl_min_protocol_version, ssl_max_protocol_version,
// min_protocol_version, max_protocol_version (3.0, 3.2 or latest: see
// Config.MinProtocolVersion), channel_binding, require_auth, target_session_attrs,
// load_balance_hosts, service) and pgline's own: read_buffer_size,
// max_message_size, statement_cache_capacity, statement_cache_mode (auto, prepare,
// describe or none: see the package docs),
// pipeline_sync (shared, the default, or each: see Conn), cancel_timeout
// and cancel_grace (durations: see Config.CancelTimeout) and the pool_*
// keys read by NewPool. Other libpq keywords pgline does not use
// (krbsrvname, gsslib, ...) are accepted and ignored, except those
// asking for a check pgline cannot make, which are refused rather than
// connect where libpq would not: gssencmode=require, requirepeer, sslcrl,
// sslcrldir, sslcertmode=require. pgx's default_query_exec_mode and
// description_cache_capacity map to statement_cache_mode and
// statement_cache_capacity (simple_protocol, and pgxpool's keys pgline has
// no counterpart for, are refused naming pgline's). Any other key is a
// runtime parameter sent to the server (Config.RuntimeParams), and must
// be a setting's name: a DSN of another driver (a MySQL one, say) or
// another URL scheme is refused, without showing its text.
//
// When no host is given, the default is the first of /var/run/postgresql,
// /run/postgresql and /tmp that holds the server socket .s.PGSQL.<port>,
// else "localhost". When no password is given, the password file is
// consulted for each host (see HostConfig.Password).
//
// Errors start with "pgline: cannot parse DSN: " and contain no value from
// the DSN or the environment but one: a bad value of a key that takes a
// few fixed words (sslmode, target_session_attrs, statement_cache_mode,
// ...) is shown quoted, as libpq shows it (`invalid sslmode value:
// "bogus"`), clipped to 64 bytes, and not at all when it holds "=". A
// password given as one (password=, a URL's user:password@, PGPASSWORD)
// cannot leak through them.
func ParseConfig(dsn string) (*Config, error) {
	return parseConfig(dsn, pgdsn.System())
}

// parseConfig is ParseConfig with its outside world in src. Package config
// parses and checks the DSN, and its errors are ParseConfig's;
// pool_min_conns is checked against the Pool's default pool_max_conns.
func parseConfig(conninfo string, src *pgdsn.Source) (*Config, error) {
	s, err := config.Parse(conninfo, src, PoolConfig{}.settings().MaxConns)
	if err != nil {
		return nil, err
	}
	return configOf(s), nil
}

// configOf is the Config of parsed settings: the one place where
// config.Settings becomes a Config. config.Host and config.Pool have the
// fields of HostConfig and PoolConfig, so they convert as they are (and
// stop compiling when the fields differ).
func configOf(s *config.Settings) *Config {
	hosts := make([]HostConfig, len(s.Hosts))
	for i, h := range s.Hosts {
		hosts[i] = HostConfig(h)
	}
	return &Config{
		Hosts:           hosts,
		User:            s.User,
		Password:        s.Password,
		Database:        s.Database,
		PassFile:        s.PassFile,
		ApplicationName: s.ApplicationName,
		Options:         s.Options,
		RuntimeParams:   s.RuntimeParams,
		ConnectTimeout:  s.ConnectTimeout,

		NoKeepalives:       s.NoKeepalives,
		KeepalivesIdle:     s.KeepalivesIdle,
		KeepalivesInterval: s.KeepalivesInterval,
		KeepalivesCount:    s.KeepalivesCount,
		TCPUserTimeout:     s.TCPUserTimeout,

		SSLMode:               s.SSLMode,
		SSLRootCert:           s.SSLRootCert,
		SSLCert:               s.SSLCert,
		SSLKey:                s.SSLKey,
		SSLPassword:           s.SSLPassword,
		SSLNegotiation:        s.SSLNegotiation,
		SSLSNI:                s.SSLSNI,
		SSLMinProtocolVersion: s.SSLMinProtocolVersion,
		SSLMaxProtocolVersion: s.SSLMaxProtocolVersion,
		MinProtocolVersion:    s.MinProtocolVersion,
		MaxProtocolVersion:    s.MaxProtocolVersion,

		ChannelBinding:     s.ChannelBinding,
		RequireAuth:        s.RequireAuth,
		TargetSessionAttrs: s.TargetSessionAttrs,
		LoadBalanceHosts:   s.LoadBalanceHosts,

		ReadBufferSize: s.ReadBufferSize,
		MaxMessageSize: s.MaxMessageSize,
		CancelTimeout:  s.CancelTimeout,
		CancelGrace:    s.CancelGrace,
		Pool:           PoolConfig(s.Pool),

		cacheMode:     s.StatementCacheMode,
		cacheCapacity: s.StatementCacheCapacity,
		syncEach:      s.PipelineSyncEach,
	}
}
