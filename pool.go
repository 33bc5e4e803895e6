package pgline

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/pool"
	"github.com/pgline/pgline/internal/sqllex"
)

// Pool is a set of connections that multiplexes statements: each statement
// goes to the connection with the fewest requests in flight, where it is
// pipelined with the others, so a few connections serve many goroutines
// without queueing them one round trip at a time. Connections are opened
// as load needs them, up to pool_max_conns. When every connection has
// pool_max_pipeline statements in flight, statements wait in one queue
// and are served in arrival order, one per freed slot, however many
// goroutines wait. A Pool is safe for concurrent use.
//
// A connection whose queue waits on something else than the server's work
// on it is held: it has Rows of a Query or SendBatch not closed yet (user
// code reads them, and the statements behind wait for it), or no statement
// of it has finished for 100ms (one waits for a lock, or runs long; libpq
// has no such setting). The longer a connection has not answered, the
// fewer new statements it gets; a held one gets none while another
// connection can take them or can be opened, and Acquire, Begin and
// BeginTx wait for one that is not held to drain (or open one, below
// pool_max_conns). While a connection is being opened for the Pool,
// statements wait for it, or for the first connection free of others'
// statements, rather than being pipelined behind statements that have not
// answered yet. This only decides where a statement not sent yet goes:
// statements already queued behind a held connection wait for it.
//
// Statements routed by the Pool share connections: session state needs a
// connection of its own, from Acquire (SET, temporary tables, advisory
// locks, LISTEN) or Begin (a transaction). A routed text that would leave
// its connection in a transaction block it opened (a raw BEGIN) is
// refused with ErrRoutedBlock, unsent.
//
// DSN parameters: pool_max_conns (default max(4, GOMAXPROCS)),
// pool_min_conns (0), pool_max_conn_lifetime (1h), pool_max_conn_idle_time
// (30m), pool_health_check_period (1m), pool_max_pipeline (requests in
// flight per connection, default 64), pool_idle_check (1s: a connection
// idle that long is checked before use, see below), pool_max_replica_lag
// (none, see Target). A lifetime or idle time of 0 is no limit; a health
// check period of 0 is the default; pool_idle_check=0 turns the check off.
//
// The server may end a session the Pool holds (idle_session_timeout,
// pg_terminate_backend, a restart, a failover). A connection idle for
// pool_idle_check is checked before a statement is routed to it, and any
// idle connection before Acquire, Begin or BeginTx hands it out, with a
// look at its socket (no round trip unless the server sent something). A statement
// that failed with an error marked SafeToRetry because its connection
// broke is sent again on another connection, and Begin and BeginTx
// start again, as long as the ctx allows. While no host accepts a
// connection (or none matches target_session_attrs), the Pool retries
// with jittered exponential backoff (10ms doubling up to 1s), and a call
// whose ctx has a deadline waits for it; a call without one, or a host
// refusing the session (a wrong password, an unknown database), gets the
// error at once: while the next attempt waits out its backoff, the last
// attempt's. A connection attempt the Pool makes gives up after
// connect_timeout, or after 10s when it is not set, so that a host that
// accepts connections but never answers does not hold a slot.
//
// # Several hosts
//
// A Pool made from a DSN with several hosts keeps connections to each
// host it reaches, pool_max_conns and pool_min_conns per host, and knows
// each host's role: primary or standby (pg_is_in_recovery()), read-only
// or not (transaction_read_only), and a standby's replay lag. It checks
// them with one small query per host, on a connection of its own to the
// host (besides pool_max_conns), when the Pool starts, every
// pool_health_check_period (and at least twice per pool_max_replica_lag),
// and soon after a sign of change: a connection to the host lost, a
// failed connection attempt, a 25006 error (read-only transaction) on a
// host believed writable. A session's own word counts at once: with
// PostgreSQL 14 and later, a connection opened to a host whose role
// changed since its check (a former primary restarted as a standby)
// reports it (in_hot_standby, default_transaction_read_only) before it
// serves anyone, and a connection open across a promotion reports it
// with its next reply; the host's role is then taken from it, and
// checked. Each statement goes to a host that matches
// the Pool's target_session_attrs (see Target): the first in the DSN's
// order, or one at random with load_balance_hosts=random; then to one of
// that host's connections as above, once more checked against the host's
// role when the connection is in hand. A statement waiting for a host that
// goes down or changes role meanwhile, and one that failed with an error
// marked SafeToRetry because its connection broke, choose a host again;
// a statement that may have run is never sent again. While no host
// matches (a failover: the primary gone, a standby not promoted yet),
// the roles are checked every 10ms doubling up to 250ms, and a call
// waits as above. BeforeConnect sees one host at a time.
type Pool struct {
	cfg *Config  // the Pool's own copy (every host; see Config)
	set *poolSet // the engine (the hosts) and the views, shared by the Pool and its views
	// attrs is the target_session_attrs this view routes by.
	attrs string
	// direct is the one host every call goes to when there is no choice
	// to make (one host, and attrs the DSN's or any, see pool.Set.Direct):
	// then a call costs one pointer more than on a pool.Host.
	direct *pool.Host
	err    error // an invalid attrs: every call fails with it
}

