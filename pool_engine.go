package pgline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/pool"
	"github.com/pgline/pgline/internal/wire"
)

// The Pool's engine is internal/pool: the connections of each host, the
// statements and Acquire and Begin calls waiting for them, and the hosts'
// roles. This file is all it knows of pgline: a Conn seen as a
// pool.Backend, and the pool.Config of a Pool (newPoolSet), whose
// functions open, reset and prepare connections, trace Acquire and make
// the errors a caller sees (ErrPoolClosed, notSent, ConnectError).

// backend is a Conn as the Pool's engine sees it (pool.Backend): a
// pointer conversion of *Conn, so that a Conn handed to the engine costs
// no allocation, and Conn's exported methods stay its own.
type backend Conn

// backendOf returns c as a pool.Backend.
func backendOf(c *Conn) pool.Backend { return (*backend)(c) }

// connOf returns the Conn of a connection of the Pool's engine.
func connOf(pc *pool.Conn) *Conn { return asConn(pc.Backend()) }

// asConn returns the Conn b is; every Backend the engine holds is one
// (see newPoolSet).
func asConn(b pool.Backend) *Conn { return (*Conn)(b.(*backend)) }

// Close closes the connection (Conn.Close).
func (b *backend) Close() error { return (*Conn)(b).Close() }

// IsClosed reports whether the connection is closed (Conn.IsClosed).
func (b *backend) IsClosed() bool { return (*Conn)(b).IsClosed() }

// TxStatus is the connection's transaction status (Conn.TxStatus).
func (b *backend) TxStatus() byte { return (*Conn)(b).TxStatus() }

// ParameterStatus returns a parameter the server reported
// (Conn.ParameterStatus).
func (b *backend) ParameterStatus(name string) string { return (*Conn)(b).ParameterStatus(name) }

// UsableAfterIdle checks a connection that sat idle (Conn.usableAfterIdle).
func (b *backend) UsableAfterIdle(ctx context.Context) bool {
	return (*Conn)(b).s.UsableAfterIdle(ctx)
}

// PeerLost returns the connection's failure when its server stopped
// answering (Session.PeerLost).
func (b *backend) PeerLost() error { return (*Conn)(b).s.PeerLost() }

// DropNotifications discards the notifications kept.
func (b *backend) DropNotifications() { (*Conn)(b).s.DropNotifications() }

// SimpleQuery runs sql untraced (the role check).
func (b *backend) SimpleQuery(ctx context.Context, sql string, onRow func(*wire.DataRow) error) error {
	_, err := (*Conn)(b).s.SimpleQueryUntraced(ctx, nil, sql, onRow, nil)
	return err
}

// poolSet is a Pool's engine and its views (Target), shared by the Pool
// and every view.
type poolSet struct {
	eng   *pool.Set
	mu    sync.Mutex       // protects views
	views map[string]*Pool // one per attrs
}

