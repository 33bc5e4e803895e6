package pgline

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/config"
	"github.com/pgline/pgline/pgtype"
)

// Config describes how to reach a PostgreSQL server and what to ask of the
// session. Build one with ParseConfig, which reads a DSN and the libpq PG*
// environment variables; fields may be changed before ConnectConfig. A Config
// must not be changed once it has been passed to ConnectConfig.
type Config struct {
	// Hosts are tried in order (or in random order when LoadBalanceHosts is
	// "random"); the first one that accepts the connection and matches
	// TargetSessionAttrs wins.
	Hosts []HostConfig

	User string
	// Password is the password for every host; when empty, each host's
	// HostConfig.Password (from the password file) is used. Setting it
	// after ParseConfig takes effect.
	Password string
	Database string

	// PassFile is the password file (libpq's passfile / PGPASSFILE,
	// default ~/.pgpass). The lookup already happened in ParseConfig, when
	// no password was given: the password found for each host is in
	// HostConfig.Password.
	PassFile string

	ApplicationName string
	// Options are command-line options sent to the server at startup
	// (libpq's options / PGOPTIONS), for example "-c geqo=off".
	Options string
	// RuntimeParams are sent in the StartupMessage as they are; any DSN key
	// that pgline does not know lands here (for example search_path).
	RuntimeParams map[string]string

	// ConnectTimeout bounds each host attempt (TCP connect, TLS and
	// authentication). Zero means no timeout beyond ctx.
	ConnectTimeout time.Duration

	// TCP keepalives find a peer that is gone without a word (a network
	// partition, a host that lost power, a cloud address moved, a NAT
	// entry that expired): a connection that has heard nothing for
	// KeepalivesIdle sends a probe every KeepalivesInterval, and after
	// KeepalivesCount unanswered probes the connection fails, and with it
	// every request on it (those never sent are SafeToRetry, and a Pool
	// sends them to another connection). They are on by default, because
	// a pgline connection is shared: every goroutine pipelining on it
	// would otherwise wait for the dead peer as long as the operating
	// system does (hours for keepalives, about 15 minutes for data sent
	// and not acknowledged). DSN keys: keepalives, keepalives_idle,
	// keepalives_interval, keepalives_count (libpq's).
	//
	// Requests in flight are held to the same bound (Linux): a
	// connection whose server has acknowledged nothing it was sent, nor
	// any probe, for KeepalivesIdle + KeepalivesCount ×
	// KeepalivesInterval fails, as the keepalives would fail a silent
	// one (the kernel sends no keepalive while data is unacknowledged,
	// and would retransmit it for about 15 minutes). A live server
	// that is busy acknowledges all the same, even when it has stopped
	// reading, so only a dead peer is cut off. The bound is off with
	// keepalives off or left to the system, and when TCPUserTimeout is
	// set, which then bounds unacknowledged data itself.
	//
	// NoKeepalives turns them off (keepalives=0). A zero
	// KeepalivesIdle, KeepalivesInterval or KeepalivesCount takes
	// pgline's default (DefaultKeepalivesIdle, DefaultKeepalivesInterval,
	// DefaultKeepalivesCount: a dead peer is found within 30 seconds); a
	// negative one leaves the operating system's (the DSN's 0, as in
	// libpq).
	NoKeepalives       bool
	KeepalivesIdle     time.Duration
	KeepalivesInterval time.Duration
	KeepalivesCount    int
	// TCPUserTimeout is how long data sent may stay unacknowledged before
	// the connection fails (tcp_user_timeout; Linux's TCP_USER_TIMEOUT,
	// ignored elsewhere). Zero leaves the operating system's. It is off
	// by default: Linux applies it also to a live server that has stopped
	// reading for that long (one running a long statement while more
	// statements wait behind it, pipelined), which it would cut off.
	TCPUserTimeout time.Duration

	// SSLMode is one of disable, allow, prefer (the default), require,
	// verify-ca, verify-full.
	SSLMode     string
	SSLRootCert string // file with CA certificates, or "system"
	SSLCert     string // client certificate file
	SSLKey      string // client key file
	SSLPassword string // unused unless the key is encrypted (not supported yet)
	// SSLNegotiation is how TLS starts (sslnegotiation): "postgres" (the
	// default, also when empty) asks with an SSLRequest first, which
	// every server knows; "direct" starts the TLS handshake with the
	// first byte, one round trip less, and needs PostgreSQL 17 or later
	// (or a TLS proxy in front of the server), which must select ALPN
	// "postgresql". Direct needs an SSLMode that requires TLS (require,
	// verify-ca, verify-full), as in libpq; the certificate checks are
	// the same with both, and a CancelRequest starts TLS as its
	// connection did. Against an older server a direct connect fails
	// with an error naming sslnegotiation=direct, and the next host is
	// tried.
	SSLNegotiation string
	SSLSNI         bool // send the host name with TLS SNI (default true)
	// SSLMinProtocolVersion and SSLMaxProtocolVersion bound the TLS
	// version: "TLSv1", "TLSv1.1", "TLSv1.2" or "TLSv1.3". The minimum
	// defaults to TLSv1.2 (also when empty); an empty maximum is none.
	SSLMinProtocolVersion string
	SSLMaxProtocolVersion string

	// MinProtocolVersion and MaxProtocolVersion bound the version of the
	// PostgreSQL wire protocol (min_protocol_version,
	// max_protocol_version and their PG* variables, as in libpq 18):
	// "3.0", "3.2" or "latest" (3.2, the latest pgline speaks). Protocol
	// 3.2 (PostgreSQL 18) has longer cancel keys: 32 bytes from
	// PostgreSQL 18 instead of 4, so that a CancelRequest cannot be
	// forged by guessing. The StartupMessage asks MaxProtocolVersion; a
	// server or pooler that speaks an older minor version says so
	// (NegotiateProtocolVersion) and the connection goes on at its
	// version, unless that is below MinProtocolVersion: then the connect
	// fails with an error naming min_protocol_version. One that refuses
	// the StartupMessage instead (PgBouncer before 1.22) is asked again
	// for 3.0 on a new connection, when MinProtocolVersion allows it
	// (libpq fails there). Empty is the default, as in libpq: 3.0 for
	// the minimum; 3.0 for the maximum, for the poolers that do not
	// negotiate, or latest when the minimum is above 3.0. A maximum
	// below the minimum is an error.
	MinProtocolVersion string
	MaxProtocolVersion string

	// TLSConfig, when set, replaces the TLS settings derived from the
	// ssl* fields (SSLMode still decides whether TLS is tried and needed,
	// SSLNegotiation how it starts). Its NextProtos is replaced by ALPN
	// "postgresql", which pgline offers on every TLS connection.
	TLSConfig *tls.Config

	// ChannelBinding is disable, prefer (the default) or require.
	ChannelBinding string
	// RequireAuth lists the authentication methods the client accepts
	// (libpq's require_auth): password, md5, scram-sha-256, none, with an
	// optional leading "!" to negate the list. Empty accepts all.
	RequireAuth string

	// TargetSessionAttrs is any (default), read-write, read-only, primary,
	// standby or prefer-standby.
	TargetSessionAttrs string
	// LoadBalanceHosts is disable (default) or random.
	LoadBalanceHosts string

	// ReadBufferSize is the size of the connection's read buffer (default
	// 64 KiB). MaxMessageSize caps DataRow, CopyData, error and notice
	// messages (default 1 GiB); larger messages are a protocol error.
	ReadBufferSize int
	MaxMessageSize int

	// CancelTimeout bounds how long a statement whose ctx ended may go on
	// after pgline sent its CancelRequest (DSN key cancel_timeout); then
	// the connection is closed, and requests behind it fail. The caller
	// whose ctx ended does not wait for it: it is answered at once, and
	// the rest of its reply is drained by the connection. Zero means 10
	// seconds.
	CancelTimeout time.Duration
	// CancelGrace is how long a statement whose ctx ended must have run
	// before its CancelRequest is sent when other requests are already
	// written behind it (DSN key cancel_grace): until then it may end on
	// its own, and the signal would land on the next statement. It is
	// counted from the first wait on the socket for the statement's reply
	// (from its caller leaving when there was none). A
	// statement alone on the connection is cancelled at once. Zero means
	// 100 milliseconds.
	CancelGrace time.Duration

	// TypeMap, when set, holds types registered by the user (enums,
	// domains, composites, extension types: see pgtype.Map's Register
	// methods) for every connection made with this Config: each
	// connection starts with a copy of it (see Conn.TypeMap), so types
	// registered here after a connection is made are not that
	// connection's. Nil means the built-in types only.
	TypeMap *pgtype.Map

	// Tracer, when set, is told of connection attempts, statements,
	// batches and pool acquisitions (see Tracer).
	Tracer Tracer

	// OnNotice, when set, is called with every NoticeResponse the server
	// sends. It runs on the goroutine reading the connection: it must not
	// block or call back into the Conn.
	OnNotice func(*Notice)

	// Pool is a Pool's settings: the pool_* DSN keys, as ParseConfig read
	// them; they may be changed before NewPoolConfig.
	Pool PoolConfig

	// BeforeConnect, when set, is called before each connection is opened
	// (by Connect, and by a Pool for each of its connections) with a copy
	// of the Config that it may change, for this connection only: a
	// password or token that rotates, say. An error stops the attempt.
	BeforeConnect func(ctx context.Context, cfg *Config) error
	// AfterConnect, when set, runs on each new connection before it is
	// used (types to register with LoadType, session settings); an error
	// closes the connection and is the connect's error. A Pool runs it
	// again after each reset of a connection's session (PoolConn.Release,
	// and Acquire of a connection a Pool transaction ran on), so that the
	// session is as AfterConnect left it: its SET, LISTEN and PREPARE
	// hold for every statement the Pool routes. It must be safe to run
	// again on the same connection (the types it registered are kept: a
	// second LoadType of them costs a round trip only); an error, or a
	// panic, of such a run closes the connection.
	AfterConnect func(ctx context.Context, c *Conn) error
	// PrepareConn, when set, is called by a Pool before Acquire, Begin or
	// BeginTx hands out a connection: false closes it and another is
	// taken; an error closes it and is the call's error. What it sets for
	// the session is undone by the next reset (see AfterConnect).
	PrepareConn func(ctx context.Context, c *Conn) (bool, error)
	// AfterRelease, when set, is called by a Pool when a connection comes
	// back from Release or a transaction's end, before others may use it:
	// false closes it.
	AfterRelease func(c *Conn) bool

	// pgline's own keys beyond the buffer sizes, as ParseConfig read
	// them; the zero values are the defaults.
	cacheMode     string // statement_cache_mode ("" is auto); none too for statement_cache_capacity=0
	cacheCapacity int    // statement_cache_capacity
	syncEach      bool   // pipeline_sync=each
	// proxies is set on a Pool's copy of the Config: its connections
	// share what they find out about poolers (see txpooler.go).
	proxies *session.ProxyFlags
}

// HostConfig is one entry of a host list.
type HostConfig struct {
	// Host is a host name, an IP address, or an absolute directory holding
	// the server's Unix socket (.s.PGSQL.<port>).
	Host string
	// HostAddr, when set, is the numeric address dialled instead of
	// resolving Host (libpq's hostaddr); Host is still used for TLS
	// verification and the password file.
	HostAddr string
	Port     uint16
	// Password is what the password file gives for this host, port,
	// database and user; it is used when Config.Password is empty.
	Password string
}

// IsUnixSocket reports whether h names a Unix socket directory.
func (h HostConfig) IsUnixSocket() bool {
	return config.Host(h).IsUnixSocket()
}