// ErrPoolClosed is returned by calls on a closed Pool.
var ErrPoolClosed = errors.New("pgline: pool closed")

// ErrRoutedBlock is the error of a text given to a Pool's Query,
// QueryRow, Exec or SendBatch that would leave its session in a
// transaction block it opened (BEGIN or START TRANSACTION without the
// COMMIT that ends it, see sqllex.Info.OpensBlock): the Pool routes
// statements to shared connections, where the statements of other
// callers would run inside that block. The text is never sent. Use
// Pool.Begin for a transaction, or Pool.Acquire for raw transaction
// control on a connection of one's own. A text that begins and ends its
// block ("BEGIN; ...; COMMIT"), or a batch whose statements do, is
// routed.
var ErrRoutedBlock = errors.New("pgline: a statement the Pool routes may not open a transaction block it does not end (BEGIN, START TRANSACTION): other callers' statements would run inside it; use Pool.Begin, or Pool.Acquire for raw transaction control")

// routable returns ErrRoutedBlock when sql may not be routed: it would
// leave a shared connection in a transaction block it opened.
func routable(sql string) error {
	if sqllex.OpensBlock(sql) {
		return ErrRoutedBlock
	}
	return nil
}

// batchRoutable is routable for a batch: its statements, run in turn
// (read as one text, as endsBlock reads them), must not leave a block
// open.
func batchRoutable(b *Batch) error {
	for i := range b.items {
		if !sqllex.OpensBlock(b.items[i].SQL) {
			continue
		}
		sqls := make([]string, len(b.items))
		for j := range b.items {
			sqls[j] = b.items[j].SQL
		}
		if sqllex.Scan(strings.Join(sqls, "\n;\n")).OpensBlock {
			return ErrRoutedBlock
		}
		return nil
	}
	return nil
}

// NewPool creates a pool for dsn (see ParseConfig, and Pool for the pool_*
// parameters). Connections are opened when needed; pool_min_conns of them
// right away, in the background.
func NewPool(ctx context.Context, dsn string) (*Pool, error) {
	cfg, err := ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return NewPoolConfig(ctx, cfg)
}

// NewPoolConfig creates a pool for cfg.
func NewPoolConfig(ctx context.Context, cfg *Config) (*Pool, error) {
	if err := cfg.Pool.validate(); err != nil {
		return nil, err
	}
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("pgline: config has no host")
	}
	own := *cfg // with the pooler flags its connections share
	own.Hosts = slices.Clone(cfg.Hosts)
	own.RuntimeParams = maps.Clone(cfg.RuntimeParams)
	own.proxies = new(session.ProxyFlags)
	if len(own.Hosts) > 1 {
		switch own.TargetSessionAttrs {
		case "", "any", "read-write", "read-only", "primary", "standby", "prefer-standby":
		default:
			return nil, errors.New("pgline: invalid target_session_attrs " + own.TargetSessionAttrs)
		}
	}
	s := newPoolSet(&own)
	return s.view(&own, own.TargetSessionAttrs), nil
}

