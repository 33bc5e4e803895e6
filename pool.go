package pgline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
// Statements routed by the Pool share connections: session state needs a
// connection of its own, from Acquire (SET, temporary tables, advisory
// locks, LISTEN) or Begin (a transaction).
//
// DSN parameters: pool_max_conns (default max(4, GOMAXPROCS)),
// pool_min_conns (0), pool_max_conn_lifetime (1h), pool_max_conn_idle_time
// (30m), pool_health_check_period (1m), pool_max_pipeline (requests in
// flight per connection, default 64), pool_idle_check (1s: a connection
// idle that long is checked before use, see below). A lifetime or idle
// time of 0 is no limit; a health check period of 0 is the default;
// pool_idle_check=0 turns the check off.
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
// error at once.
type Pool struct {
	cfg *Config
	pc  poolConfig

	mu      sync.Mutex  // protects the fields below
	conns   []*poolConn // open connections that statements are routed to
	opening int         // connections being opened
	held    int         // connections held by Acquire or Begin
	takers  int         // Acquire or Begin calls waiting for a connection
	// The Acquire and Begin calls waiting for a connection (see
	// serveTakersLocked), and those opening one.
	takeLine  waitLine
	takeOpens int
	closed    bool          // Close was called
	changed   chan struct{} // closed and replaced when the fields change, if watched
	watched   bool          // someone waits on changed (see signalLocked)
	lastErr   error         // the last failure to open a connection
	stmtLine  waitLine      // the statements waiting for a slot (see route)
	waiters   sync.Pool     // *poolWaiter, recycled (see newWaiter)
	// failures counts the connection attempts failed in a row; the next
	// starts at nextOpen (see openFailedLocked).
	failures int
	nextOpen time.Time

	stopHealth chan struct{}
	// closing ends connection attempts in the background when the pool
	// closes (a host that never answers must not hold Close up).
	closing    context.Context
	stopOpens  context.CancelFunc
	healthDone chan struct{}
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
}

// settings returns pc with the defaults filled in, in the Pool's form.
func (pc PoolConfig) settings() poolConfig {
	lim := func(d time.Duration) time.Duration {
		if d < 0 {
			return noLimit
		}
		return d
	}
	return poolConfig{
		maxConns: pc.MaxConns, minConns: pc.MinConns,
		maxLifetime: lim(pc.MaxConnLifetime), maxIdle: lim(pc.MaxConnIdleTime),
		healthPeriod: lim(pc.HealthCheckPeriod), maxPipeline: pc.MaxPipeline,
		idleCheck: lim(pc.IdleCheck),
	}.withDefaults()
}

// validate reports settings no Pool can run with.
func (pc PoolConfig) validate() error {
	s := pc.settings()
	switch {
	case pc.MaxConns < 0 || pc.MinConns < 0 || pc.MaxPipeline < 0:
		return errors.New("pgline: Config.Pool: negative MaxConns, MinConns or MaxPipeline")
	case s.minConns > s.maxConns:
		return errors.New("pgline: Config.Pool: MinConns exceeds MaxConns")
	}
	return nil
}

// poolConfig is a Pool's settings with the defaults filled in
// (PoolConfig.settings); a limit turned off is noLimit.
type poolConfig struct {
	maxConns, minConns int
	maxLifetime        time.Duration
	maxIdle            time.Duration
	healthPeriod       time.Duration
	maxPipeline        int
	idleCheck          time.Duration // pool_idle_check
}

// noLimit is a pool_max_conn_lifetime or pool_max_conn_idle_time of 0:
// no connection is ever that old.
const noLimit = time.Duration(math.MaxInt64)

// withDefaults fills in the keys the DSN did not set.
func (pc poolConfig) withDefaults() poolConfig {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if pc.maxConns == 0 {
		pc.maxConns = max(4, runtime.GOMAXPROCS(0))
	}
	if pc.maxPipeline == 0 {
		pc.maxPipeline = 64
	}
	def(&pc.maxLifetime, time.Hour)
	def(&pc.maxIdle, 30*time.Minute)
	def(&pc.healthPeriod, time.Minute)
	def(&pc.idleCheck, time.Second)
	if pc.healthPeriod == noLimit {
		pc.healthPeriod = time.Minute
	}
	return pc
}