// newPoolSet starts the engine of own, the Pool's own copy of the Config.
// With one host, its connections are made with own (and its
// target_session_attrs); with several, each host's with that host only
// and target_session_attrs=any, so that they serve every view. The role
// checks' connections use target_session_attrs=any.
func newPoolSet(own *Config) *poolSet {
	n := len(own.Hosts)
	conns, mons := make([]*Config, n), make([]*Config, n)
	if n == 1 {
		conns[0], mons[0] = own, own
		if own.TargetSessionAttrs != "" && own.TargetSessionAttrs != "any" {
			mc := *own
			mc.TargetSessionAttrs = "any"
			mons[0] = &mc
		}
	} else {
		for i, h := range own.Hosts {
			hc := *own
			hc.Hosts = []HostConfig{h}
			hc.TargetSessionAttrs = "any"
			conns[i], mons[i] = &hc, &hc
		}
	}
	labels := make([]string, n)
	for i, h := range own.Hosts {
		labels[i] = hostLabel(h)
	}
	cfg := &pool.Config{
		Settings:       own.Pool.settings(),
		MaxReplicaLag:  own.Pool.MaxReplicaLag,
		ConnectTimeout: own.ConnectTimeout,
		Hosts:          labels,
		Attrs:          own.TargetSessionAttrs,
		Random:         own.LoadBalanceHosts == "random",
		Connect: func(ctx context.Context, h *pool.Host, monitor bool) (pool.Backend, error) {
			if monitor {
				return connectBackend(ConnectConfig(ctx, mons[h.Index()]))
			}
			c, err := ConnectConfig(ctx, conns[h.Index()])
			if err == nil && n > 1 {
				c.s.SetHostHooks(h.NoteReadOnly, func() { h.NoteRole(backendOf(c)) })
			}
			return connectBackend(c, err)
		},
		Reset: func(ctx context.Context, b pool.Backend) {
			resetPooled(ctx, asConn(b), own.AfterConnect)
		},
		ErrClosed: ErrPoolClosed,
		NotSent:   session.NotSent,
		Final:     finalConnectErr,
		NoHost:    noHostErr,
	}
	if prepare := own.PrepareConn; prepare != nil {
		cfg.Prepare = func(ctx context.Context, b pool.Backend) (bool, error) { return prepare(ctx, asConn(b)) }
	}
	if after := own.AfterRelease; after != nil {
		cfg.AfterRelease = func(b pool.Backend) bool { return after(asConn(b)) }
	}
	if own.Tracer != nil {
		cfg.TraceTake = func(ctx context.Context, host string) (context.Context, func(pool.Backend, error)) {
			tctx, ev := traceStart(ctx, own, TraceEvent{Kind: TraceAcquire, Host: host, Database: own.Database})
			return tctx, func(b pool.Backend, err error) {
				if ev != nil && b != nil {
					ev.setConn(asConn(b))
				}
				traceEnd(tctx, own, ev, CommandTag{}, err)
			}
		}
	}
	return &poolSet{eng: pool.NewSet(cfg), views: make(map[string]*Pool)}
}

// connectBackend returns ConnectConfig's outcome for the engine: a nil
// Backend when there is no Conn.
func connectBackend(c *Conn, err error) (pool.Backend, error) {
	if c == nil {
		return nil, err
	}
	return backendOf(c), err
}

// finalConnectErr reports whether a Pool's connection attempt failed in a
// way the next attempt would too, so that the calls waiting for the host
// get the error at once: a server refused the session (see
// refusedByServer) for another reason than too many connections (53300).
func finalConnectErr(err error) bool {
	var pgErr *PgError
	return refusedByServer(err) && !(errors.As(err, &pgErr) && pgErr.Code == "53300")
}

// noHostErr is the error of a call for attrs that found no host matching:
// a ConnectError naming each host and why.
func noHostErr(attrs string, misses []pool.Miss) error {
	var ce ConnectError
	for _, m := range misses {
		why := m.Err
		if why == nil {
			why = &sessionAttrsError{attrs, m.Mismatch}
		}
		ce.Attempts = append(ce.Attempts, HostError{Host: m.Host, Err: why})
	}
	return &ce
}