// Target returns a view of the Pool that sends its statements, Acquire
// and Begin to the hosts that match attrs, one of target_session_attrs'
// values: any, read-write, read-only, primary, standby, prefer-standby
// (a standby, else the primary). The view shares the Pool's connections,
// settings and Close; the Pool itself routes by the DSN's
// target_session_attrs. A standby whose replay lag exceeds
// pool_max_replica_lag matches none of them.
//
// The lag is measured at each role check (see Pool): a standby is
// behind from the first check at which the primary was past the WAL
// position the standby has replayed, so a standby that has replayed all
// the primary wrote has lag 0 however long nothing was written. When no
// primary is known, it is the age of the last transaction the standby
// replayed, if it has received WAL it has not replayed yet.
//
// When no host matches (every standby lagging, for Target("standby")),
// a call whose ctx has a deadline waits until one does or the deadline
// passes; a call without one gets an error at once, naming each host and
// why it does not match. Both errors are SafeToRetry.
//
// A Pool with one host makes its connections as the DSN's
// target_session_attrs asks, and its views use those: they route to the
// host when its role matches their attrs.
//
// An invalid attrs gives a view whose every call fails. Views are made
// once per attrs: Target may be called for each statement.
func (p *Pool) Target(attrs string) *Pool { return p.set.view(p.cfg, attrs) }

// routeChecked takes a slot for one statement on a host of the view (see
// pool.Host.Route, and pool.Set.Route for the choice of a host); rows
// reports a Query or SendBatch, whose Rows count open from routing. The
// statement ends with done.
func (p *Pool) routeChecked(ctx context.Context, rows bool) (*pool.Conn, error) {
	if hp := p.direct; hp != nil {
		return hp.Route(ctx, rows)
	}
	if p.err != nil {
		return nil, p.err
	}
	return p.set.eng.Route(ctx, p.attrs, rows)
}

// take takes a connection of a host of the view for exclusive use (see
// pool.Host.Take); with reset (Acquire), a connection a Pool transaction
// ran on has its session reset before PrepareConn runs.
func (p *Pool) take(ctx context.Context, reset bool) (*pool.Conn, error) {
	if hp := p.direct; hp != nil {
		return hp.Take(ctx, reset)
	}
	if p.err != nil {
		return nil, p.err
	}
	return p.set.eng.Take(ctx, p.attrs, reset)
}

// giveBack returns a connection from take.
func (p *Pool) giveBack(pc *pool.Conn) { pc.GiveBack() }

// done ends a statement routed to pc (see pool.Conn.Done).
func (p *Pool) done(pc *pool.Conn, rows bool) { pc.Done(rows) }

// retry runs op on a routed connection, and again on another while it
// fails before reaching the server because its connection broke, as long
// as ctx allows (and a bounded number of times: a server that ends every
// session at once must not keep a call without deadline for ever).
func (p *Pool) retry(ctx context.Context, op func(pc *pool.Conn) error) error {
	return p.retryRouted(ctx, false, op)
}

// retryRows is retry for a Query: its Rows count open on the connection
// from routing, and op ends a failed attempt with done(pc, true).
func (p *Pool) retryRows(ctx context.Context, op func(pc *pool.Conn) error) error {
	return p.retryRouted(ctx, true, op)
}

// retryRouted is retry, for a Query when rows is set.
func (p *Pool) retryRouted(ctx context.Context, rows bool, op func(pc *pool.Conn) error) error {
	for attempt := 0; ; attempt++ {
		pc, err := p.routeChecked(ctx, rows)
		if err != nil {
			return err
		}
		err = op(pc)
		if err == nil || !p.retries(ctx, attempt, pc, err) {
			return err
		}
	}
}