// poolConn is a connection of the pool; its counters are guarded by
// Pool.mu.
type poolConn struct {
	p        *Pool
	c        *Conn
	inflight int  // statements routed to it and not finished
	openRows int  // Rows from it not closed yet: statements behind them wait
	retiring bool // past its lifetime: no new statements; closed when idle
	draining bool // wanted by Acquire or Begin: no new statements until idle
	created  time.Time
	lastUsed time.Time
}

// ErrPoolClosed is returned by calls on a closed Pool.
var ErrPoolClosed = errors.New("pgline: pool closed")

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
	own := *cfg // with the pooler flags its connections share
	own.Hosts = slices.Clone(cfg.Hosts)
	own.RuntimeParams = maps.Clone(cfg.RuntimeParams)
	own.proxies = new(proxyFlags)
	p := &Pool{
		cfg:        &own,
		pc:         cfg.Pool.settings(),
		changed:    make(chan struct{}),
		stopHealth: make(chan struct{}),
		healthDone: make(chan struct{}),
	}
	p.closing, p.stopOpens = context.WithCancel(context.Background())
	p.mu.Lock()
	p.fillMinLocked()
	p.mu.Unlock()
	go p.healthLoop()
	return p, nil
}

// signalLocked serves the Acquire and Begin calls waiting in line and
// wakes Close, waiting for a change (statements wait in route's queue).
func (p *Pool) signalLocked() {
	p.serveTakersLocked()
	if !p.watched {
		return
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.watched = false
}

// changedLocked returns the channel closed at the next change.
func (p *Pool) changedLocked() <-chan struct{} {
	p.watched = true
	return p.changed
}

// totalLocked counts the connections open, being opened and held.
func (p *Pool) totalLocked() int { return len(p.conns) + p.opening + p.held }

// openLocked starts opening one connection in the background, once the
// backoff after failed attempts has passed.
func (p *Pool) openLocked() {
	p.opening++
	wait := time.Until(p.nextOpen)
	go func() {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.closing.Done():
				t.Stop()
			}
		}
		c, err := ConnectConfig(p.closing, p.cfg)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.opening--
		if err != nil {
			p.openFailedLocked(err)
			p.failWaitersLocked(err)
			p.failTakersLocked(err)
			p.openForWaitersLocked() // the next attempt, after the backoff
			p.signalLocked()
			return
		}
		p.failures = 0
		if p.closed {
			c.Close()
			p.signalLocked()
			return
		}
		now := time.Now()
		p.conns = append(p.conns, &poolConn{p: p, c: c, created: now, lastUsed: now})
		p.lastErr = nil
		p.serveLocked()
		p.signalLocked()
	}()
}

// Backoff between failed connection attempts: from backoffMin, doubled
// per failure up to backoffMax, each drawn between half and all of it.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = time.Second
)

// openFailedLocked notes a failed connection attempt: the next one waits.
func (p *Pool) openFailedLocked(err error) {
	p.lastErr = err
	p.failures++
	d := backoffMax
	if p.failures < 8 {
		d = min(backoffMin<<(p.failures-1), backoffMax)
	}
	d = d/2 + rand.N(d/2+1)
	p.nextOpen = time.Now().Add(d)
}

// waitsForHost reports whether a call whose connection attempt failed
// with err waits for the next one: only with a deadline, and unless a
// server refused the session (see refusedByServer) for another reason
// than too many connections (53300).
func waitsForHost(ctx context.Context, err error) bool {
	_, ok := ctx.Deadline()
	var pgErr *PgError
	refused := refusedByServer(err) && !(errors.As(err, &pgErr) && pgErr.Code == "53300")
	return ok && ctx.Err() == nil && !refused && !errors.Is(err, ErrPoolClosed)
}

// connectWaitErr is the error of a call whose ctx ended while it waited
// for a connection, with the last attempt's failure.
func connectWaitErr(ctx context.Context, last error) error {
	if last == nil {
		return notSent(ctx.Err())
	}
	return notSent(fmt.Errorf("%w (last connection attempt: %w)", ctx.Err(), last))
}

