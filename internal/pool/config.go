// Package pool is the engine of pgline's Pool: the connections of each
// host (Host), the statements and the Acquire and Begin calls waiting
// for them, and the set of hosts a Pool routes to (Set), with their roles
// and replication lag.
//
// # What it owns
//
// A Host opens connections on demand, with backoff after failures, keeps
// pool_min_conns open and closes those past their idle time or lifetime
// (host.go). It routes each statement to the connection with the least
// load, where the statement is pipelined behind the others, and makes the
// statements that find no slot wait in one line, served in arrival order
// (route.go); Acquire and Begin take a connection of their own, waiting
// in a second line (take.go). A Set has one Host per host of the DSN and
// chooses the host a call goes to from what the role checks found
// (set.go, check.go).
//
// # What it is given
//
// The engine does not know pgline's connections: it sees each through
// Backend, and opens, resets and prepares them, traces Acquire and builds
// the errors a caller sees through the functions of Config. The root
// package implements Backend with its *Conn and makes the Config;
// package pool imports nothing of pgline's but internal/wire.
//
// # Using it
//
//	s := pool.NewSet(&pool.Config{Settings: st.WithDefaults(), Hosts: labels, Connect: dial, ...})
//	c, err := s.Route(ctx, "any", false) // a slot on a connection
//	... run the statement on c.Backend() ...
//	c.Done(false)
//	s.Close()
package pool

import (
	"context"
	"math"
	"runtime"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// Backend is one connection to a server, as the engine uses it. Its
// methods are safe for concurrent use, as the engine calls IsClosed,
// TxStatus and Close while a caller runs statements on it.
type Backend interface {
	// Close closes the connection; it is safe to call more than once.
	Close() error
	// IsClosed reports whether the connection is closed, by Close or
	// by a fatal error.
	IsClosed() bool
	// TxStatus is the transaction status of the last ReadyForQuery:
	// 'I' idle, 'T' in a block, 'E' in a failed block.
	TxStatus() byte
	// ParameterStatus returns a parameter the server reported, or "".
	ParameterStatus(name string) string
	// UsableAfterIdle checks a connection that sat idle before it is
	// handed out, and closes it when it is not usable.
	UsableAfterIdle(ctx context.Context) bool
	// DropNotifications discards the notifications kept.
	DropNotifications()
	// SimpleQuery runs sql with the simple protocol, untraced, and
	// calls onRow with each row (the role check, see Set).
	SimpleQuery(ctx context.Context, sql string, onRow func(*wire.DataRow) error) error
	// PeerLost returns the failure of a closed connection when it means
	// that the server stopped answering (nothing acknowledged, a
	// keepalive's or the socket's timeout): the host may be unreachable.
	// It is nil otherwise (open, closed by Close, ended by the server).
	PeerLost() error
}

// Config is what a Set is made of: the settings, the hosts, and the
// functions through which the engine opens and handles connections and
// builds the errors its callers see. The functions marked optional may
// be nil; the others are required. A Set keeps cfg and never changes it.
type Config struct {
	Settings Settings // with the defaults filled in (Settings.WithDefaults)
	// MaxReplicaLag is pool_max_replica_lag: a standby that lags more
	// gets no calls; 0 means no bound.
	MaxReplicaLag time.Duration
	// ConnectTimeout is connect_timeout; 0 when not set, and then the
	// Set bounds its background attempts by DefaultConnectTimeout. It
	// also bounds a role check (twice it, at least 5s).
	ConnectTimeout time.Duration
	// Hosts names each host ("host:port" or the socket path), in the
	// DSN's order; a Set has one Host per entry.
	Hosts []string
	// Attrs is the DSN's target_session_attrs ("any" when empty).
	Attrs string
	// Random is load_balance_hosts=random: a call goes to a host chosen
	// at random among those that match, not the first.
	Random bool

	// Connect opens a connection to h's host; monitor asks for the
	// role check's connection (target_session_attrs=any, see
	// Host.NoteRole). A connection for the Pool on a Set of several
	// hosts must report 25006 errors to h.NoteReadOnly and changes of
	// in_hot_standby to h.NoteRole before it is used. It returns a nil
	// Backend with an error.
	Connect func(ctx context.Context, h *Host, monitor bool) (Backend, error)
	// Reset resets the session of a connection given back by Acquire's
	// holder, or taken for Acquire after a Pool transaction ran on it;
	// it closes the connection when the reset fails. A panic goes on
	// (the engine gives the connection back first).
	Reset func(ctx context.Context, b Backend)
	// Prepare, optional, is Config.PrepareConn: a connection taken for
	// Acquire or Begin is handed out only when it returns true.
	Prepare func(ctx context.Context, b Backend) (bool, error)
	// AfterRelease, optional, is Config.AfterRelease: a connection given
	// back is closed when it returns false.
	AfterRelease func(b Backend) bool
	// TraceTake, optional, is called as a Take starts on a host, with
	// the host's name; the Take runs under the context it returns (a
	// connection opened for it is traced under it), and end is called
	// with its outcome (b nil on failure).
	TraceTake func(ctx context.Context, host string) (tctx context.Context, end func(b Backend, err error))

	// ErrClosed is the error of calls on a closed Set (pgline's
	// ErrPoolClosed), wrapped by NotSent.
	ErrClosed error
	// NotSent marks an error as that of a call nothing of which reached
	// the server (SafeToRetry); an error marked already stays as it is.
	// Every error the engine returns for a call that waited or found no
	// connection is marked.
	NotSent func(error) error
	// Final reports whether a failed connection attempt's error is one
	// that a later attempt would get again (a server refusing the
	// session for another reason than too many connections): the calls
	// waiting for the host get it at once instead of waiting on.
	Final func(error) bool
	// NoHost builds the error of a call for attrs that found no host
	// matching: misses has one entry per host, in order, saying why.
	NoHost func(attrs string, misses []Miss) error
}

// Miss is why one host does not take a call (see Config.NoHost): Err
// when it is down or not checked yet, otherwise Mismatch, the reason it
// does not match target_session_attrs.
type Miss struct {
	Host     string
	Err      error
	Mismatch string
}

// Settings are a Pool's pool_* settings, in the engine's form. A limit
// turned off is NoLimit.
type Settings struct {
	MaxConns, MinConns int
	MaxLifetime        time.Duration // pool_max_conn_lifetime
	MaxIdle            time.Duration // pool_max_conn_idle_time
	HealthPeriod       time.Duration // pool_health_check_period
	MaxPipeline        int           // statements in flight per connection
	IdleCheck          time.Duration // pool_idle_check
}

// NoLimit is a pool_max_conn_lifetime, pool_max_conn_idle_time or
// pool_idle_check of 0: no connection is ever that old.
const NoLimit = time.Duration(math.MaxInt64)

// WithDefaults fills in the settings left zero: pool_max_conns
// max(4, GOMAXPROCS), pool_max_pipeline 64, a lifetime of 1h, an idle
// time of 30m, a health check period of 1m (also when it is NoLimit)
// and pool_idle_check 1s.
func (s Settings) WithDefaults() Settings {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if s.MaxConns == 0 {
		s.MaxConns = max(4, runtime.GOMAXPROCS(0))
	}
	if s.MaxPipeline == 0 {
		s.MaxPipeline = 64
	}
	def(&s.MaxLifetime, time.Hour)
	def(&s.MaxIdle, 30*time.Minute)
	def(&s.HealthPeriod, time.Minute)
	def(&s.IdleCheck, time.Second)
	if s.HealthPeriod == NoLimit {
		s.HealthPeriod = time.Minute
	}
	return s
}