// retries reports whether a call that failed with err on pc (attempt
// counting from 0) is made again: nothing of it ran (SafeToRetry) because
// pc broke, and its ctx allows. (A 25006 error, read-only transaction,
// ran: it is not made again; with several hosts, the roles are checked
// at once, see pool.Host.NoteReadOnly.)
func (p *Pool) retries(ctx context.Context, attempt int, pc *pool.Conn, err error) bool {
	return session.SafeToRetry(err) && p.mayRetry(ctx, attempt, pc, err)
}

// mayRetry reports whether a call whose connection pc broke with err is
// made again on another: not after a protocol error, which would break
// the next connection the same way (see ProtocolError); its ctx allows;
// and a bounded number of times (a server that ends every session at
// once must not hold a call without deadline for ever).
func (p *Pool) mayRetry(ctx context.Context, attempt int, pc *pool.Conn, err error) bool {
	return pc.Backend().IsClosed() && !isProtocolError(err) && ctx.Err() == nil && attempt < pc.Host().MaxConns()+2
}

// Query runs sql on one of the pool's connections (see Conn.Query). The
// connection goes on serving other statements, pipelined behind these
// rows: close them promptly.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	if err := routable(sql); err != nil {
		return failedRows(err), err
	}
	var rows *Rows
	err := p.retryRows(ctx, func(pc *pool.Conn) error {
		r, err := connOf(pc).Query(ctx, sql, args...)
		if err != nil {
			pc.Done(true)
			return err
		}
		r.pooled = pc // counted open since it was routed; Rows.finish ends it
		rows = r
		return nil
	})
	if err != nil {
		return failedRows(err), err
	}
	return rows, nil
}

// QueryRow runs sql on one of the pool's connections (see Conn.QueryRow).
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	row := &Row{} // QueryRow stays inlinable: the Row on the caller's stack
	p.queryRow(ctx, row, sql, args)
	return row
}

// queryRow notes in row what QueryRow runs and runs it. It is not
// inlined, so that QueryRow is, and the Row stays on its caller's stack
// (as Conn.QueryRow's).
//
//go:noinline
func (p *Pool) queryRow(ctx context.Context, row *Row, sql string, args []any) {
	row.ctx, row.sql, row.args, row.pool = ctx, sql, args, p
	if row.err = routable(sql); row.err != nil {
		return
	}
	p.runRow(row)
}

// runRow runs row's statement on a routed connection, for QueryRow and
// for a resend by Row.Scan (routed again: the connection the row came
// from may be held by Acquire or Begin by then).
func (p *Pool) runRow(row *Row) {
	row.err = p.retry(row.ctx, func(pc *pool.Conn) error {
		c := connOf(pc)
		row.c = c
		err := c.query(row.ctx, nil, &row.rows, row.sql, row.args)
		if err != nil {
			pc.Done(false)
			return err
		}
		pc.HoldRow() // read until Scan closes it, which ends the statement
		row.rows.pooled = pc
		return nil
	})
}

// Exec runs sql on one of the pool's connections (see Conn.Exec).
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	if err := routable(sql); err != nil {
		return CommandTag{}, err
	}
	var tag CommandTag
	err := p.retry(ctx, func(pc *pool.Conn) error {
		var err error
		tag, err = connOf(pc).Exec(ctx, sql, args...)
		pc.Done(false)
		return err
	})
	return tag, err
}

// SendBatch sends b on one of the pool's connections (see Conn.SendBatch).
func (p *Pool) SendBatch(ctx context.Context, b *Batch) *BatchResults {
	if err := batchRoutable(b); err != nil {
		return &BatchResults{err: err, closed: true}
	}
	pc, err := p.routeChecked(ctx, true)
	if err != nil {
		return &BatchResults{err: err, closed: true}
	}
	br := connOf(pc).SendBatch(ctx, b)
	if br.rep.Req == nil {
		pc.Done(true)
		return br
	}
	br.pooled = pc
	return br
}