// fillMinLocked opens connections up to pool_min_conns.
func (p *Pool) fillMinLocked() {
	for !p.closed && p.totalLocked() < p.pc.minConns {
		p.openLocked()
	}
}

// pruneClosedLocked drops the connections that have been closed (by a
// fatal error, or by the server).
func (p *Pool) pruneClosedLocked() {
	p.conns = slices.DeleteFunc(p.conns, func(pc *poolConn) bool { return pc.c.IsClosed() })
}

// dropLocked removes pc from the routable connections.
func (p *Pool) dropLocked(pc *poolConn) {
	for i, x := range p.conns {
		if x == pc {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			return
		}
	}
}

// done ends one statement routed to pc; rows reports that it was a Query
// whose Rows were counted open.
func (p *Pool) done(pc *poolConn, rows bool) {
	p.mu.Lock()
	pc.inflight--
	if rows {
		pc.openRows--
	}
	pc.lastUsed = time.Now()
	if pc.c.TxStatus() != 'I' {
		// A routed statement left its session in a transaction (BEGIN
		// given to Exec): no statement may be routed into it. The
		// connection is closed once idle, which rolls it back, as
		// giveBack does for Acquire's.
		pc.retiring = true
	}
	if pc.c.IsClosed() || pc.retiring && pc.inflight == 0 {
		p.dropLocked(pc)
		if pc.inflight == 0 {
			pc.c.Close()
		}
		p.fillMinLocked()
	}
	p.serveLocked()
	p.signalLocked()
	p.mu.Unlock()
}

// routeChecked is route, with the connection checked when it was idle
// for pool_idle_check (see Conn.usableAfterIdle); broken ones are dropped.
func (p *Pool) routeChecked(ctx context.Context) (*poolConn, error) {
	for {
		pc, check, err := p.route(ctx)
		if err != nil || !check || pc.c.usableAfterIdle(ctx) {
			return pc, err
		}
		p.done(pc, false) // closed: dropped
	}
}

// retry runs op on a routed connection, and again on another while it
// fails before reaching the server because its connection broke, as long
// as ctx allows (and a bounded number of times: a server that ends every
// session at once must not keep a call without deadline for ever).
func (p *Pool) retry(ctx context.Context, op func(pc *poolConn) error) error {
	for attempt := 0; ; attempt++ {
		pc, err := p.routeChecked(ctx)
		if err != nil {
			return err
		}
		err = op(pc)
		if !p.retries(ctx, attempt, pc, err) {
			return err
		}
	}
}

// retries reports whether a call that failed with err on pc (attempt
// counting from 0) is made again on another connection: nothing of it
// ran (SafeToRetry) because pc broke, and its ctx allows.
func (p *Pool) retries(ctx context.Context, attempt int, pc *poolConn, err error) bool {
	return err != nil && SafeToRetry(err) && p.mayRetry(ctx, attempt, pc)
}

// mayRetry reports whether a call whose connection pc broke is made again
// on another: its ctx allows, and a bounded number of times (a server that
// ends every session at once must not hold a call without deadline for
// ever).
func (p *Pool) mayRetry(ctx context.Context, attempt int, pc *poolConn) bool {
	return pc.c.IsClosed() && ctx.Err() == nil && attempt < p.pc.maxConns+2
}

// Query runs sql on one of the pool's connections (see Conn.Query). The
// connection goes on serving other statements, pipelined behind these
// rows: close them promptly.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	var rows *Rows
	err := p.retry(ctx, func(pc *poolConn) error {
		r, err := pc.c.Query(ctx, sql, args...)
		if err != nil {
			p.done(pc, false)
			return err
		}
		p.holdRows(pc, r)
		rows = r
		return nil
	})
	return rows, err
}

// holdRows counts r as open Rows of pc until they are closed.
func (p *Pool) holdRows(pc *poolConn, r *Rows) {
	p.mu.Lock()
	pc.openRows++
	p.mu.Unlock()
	r.pooled = pc
}

// QueryRow runs sql on one of the pool's connections (see Conn.QueryRow).
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	row := &Row{ctx: ctx, sql: sql, args: args, pool: p}
	p.runRow(row)
	return row
}