// view returns the Pool that routes to the hosts matching attrs.
func (s *poolSet) view(cfg *Config, attrs string) *Pool {
	if attrs == "" {
		attrs = "any"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.views[attrs]; v != nil {
		return v
	}
	v := &Pool{cfg: cfg, set: s, attrs: attrs}
	switch attrs {
	case "any", "read-write", "read-only", "primary", "standby", "prefer-standby":
	default:
		v.err = fmt.Errorf("pgline: Pool.Target: invalid target_session_attrs %q", attrs)
		return v
	}
	v.direct = s.eng.Direct(attrs)
	s.views[attrs] = v
	return v
}

// PoolConfig is a Pool's settings (Config.Pool), the pool_* DSN keys.
// Zero fields take the defaults; a negative duration turns its limit off,
// as 0 does in the DSN.
type PoolConfig struct {
	// MaxConns is the most connections open at once (pool_max_conns;
	// default max(4, GOMAXPROCS)).
	MaxConns int
	// MinConns are kept open (pool_min_conns; default 0).
	MinConns int
	// MaxConnLifetime closes a connection this old once it is idle
	// (pool_max_conn_lifetime; default 1h).
	MaxConnLifetime time.Duration
	// MaxConnIdleTime closes a connection idle this long, above MinConns
	// (pool_max_conn_idle_time; default 30m).
	MaxConnIdleTime time.Duration
	// HealthCheckPeriod is how often those limits are applied
	// (pool_health_check_period; default 1m).
	HealthCheckPeriod time.Duration
	// MaxPipeline is the most statements in flight on one connection
	// (pool_max_pipeline; default 64).
	MaxPipeline int
	// IdleCheck: a connection idle this long is checked before use
	// (pool_idle_check; default 1s).
	IdleCheck time.Duration
	// MaxReplicaLag: a standby whose replay lag exceeds it gets no
	// statements (pool_max_replica_lag; default none). With it, the
	// hosts' roles and lags are checked at least twice per
	// MaxReplicaLag (see Pool.Target).
	MaxReplicaLag time.Duration
}

// settings returns pc with the defaults filled in, in the engine's form
// (a limit turned off is pool.NoLimit).
func (pc PoolConfig) settings() pool.Settings {
	lim := func(d time.Duration) time.Duration {
		if d < 0 {
			return pool.NoLimit
		}
		return d
	}
	return pool.Settings{
		MaxConns: pc.MaxConns, MinConns: pc.MinConns,
		MaxLifetime: lim(pc.MaxConnLifetime), MaxIdle: lim(pc.MaxConnIdleTime),
		HealthPeriod: lim(pc.HealthCheckPeriod), MaxPipeline: pc.MaxPipeline,
		IdleCheck: lim(pc.IdleCheck),
	}.WithDefaults()
}

// validate reports settings no Pool can run with.
func (pc PoolConfig) validate() error {
	s := pc.settings()
	switch {
	case pc.MaxConns < 0 || pc.MinConns < 0 || pc.MaxPipeline < 0:
		return errors.New("pgline: Config.Pool: negative MaxConns, MinConns or MaxPipeline")
	case s.MinConns > s.MaxConns:
		return errors.New("pgline: Config.Pool: MinConns exceeds MaxConns")
	}
	return nil
}

// resetSession clears the session state an Acquire may have left: the
// cursors, settings, LISTENs, advisory locks and temporary tables, in one
// round trip.
const resetSession = "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; UNLISTEN *; " +
	"SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES"

// resetPrepared is resetSession that also deallocates the statements
// prepared with SQL PREPARE (from_sql: the holder's, or AfterConnect's,
// which runs again after it), still in one round trip; pgline's own,
// prepared with the protocol's Parse, stay prepared and cached. It is
// sent instead of resetSession only when a statement that may have
// prepared one was queued (stmtCache.sqlPrepared): the server lists every
// prepared statement to find them, which costs about 6µs for each of
// pgline's (3 ms with 500 cached).
const resetPrepared = resetSession + "; " +
	"DO $$DECLARE n text; BEGIN FOR n IN SELECT name FROM pg_catalog.pg_prepared_statements WHERE from_sql " +
	"LOOP EXECUTE pg_catalog.format('DEALLOCATE %I', n); END LOOP; END$$"

// resetTimeout bounds Release's reset of a connection: past it, the
// connection is closed instead.
const resetTimeout = 5 * time.Second

// resetPooled resets c's session (resetSession, or resetPrepared when a
// statement that may have prepared one with SQL PREPARE was queued since
// the last) and runs afterConnect (Config.AfterConnect) again, within
// resetTimeout and ctx, or closes it, and drops the notifications
// received for the last holder: they are not the next one's. When
// afterConnect panics, the connection is closed and the panic goes on:
// the caller gives the connection back in a defer (pool.Conn.Reset).
func resetPooled(ctx context.Context, c *Conn, afterConnect func(context.Context, *Conn) error) {
	ctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	reset := resetSession
	prepared := c.s.PreparedBySQL()
	if prepared {
		reset = resetPrepared
	}
	if _, err := c.simpleQueryNoting(ctx, nil, reset, nil, c.s.ResetNote(prepared)); err != nil {
		c.Close()
	} else if afterConnect != nil {
		runAfterConnect(ctx, c, afterConnect)
	}
	c.s.DropNotifications()
}

// runAfterConnect runs afterConnect on the connection just reset: an
// error closes it, and so does a panic, which goes on.
func runAfterConnect(ctx context.Context, c *Conn, afterConnect func(context.Context, *Conn) error) {
	done := false
	defer func() {
		if !done {
			c.Close()
		}
	}()
	if err := afterConnect(ctx, c); err != nil {
		c.Close()
	}
	done = true
}