// PoolConn is a connection held exclusively from a Pool by Acquire. Its
// session state is its own until Release, which resets it to the state
// Config.AfterConnect left (RESET ALL, UNLISTEN *, advisory locks,
// temporary tables, statements prepared with SQL PREPARE, then
// AfterConnect again; pgline's own prepared statements stay).
type PoolConn struct {
	*Conn
	pc       *pool.Conn
	released atomic.Bool
}

// Acquire takes a connection out of the pool for the caller's exclusive
// use, waiting when every connection is busy and the pool is full. Release
// it when done. A connection a Pool transaction ran on since its session
// was last reset is reset first (as Release resets it, AfterConnect
// included), so that session state set in the transaction (LISTEN, SET)
// is not the holder's.
func (p *Pool) Acquire(ctx context.Context) (*PoolConn, error) {
	pc, err := p.take(ctx, true)
	if err != nil {
		return nil, err
	}
	return &PoolConn{Conn: connOf(pc), pc: pc}, nil
}

// Release resets the connection's session state and returns it to the
// pool: the session is as Config.AfterConnect left it when the connection
// was made. The reset (RESET ALL, UNLISTEN *, advisory locks, temporary
// tables, cursors, the statements prepared with SQL PREPARE; pgline's own
// prepared statements stay) is one round trip, after which AfterConnect,
// when set, runs again; an error of either closes the connection (a panic
// of AfterConnect too, and goes on). A connection with requests still in
// flight (a statement given up at its deadline, whose reply is being
// drained from a server that may not answer) is closed instead, so that
// Release does not wait for it (but for the connect's pooler check, a
// request of the connection's own: Release waits for its answer); the
// check's wait, the reset and AfterConnect are each bounded by
// resetTimeout (5s). It is safe to call more than once.
func (pc *PoolConn) Release() {
	if !pc.released.CompareAndSwap(false, true) {
		return
	}
	defer pc.pc.Release() // also when AfterConnect panics
	if c := pc.Conn; !c.IsClosed() && c.TxStatus() == 'I' {
		// The connect's pooler check is the connection's own request,
		// not a use left in flight: its answer comes first (no timer
		// when it came long ago, as it nearly always has).
		select {
		case <-c.s.PIDChecked():
		default:
			wait := time.NewTimer(resetTimeout)
			select {
			case <-c.s.PIDChecked():
			case <-wait.C:
			}
			wait.Stop()
		}
		if c.s.Busy() {
			c.Close()
		} else {
			pc.pc.Reset(context.Background())
		}
	}
}

// Begin starts a transaction on a connection taken from the pool for it;
// Commit or Rollback returns the connection. The connection is not reset
// then: session state set inside the transaction (SET without LOCAL,
// LISTEN, temporary tables kept past commit, session advisory locks)
// stays with it and reaches the statements routed to it afterwards (an
// Acquire of it resets it first). Use SET LOCAL and transaction-level
// locks, or Acquire for session state.
func (p *Pool) Begin(ctx context.Context) (*Tx, error) {
	return p.BeginTx(ctx, TxOptions{})
}

// BeginTx starts a transaction with opts (see Pool.Begin).
func (p *Pool) BeginTx(ctx context.Context, opts TxOptions) (*Tx, error) {
	for attempt := 0; ; attempt++ {
		pc, err := p.take(ctx, false)
		if err != nil {
			return nil, err
		}
		tx, err := connOf(pc).BeginTx(ctx, opts)
		if err != nil {
			pc.GiveBack()
			// A BEGIN has no effect that outlives its session: on a
			// connection that broke, it is made again on another, even
			// when it may have reached the server (see mayRetry).
			if p.mayRetry(ctx, attempt, pc, err) {
				continue
			}
			return nil, err
		}
		tx.onEnd = func() {
			pc.MarkTxRan()
			pc.Release()
		}
		return tx, nil
	}
}