// runRow runs row's statement on a routed connection, for QueryRow and
// for a resend by Row.Scan (routed again: the connection the row came
// from may be held by Acquire or Begin by then).
func (p *Pool) runRow(row *Row) {
	row.err = p.retry(row.ctx, func(pc *poolConn) error {
		row.c = pc.c
		err := pc.c.query(row.ctx, nil, &row.rows, row.sql, row.args)
		if err != nil {
			p.done(pc, false)
			return err
		}
		p.holdRows(pc, &row.rows)
		return nil
	})
}

// Exec runs sql on one of the pool's connections (see Conn.Exec).
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	var tag CommandTag
	err := p.retry(ctx, func(pc *poolConn) error {
		var err error
		tag, err = pc.c.Exec(ctx, sql, args...)
		p.done(pc, false)
		return err
	})
	return tag, err
}

// SendBatch sends b on one of the pool's connections (see Conn.SendBatch).
func (p *Pool) SendBatch(ctx context.Context, b *Batch) *BatchResults {
	pc, err := p.routeChecked(ctx)
	if err != nil {
		return &BatchResults{err: err, closed: true}
	}
	br := pc.c.SendBatch(ctx, b)
	if br.req == nil {
		p.done(pc, false)
		return br
	}
	p.mu.Lock()
	pc.openRows++
	p.mu.Unlock()
	br.pooled = pc
	return br
}

// PoolConn is a connection held exclusively from a Pool by Acquire. Its
// session state is its own until Release, which resets it (RESET ALL,
// UNLISTEN *, advisory locks, temporary tables; prepared statements stay).
type PoolConn struct {
	*Conn
	pc       *poolConn
	released atomic.Bool
}

// Acquire takes a connection out of the pool for the caller's exclusive
// use, waiting when every connection is busy and the pool is full. Release
// it when done.
func (p *Pool) Acquire(ctx context.Context) (*PoolConn, error) {
	pc, err := p.take(ctx)
	if err != nil {
		return nil, err
	}
	return &PoolConn{Conn: pc.c, pc: pc}, nil
}

// take removes an idle connection from routing (or opens one) for
// exclusive use.
func (p *Pool) take(ctx context.Context) (*poolConn, error) {
	tctx, ev := traceStart(ctx, p.cfg, TraceEvent{Kind: TraceAcquire})
	pc, err := p.takeChecked(ctx)
	if ev != nil && pc != nil {
		ev.setConn(pc.c)
	}
	traceEnd(tctx, p.cfg, ev, CommandTag{}, err)
	return pc, err
}

// takeChecked is takeUntraced, with the connection checked when it was
// idle for pool_idle_check (see Conn.usableAfterIdle), then by PrepareConn.
func (p *Pool) takeChecked(ctx context.Context) (*poolConn, error) {
	for refused := 0; ; {
		pc, check, err := p.takeUntraced(ctx)
		if err != nil {
			return nil, err
		}
		if check && !pc.c.usableAfterIdle(ctx) {
			p.giveBack(pc) // closed: dropped
			continue
		}
		if p.cfg.PrepareConn != nil {
			ok, err := p.prepareConn(ctx, pc)
			if err != nil || !ok {
				pc.c.Close()
				p.giveBack(pc) // closed: dropped
				if err != nil {
					return nil, fmt.Errorf("pgline: PrepareConn: %w", err)
				}
				// As many as the pool holds, and a few new ones.
				if refused++; refused > p.pc.maxConns+2 {
					return nil, fmt.Errorf("pgline: PrepareConn refused %d connections in a row", refused)
				}
				continue
			}
		}
		return pc, nil
	}
}

// release returns a connection the caller held (Release, a transaction's
// end), closed when AfterRelease says so.
func (p *Pool) release(pc *poolConn) {
	if after := p.cfg.AfterRelease; after != nil && !pc.c.IsClosed() {
		keep := false
		defer func() {
			if !keep {
				pc.c.Close() // false, or a panic: it goes on after the connection is back
			}
			p.giveBack(pc)
		}()
		keep = after(pc.c)
		return
	}
	p.giveBack(pc)
}

