package config

import "time"

// Defaults that Parse applies.
const (
	defaultPort           = 5432
	defaultReadBufferSize = 64 << 10
	defaultMaxMessageSize = 1 << 30
)

// DefaultCacheCapacity is statement_cache_capacity when it is not set: the
// most statements a connection's cache holds.
const DefaultCacheCapacity = 512

// Settings is every value Parse derives from a DSN, the service file, the
// environment, the password file and the defaults: the defaults are
// filled in, and every value is checked. The fields are named after
// pgline.Config's, which they fill.
type Settings struct {
	// Hosts are the hosts of host, hostaddr and port, in order; there is
	// at least one.
	Hosts []Host

	// User is user, else the operating-system user's name; never "".
	User string
	// Password is password; "" when none was given (then each Host's
	// Password is the password file's).
	Password string
	// Database is dbname, else User.
	Database string
	// PassFile is passfile, else the default password file (~/.pgpass),
	// else "" when the home directory is unknown.
	PassFile string
	// ApplicationName is application_name, else
	// fallback_application_name.
	ApplicationName string
	// Options is options: command-line options for the server.
	Options string
	// RuntimeParams holds every key Parse does not know, with its value:
	// runtime parameters for the server. It is never nil.
	RuntimeParams map[string]string

	// ConnectTimeout is connect_timeout (libpq's rules: 1 second is 2,
	// and zero or less is none); zero when none.
	ConnectTimeout time.Duration

	// NoKeepalives is keepalives=0 (keepalives are on by default).
	NoKeepalives bool
	// KeepalivesIdle and KeepalivesInterval are keepalives_idle and
	// keepalives_interval (whole seconds), KeepalivesCount is
	// keepalives_count: zero when not set (pgline's defaults), -1 when
	// set to 0 or less (the operating system's, as in libpq).
	KeepalivesIdle     time.Duration
	KeepalivesInterval time.Duration
	KeepalivesCount    int
	// TCPUserTimeout is tcp_user_timeout (milliseconds); zero when not
	// set or set to 0 or less (the operating system's).
	TCPUserTimeout time.Duration

	// SSLMode is sslmode: disable, allow, prefer (the default, or
	// verify-full with sslrootcert=system), require, verify-ca or
	// verify-full.
	SSLMode string
	// SSLRootCert is sslrootcert, "system", else ~/.postgresql/root.crt
	// when that file exists, else "".
	SSLRootCert string
	// SSLCert is sslcert, else ~/.postgresql/postgresql.crt when that
	// file exists, else ""; "" with sslcertmode=disable.
	SSLCert string
	// SSLKey is sslkey, else ~/.postgresql/postgresql.key when that file
	// exists, else ""; "" with sslcertmode=disable.
	SSLKey string
	// SSLPassword is sslpassword.
	SSLPassword string
	// SSLNegotiation is sslnegotiation: postgres (the default) or
	// direct, which only an sslmode that requires TLS allows
	// (CheckSSLNegotiation).
	SSLNegotiation string
	// SSLSNI is sslsni (default true).
	SSLSNI bool
	// SSLMinProtocolVersion is ssl_min_protocol_version: TLSv1, TLSv1.1,
	// TLSv1.2 (the default) or TLSv1.3.
	SSLMinProtocolVersion string
	// SSLMaxProtocolVersion is ssl_max_protocol_version, not below the
	// minimum; "" is none.
	SSLMaxProtocolVersion string

	// MinProtocolVersion is min_protocol_version: 3.0 (the default), 3.2
	// or latest (see ProtocolRange).
	MinProtocolVersion string
	// MaxProtocolVersion is max_protocol_version, not below the minimum:
	// 3.0 (the default, or latest when MinProtocolVersion is above 3.0),
	// 3.2 or latest.
	MaxProtocolVersion string

	// ChannelBinding is channel_binding: disable, prefer (the default)
	// or require.
	ChannelBinding string
	// RequireAuth is require_auth, a checked list of methods; "" accepts
	// all.
	RequireAuth string
	// TargetSessionAttrs is target_session_attrs: any (the default),
	// read-write, read-only, primary, standby or prefer-standby.
	TargetSessionAttrs string
	// LoadBalanceHosts is load_balance_hosts: disable (the default) or
	// random.
	LoadBalanceHosts string

	// ReadBufferSize is read_buffer_size (default 64 KiB).
	ReadBufferSize int
	// MaxMessageSize is max_message_size (default 1 GiB).
	MaxMessageSize int
	// StatementCacheMode is statement_cache_mode: auto (the default),
	// prepare, describe or none; none too when StatementCacheCapacity
	// is 0.
	StatementCacheMode string
	// StatementCacheCapacity is statement_cache_capacity (default
	// DefaultCacheCapacity).
	StatementCacheCapacity int
	// PipelineSyncEach is pipeline_sync=each (the default is shared).
	PipelineSyncEach bool
	// CancelTimeout is cancel_timeout; zero when not set.
	CancelTimeout time.Duration
	// CancelGrace is cancel_grace; zero when not set.
	CancelGrace time.Duration

	// Pool holds the pool_* keys.
	Pool Pool
}

// Host is one entry of the host list. It has the fields of
// pgline.HostConfig, in the same order.
type Host struct {
	// Host is a host name, an IP address or a Unix socket directory;
	// when neither host nor hostaddr gives one, it is the first default
	// socket directory holding the server's socket, else "localhost".
	Host string
	// HostAddr is hostaddr's numeric address, or "".
	HostAddr string
	// Port is port, else 5432.
	Port uint16
	// Password is the password file's password for this host, port,
	// database and user; "" when Settings.Password is set.
	Password string
}

// IsUnixSocket reports whether h names a Unix socket directory: an
// absolute path, with no hostaddr.
func (h Host) IsUnixSocket() bool {
	return h.HostAddr == "" && len(h.Host) > 0 && h.Host[0] == '/'
}

// Pool holds the pool_* keys. It has the fields of pgline.PoolConfig, in
// the same order. A key not set is zero (the pool's default); a duration
// set to 0 is -1, which turns its limit off.
type Pool struct {
	// MaxConns is pool_max_conns.
	MaxConns int
	// MinConns is pool_min_conns, at most MaxConns (or the default
	// given to Parse).
	MinConns int
	// MaxConnLifetime is pool_max_conn_lifetime.
	MaxConnLifetime time.Duration
	// MaxConnIdleTime is pool_max_conn_idle_time.
	MaxConnIdleTime time.Duration
	// HealthCheckPeriod is pool_health_check_period.
	HealthCheckPeriod time.Duration
	// MaxPipeline is pool_max_pipeline.
	MaxPipeline int
	// IdleCheck is pool_idle_check.
	IdleCheck time.Duration
	// MaxReplicaLag is pool_max_replica_lag.
	MaxReplicaLag time.Duration
}