// HostRole is a host's part in replication, as a Pool last saw it.
type HostRole uint8

const (
	HostUnknown HostRole = iota // not checked yet
	HostPrimary                 // not in recovery
	HostStandby                 // a hot standby, in recovery
)

// String returns "unknown", "primary" or "standby".
func (r HostRole) String() string {
	switch r {
	case HostPrimary:
		return "primary"
	case HostStandby:
		return "standby"
	}
	return "unknown"
}

// PoolStat is a snapshot of a Pool's counters, summed over its hosts.
type PoolStat struct {
	TotalConns    int // open, being opened, or held
	IdleConns     int // open, routable, with nothing in flight
	AcquiredConns int // held by Acquire or Begin
	OpeningConns  int // being opened
	InFlight      int // statements in flight on routable connections
	Waiting       int // statements waiting for a slot (every connection full)
	// AcquireWaiting counts the Acquire, Begin and BeginTx calls waiting
	// for a connection of their own; they are served in arrival order.
	AcquireWaiting int
	MaxConns       int
	// PoolerHosts are the hosts found behind a transaction pooler
	// (PgBouncer): their connections describe statements instead of
	// preparing them (see statement_cache_mode).
	PoolerHosts []string
	// Hosts has one entry per host of the DSN, in its order.
	Hosts []HostStat
}

// HostStat is what a Pool knows of one host, and its counters there.
type HostStat struct {
	Host string // "host:port", or the socket path
	// Role is what the last role check found; HostUnknown before the
	// first. A Pool with one host checks it only once a Target view
	// needs to know.
	Role HostRole
	// ReadOnly reports that new sessions are read-only
	// (transaction_read_only): a standby, or default_transaction_read_only.
	ReadOnly bool
	// Lag is a standby's replay lag (see Pool.Target): 0 when it has
	// replayed all the primary had written at the last check.
	Lag time.Duration
	// Checked is when the last role check answered (zero: never).
	Checked time.Time
	// Down reports that the last connection attempt or role check
	// failed, with Err.
	Down bool
	Err  error

	// The counters, as PoolStat's; the connection of the role checks is
	// not among them.
	TotalConns    int // open, being opened, or held
	IdleConns     int // open, routable, with nothing in flight
	AcquiredConns int // held by Acquire or Begin
	InFlight      int // statements in flight on routable connections
	Waiting       int // statements waiting for a slot on this host
}

// Stat returns the pool's counters (the whole Pool's, for a view too).
func (p *Pool) Stat() PoolStat {
	hosts := p.set.eng.Hosts()
	s := PoolStat{PoolerHosts: p.cfg.proxies.Hosts(), Hosts: make([]HostStat, 0, len(hosts))}
	now := time.Now()
	for _, hp := range hosts {
		n, st := hp.Stat(), hp.State(now)
		s.Hosts = append(s.Hosts, HostStat{
			Host: hp.Label(), Role: HostRole(st.Role), ReadOnly: st.ReadOnly, Lag: st.Lag, Checked: st.Checked,
			Down: st.Down, Err: st.Err,
			TotalConns: n.Total, IdleConns: n.Idle, AcquiredConns: n.Held, InFlight: n.InFlight, Waiting: n.Waiting,
		})
		s.TotalConns += n.Total
		s.IdleConns += n.Idle
		s.AcquiredConns += n.Held
		s.OpeningConns += n.Opening
		s.InFlight += n.InFlight
		s.Waiting += n.Waiting
		s.AcquireWaiting += n.TakeWaiting
		s.MaxConns += n.MaxConns
	}
	return s
}

// Close stops the pool, and every view of it: new calls fail with
// ErrPoolClosed, statements in flight and held connections finish (Close
// waits for them), then every connection is closed.
func (p *Pool) Close() { p.set.eng.Close() }