// prepareConn runs PrepareConn on a held connection; when it panics, the
// connection is closed and given back before the panic goes on, so that
// the pool does not count it held for ever.
func (p *Pool) prepareConn(ctx context.Context, pc *poolConn) (ok bool, err error) {
	done := false
	defer func() {
		if !done {
			pc.c.Close()
			p.giveBack(pc)
		}
	}()
	ok, err = p.cfg.PrepareConn(ctx, pc.c)
	done = true
	return ok, err
}

func (p *Pool) takeUntraced(ctx context.Context) (pc *poolConn, check bool, err error) {
	var failed error // the last connection attempt of this call
	p.mu.Lock()
	p.takers++
	defer func() {
		p.takers--
		p.balanceDrainingLocked()
		p.serveLocked() // statements held back by the draining marks may go on
		p.signalLocked()
		p.mu.Unlock()
	}()
	reserved := false // a connection is counted in held for this call to open
	for {
		if p.closed {
			if reserved {
				p.held--
			}
			return nil, false, notSent(ErrPoolClosed)
		}
		p.pruneClosedLocked()
		if !reserved && p.takeLine.head == nil { // nobody waits before this call
			if pc := p.idleForTakeLocked(); pc != nil {
				// Always looked at: nothing can send the holder's
				// statements elsewhere (a look costs a system call).
				return pc, p.pc.idleCheck != noLimit, nil
			}
			reserved = p.reserveOpenLocked()
		}
		if reserved {
			wait := time.Until(p.nextOpen)
			p.takeOpens++
			p.mu.Unlock()
			c, err := p.connectHeld(ctx, wait)
			p.mu.Lock()
			p.takeOpens--
			if err == nil && p.closed {
				c.Close()
				err = ErrPoolClosed
			}
			if err == nil {
				p.failures, p.lastErr = 0, nil
				now := time.Now()
				return &poolConn{p: p, c: c, created: now, lastUsed: now}, false, nil
			}
			p.held--
			reserved = false
			if c == nil && ctx.Err() == nil && !p.closed {
				p.openFailedLocked(err)
				p.failWaitersLocked(err)
				p.failTakersLocked(err)
				p.openForWaitersLocked()
			}
			if p.closed {
				return nil, false, notSent(ErrPoolClosed)
			}
			if !waitsForHost(ctx, err) {
				if failed != nil && ctx.Err() != nil {
					return nil, false, connectWaitErr(ctx, failed)
				}
				return nil, false, notSent(err)
			}
			failed = err // waits for the next attempt, or a connection freed meanwhile
		}
		// Wait in line. Every connection is busy with statements, which
		// would keep it busy for ever under load: stop routing statements
		// to one of them per waiting caller, so that it becomes idle.
		w := &poolWaiter{ctx: ctx, ready: make(chan struct{}, 1)}
		p.takeLine.push(w)
		p.balanceDrainingLocked()
		// Served at once when it may open a connection now (after a
		// failed attempt: the next, after the backoff).
		p.serveTakersLocked()
		p.mu.Unlock()
		select {
		case <-w.ready:
			p.mu.Lock()
		case <-ctx.Done():
			p.mu.Lock()
			select {
			case <-w.ready: // served as ctx ended: what it got goes to the next
				if w.pc != nil {
					p.held--
					p.conns = append(p.conns, w.pc)
				} else if w.open {
					p.held--
				}
			default:
				p.takeLine.remove(w)
			}
			if w.err != nil {
				return nil, false, w.err
			}
			return nil, false, connectWaitErr(ctx, failed)
		}
		switch {
		case w.err != nil:
			return nil, false, w.err
		case w.pc != nil:
			return w.pc, p.pc.idleCheck != noLimit, nil
		}
		reserved = w.open
	}
}

// idleForTakeLocked removes an idle connection from routing and counts it
// held; nil when none is idle.
func (p *Pool) idleForTakeLocked() *poolConn {
	for i, pc := range p.conns {
		if pc.inflight == 0 && !pc.retiring && !pc.c.IsClosed() {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			pc.draining = false
			p.held++
			return pc
		}
	}
	return nil
}

// reserveOpenLocked counts in held a connection that a take is to open,
// when the pool may grow: after a failure, one attempt at a time.
func (p *Pool) reserveOpenLocked() bool {
	if p.totalLocked() >= p.pc.maxConns || p.failures > 0 && p.opening+p.takeOpens > 0 {
		return false
	}
	p.held++
	return true
}

// serveTakersLocked hands idle connections, or reservations to open one,
// to the waiting Acquire and Begin calls, first come first served: one
// wake-up each, however many wait. Statements are served first where a
// connection frees (serveLocked): they are short and pipelined, and the
// connections marked draining for the callers still waiting here
// (balanceDrainingLocked) take no more of them, so both lines move.
func (p *Pool) serveTakersLocked() {
	for w := p.takeLine.head; w != nil; w = p.takeLine.head {
		if p.closed {
			p.takeLine.remove(w)
			w.err = notSent(ErrPoolClosed)
		} else if pc := p.idleForTakeLocked(); pc != nil {
			p.takeLine.remove(w)
			w.pc = pc
		} else if p.reserveOpenLocked() {
			p.takeLine.remove(w)
			w.open = true
		} else {
			p.balanceDrainingLocked()
			return
		}
		w.wake()
	}
}

// failTakersLocked ends the wait of the Acquire and Begin calls that do not
// wait for a host (see waitsForHost) after a failed connection attempt,
// when they would have made an attempt of their own.
func (p *Pool) failTakersLocked(err error) {
	if p.totalLocked() >= p.pc.maxConns {
		return // they wait for a connection to be freed
	}
	for w := p.takeLine.head; w != nil; {
		next := w.next
		if !waitsForHost(w.ctx, err) {
			p.takeLine.remove(w)
			w.err = notSent(err)
			w.wake()
		}
		w = next
	}
}

// connectHeld opens a connection for take, after waiting out the backoff;
// Close, which waits for held connections, ends the attempt.
func (p *Pool) connectHeld(ctx context.Context, wait time.Duration) (*Conn, error) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(p.closing, cancel)
	defer stop()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-cctx.Done():
			t.Stop()
			return nil, cctx.Err()
		}
	}
	return ConnectConfig(cctx, p.cfg)
}

// balanceDrainingLocked keeps as many connections draining as callers wait
// in take: it marks the least busy ones, or clears marks no longer needed.
func (p *Pool) balanceDrainingLocked() {
	n := 0
	for _, pc := range p.conns {
		if pc.draining {
			n++
		}
	}
	for n > p.takers {
		for _, pc := range p.conns {
			if pc.draining {
				pc.draining = false
				n--
				break
			}
		}
	}
	for n < p.takers {
		var best *poolConn
		for _, pc := range p.conns {
			if !pc.draining && !pc.retiring && (best == nil || pc.inflight < best.inflight) {
				best = pc
			}
		}
		if best == nil {
			return
		}
		best.draining = true
		n++
	}
}

// giveBack returns a held connection to routing, or closes it when it is
// broken, inside a transaction, or past its lifetime.
func (p *Pool) giveBack(pc *poolConn) {
	bad := pc.c.IsClosed() || pc.c.TxStatus() != 'I'
	p.mu.Lock()
	p.held--
	pc.draining = false
	pc.lastUsed = time.Now()
	if bad || p.closed || time.Since(pc.created) > p.pc.maxLifetime {
		pc.c.Close()
		p.fillMinLocked()
	} else {
		p.conns = append(p.conns, pc)
	}
	p.serveLocked()
	p.signalLocked()
	p.mu.Unlock()
}

// resetSession clears the session state an Acquire may have left.
const resetSession = "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; UNLISTEN *; " +
	"SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES"

// Release resets the connection's session state and returns it to the
// pool. A connection with requests still in flight (a statement given up
// at its deadline, whose reply is being drained from a server that may
// not answer) is closed instead, so that Release does not wait for it;
// the reset itself is bounded by resetTimeout (5s). It is safe to call
// more than once.
func (pc *PoolConn) Release() {
	if !pc.released.CompareAndSwap(false, true) {
		return
	}
	if c := pc.Conn; !c.IsClosed() && c.TxStatus() == 'I' {
		if c.busy() {
			c.Close()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
			if _, err := c.Exec(ctx, resetSession); err != nil {
				c.Close()
			}
			cancel()
		}
		// Notifications received for the last holder are not the next one's.
		c.dropNotifications()
	}
	pc.pc.p.release(pc.pc)
}

// resetTimeout bounds Release's reset of a connection: past it, the
// connection is closed instead.
const resetTimeout = 5 * time.Second

// Begin starts a transaction on a connection taken from the pool for it;
// Commit or Rollback returns the connection. The connection is not reset
// then: session state set inside the transaction (SET without LOCAL,
// LISTEN, temporary tables kept past commit, session advisory locks)
// stays with it and reaches the statements routed to it afterwards. Use
// SET LOCAL and transaction-level locks, or Acquire for session state.
func (p *Pool) Begin(ctx context.Context) (*Tx, error) {
	return p.BeginTx(ctx, TxOptions{})
}

// BeginTx starts a transaction with opts (see Pool.Begin).
func (p *Pool) BeginTx(ctx context.Context, opts TxOptions) (*Tx, error) {
	for attempt := 0; ; attempt++ {
		pc, err := p.take(ctx)
		if err != nil {
			return nil, err
		}
		tx, err := pc.c.BeginTx(ctx, opts)
		if err != nil {
			p.giveBack(pc)
			// A BEGIN has no effect that outlives its session: on a
			// connection that broke, it is made again on another, even
			// when it may have reached the server.
			if p.mayRetry(ctx, attempt, pc) {
				continue
			}
			return nil, err
		}
		tx.onEnd = func() { p.release(pc) }
		return tx, nil
	}
}

// PoolStat is a snapshot of a Pool's counters.
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
}

// Stat returns the pool's counters.
func (p *Pool) Stat() PoolStat {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := PoolStat{
		TotalConns:     p.totalLocked(),
		AcquiredConns:  p.held,
		Waiting:        p.stmtLine.n,
		AcquireWaiting: p.takeLine.n,
		OpeningConns:   p.opening,
		MaxConns:       p.pc.maxConns,
		PoolerHosts:    p.cfg.proxies.hosts(),
	}
	for _, pc := range p.conns {
		s.InFlight += pc.inflight
		if pc.inflight == 0 {
			s.IdleConns++
		}
	}
	return s
}

// Close stops the pool: new calls fail with ErrPoolClosed, statements in
// flight and held connections finish (Close waits for them), then every
// connection is closed.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.healthDone
		return
	}
	p.closed = true
	close(p.stopHealth)
	p.stopOpens()
	p.closeWaitersLocked()
	p.signalLocked()
	for {
		busy := p.held > 0 || p.opening > 0
		for _, pc := range p.conns {
			if pc.inflight > 0 {
				busy = true
			}
		}
		if !busy {
			break
		}
		changed := p.changedLocked()
		p.mu.Unlock()
		<-changed
		p.mu.Lock()
	}
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, pc := range conns {
		pc.c.Close()
	}
	<-p.healthDone
}

// healthLoop closes idle connections past their idle time or lifetime,
// retires busy ones past their lifetime, drops broken ones and keeps
// pool_min_conns open.
func (p *Pool) healthLoop() {
	defer close(p.healthDone)
	t := time.NewTicker(p.pc.healthPeriod)
	defer t.Stop()
	for {
		select {
		case <-p.stopHealth:
			return
		case <-t.C:
		}
		p.mu.Lock()
		now := time.Now()
		var closing []*Conn
		for i := 0; i < len(p.conns); i++ {
			pc := p.conns[i]
			expired := now.Sub(pc.created) > p.pc.maxLifetime
			idleTooLong := pc.inflight == 0 && now.Sub(pc.lastUsed) > p.pc.maxIdle && p.totalLocked() > p.pc.minConns
			if pc.c.IsClosed() || pc.inflight == 0 && (expired || idleTooLong) {
				p.conns = append(p.conns[:i], p.conns[i+1:]...)
				i--
				closing = append(closing, pc.c)
				continue
			}
			if expired {
				pc.retiring = true
			}
			// Nobody can wait for notifications on a routed connection
			// (a LISTEN run in a Pool transaction outlives it): drop
			// them rather than keep them for ever.
			pc.c.dropNotifications()
		}
		p.fillMinLocked()
		p.signalLocked()
		p.mu.Unlock()
		for _, c := range closing {
			c.Close()
		}
	}
}
