package pgline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// hostPool is the connections of a Pool to one host, and the engine that
// routes statements over them: each statement goes to the connection
// with the least load (its requests in flight, unless open Rows or a
// silent head hold it: see pool_route.go), where it is pipelined with the
// others; connections are opened as load needs them, up to
// pool_max_conns; when every connection has pool_max_pipeline statements
// in flight, statements wait in one line and Acquire and Begin in
// another, each served in arrival order (see pool_route.go). A Pool is a
// handle on the hostPools of its hosts (see hostSet): with one host, on
// exactly one.
type hostPool struct {
	cfg *Config // Hosts holds this host only, unless the Pool has one host
	pc  poolConfig

	// set is the Pool's set of hosts; multi reports that it has more than
	// this one, and then a failed connection attempt marks the host down
	// and sends the calls waiting here to choose a host again (see
	// hostDownLocked), instead of waiting for this host to come back.
	set   *hostSet
	multi bool
	label string // the host, "host:port" or the socket path

	// state is what the last role check or connection attempt found (see
	// hostSet.check); never nil.
	state atomic.Pointer[hostState]
	// checking is set while a role check of this host runs; it alone
	// uses mon, the monitor connection (see roleQuery), and basicRole.
	checking  atomic.Bool
	mon       *Conn
	monCfg    *Config // cfg with target_session_attrs=any
	basicRole bool    // the server has no WAL functions: roleSQLBasic

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

// newHostPool starts the hostPool of one host of set; cfg is the Pool's
// own copy of the Config, with this host only (or all, see hostPool.cfg).
func newHostPool(cfg *Config, pc poolConfig, set *hostSet, multi bool) *hostPool {
	p := &hostPool{
		cfg:        cfg,
		pc:         pc,
		set:        set,
		multi:      multi,
		label:      hostLabel(cfg.Hosts[0]),
		changed:    make(chan struct{}),
		stopHealth: make(chan struct{}),
		healthDone: make(chan struct{}),
	}
	p.state.Store(&hostState{})
	p.monCfg = cfg
	if cfg.TargetSessionAttrs != "" && cfg.TargetSessionAttrs != "any" {
		mc := *cfg
		mc.TargetSessionAttrs = "any"
		p.monCfg = &mc
	}
	p.closing, p.stopOpens = context.WithCancel(context.Background())
	p.mu.Lock()
	p.fillMinLocked()
	p.mu.Unlock()
	go p.healthLoop()
	return p
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

// poolConn is a connection of a hostPool; its counters are guarded by
// hostPool.mu.
type poolConn struct {
	p        *hostPool
	c        *Conn
	inflight int // statements routed to it and not finished
	// openRows counts the Rows of Query and SendBatch routed to it and
	// not closed: from the moment they are routed, since they go to user
	// code, which holds the statements queued behind them (see
	// hostPool.loadLocked). rowHolds counts the Rows of QueryRow read and
	// not scanned yet: Scan reads them at once, so they hold nothing back
	// (a Row left unscanned stalls its connection instead).
	openRows int
	rowHolds int
	retiring bool // past its lifetime: no new statements; closed when idle
	draining bool // wanted by Acquire or Begin: no new statements until idle
	// txRan: a Pool transaction ran on it since its session was last
	// reset; what it set for the session (LISTEN, SET) is not an
	// Acquire holder's, who gets it reset first (see Pool.Acquire).
	txRan   atomic.Bool
	created time.Time
	// lastUsed is when a statement routed to it last finished, or when
	// it last went from idle to busy: with statements in flight, its last
	// sign of progress (see stallAfter).
	lastUsed time.Time
}

// signalLocked serves the Acquire and Begin calls waiting in line and
// wakes Close, waiting for a change (statements wait in route's queue).
func (p *hostPool) signalLocked() {
	p.serveTakersLocked()
	if !p.watched {
		return
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.watched = false
}

// changedLocked returns the channel closed at the next change.
func (p *hostPool) changedLocked() <-chan struct{} {
	p.watched = true
	return p.changed
}

// totalLocked counts the connections open, being opened and held.
func (p *hostPool) totalLocked() int { return len(p.conns) + p.opening + p.held }

// openLocked starts opening one connection in the background, once the
// backoff after failed attempts has passed.
func (p *hostPool) openLocked() {
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
		ctx, cancel := p.closing, context.CancelFunc(func() {})
		if p.cfg.ConnectTimeout <= 0 {
			// A host that accepts but never answers must not hold the
			// slot for ever.
			ctx, cancel = context.WithTimeout(p.closing, poolConnectTimeout)
		}
		c, err := p.connect(ctx)
		if err != nil && ctx.Err() != nil && p.closing.Err() == nil {
			// Not any caller's deadline: say so, without wrapping
			// context.DeadlineExceeded.
			err = fmt.Errorf("pgline: connecting to %s: %w within %v (connect_timeout is not set)", hostLabel(p.cfg.Hosts[0]), errNoAnswer, poolConnectTimeout)
		}
		cancel()
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
		p.upAgainLocked()
		p.serveLocked()
		p.signalLocked()
	}()
}

// poolConnectTimeout bounds a connection attempt a Pool makes in the
// background when connect_timeout is not set, so that a host that accepts
// and never answers does not hold the slot for ever; the attempt is made
// again after the backoff, and the calls waiting go on waiting.
const poolConnectTimeout = 10 * time.Second

// errNoAnswer is wrapped by the error of a connection attempt that ran
// out of poolConnectTimeout: the Pool's own bound, no outcome for the
// calls waiting (see waitsForHost).
var errNoAnswer = errors.New("no answer")

// Backoff between failed connection attempts: from backoffMin, doubled
// per failure up to backoffMax, each drawn between half and all of it.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = time.Second
)

// openFailedLocked notes a failed connection attempt: the next one waits.
func (p *hostPool) openFailedLocked(err error) {
	p.lastErr = err
	p.failures++
	d := backoffMax
	if p.failures < 8 {
		d = min(backoffMin<<(p.failures-1), backoffMax)
	}
	d = d/2 + rand.N(d/2+1)
	p.nextOpen = time.Now().Add(d)
	if p.multi {
		p.hostDownLocked(err)
	}
}

// upAgainLocked notes a connection made: when the host was marked down,
// a role check soon says what it is now.
func (p *hostPool) upAgainLocked() {
	if p.multi && p.state.Load().down {
		p.set.kick()
	}
}

// waitsForHost reports whether a call whose connection attempt failed
// with err waits for the next one: only with a deadline, and unless a
// server refused the session (see refusedByServer) for another reason
// than too many connections (53300). The Pool's own bound on an attempt
// (errNoAnswer) fails nobody: a host slow rather than down answers a
// later one, and without connect_timeout a call waits for it, as a
// connection does in libpq, until its ctx ends.
func waitsForHost(ctx context.Context, err error) bool {
	if errors.Is(err, errNoAnswer) {
		return ctx.Err() == nil
	}
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
func (p *hostPool) fillMinLocked() {
	for !p.closed && p.totalLocked() < p.pc.minConns {
		p.openLocked()
	}
}

// pruneClosedLocked drops the connections that have been closed (by a
// fatal error, or by the server).
func (p *hostPool) pruneClosedLocked() {
	p.conns = slices.DeleteFunc(p.conns, func(pc *poolConn) bool { return pc.c.IsClosed() })
}

// dropLocked removes pc from the routable connections.
func (p *hostPool) dropLocked(pc *poolConn) {
	for i, x := range p.conns {
		if x == pc {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			return
		}
	}
}

// done ends one statement routed to pc; rows reports that it was counted
// in openRows (a Query or SendBatch) or rowHolds (a QueryRow read). Rows
// and Rows of a Row end alike (Rows.finish), so done takes a Row's hold
// off first: the Rows of one connection are read in turn, so a Row held
// while another Rows ends is that Rows' successor, and taking its hold
// off first can only keep openRows counted a moment longer (until the
// Row's own end), never shorter.
func (p *hostPool) done(pc *poolConn, rows bool) {
	p.mu.Lock()
	pc.inflight--
	if rows {
		if pc.rowHolds > 0 {
			pc.rowHolds--
		} else {
			pc.openRows--
		}
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
		if p.multi && pc.c.IsClosed() {
			p.set.kick() // a lost connection: is the host still there, and what is it?
		}
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
func (p *hostPool) routeChecked(ctx context.Context, rows bool) (*poolConn, error) {
	for {
		pc, check, err := p.route(ctx, rows)
		if err != nil || !check || pc.c.usableAfterIdle(ctx) {
			return pc, err
		}
		p.done(pc, rows) // closed: dropped
	}
}

// holdRows makes r, the Rows of a Query routed to pc (counted open since
// it was routed), end its statement when closed.
func (p *hostPool) holdRows(pc *poolConn, r *Rows) {
	r.pooled = pc
}

// holdRow counts r, the Rows of a QueryRow routed to pc, read until Scan
// closes it, which ends its statement (see poolConn.rowHolds).
func (p *hostPool) holdRow(pc *poolConn, r *Rows) {
	p.mu.Lock()
	pc.rowHolds++
	p.mu.Unlock()
	r.pooled = pc
}

// take removes an idle connection from routing (or opens one) for
// exclusive use; with reset (Acquire), a connection a Pool transaction
// ran on has its session reset first (see takeChecked).
func (p *hostPool) take(ctx context.Context, reset bool) (*poolConn, error) {
	if p.cfg.Tracer == nil {
		return p.takeChecked(ctx, reset)
	}
	tctx, ev := traceStart(ctx, p.cfg, TraceEvent{Kind: TraceAcquire, Host: hostLabel(p.cfg.Hosts[0]), Database: p.cfg.Database})
	// tctx: a connection opened for the acquisition is traced under it.
	pc, err := p.takeChecked(tctx, reset)
	if ev != nil && pc != nil {
		ev.setConn(pc.c)
	}
	traceEnd(tctx, p.cfg, ev, CommandTag{}, err)
	return pc, err
}

// takeChecked is takeUntraced, with the connection checked when it was
// idle for pool_idle_check (see Conn.usableAfterIdle), then by PrepareConn.
func (p *hostPool) takeChecked(ctx context.Context, reset bool) (*poolConn, error) {
	for refused := 0; ; {
		pc, check, err := p.takeUntraced(ctx)
		if err != nil {
			return nil, err
		}
		if check && !pc.c.usableAfterIdle(ctx) {
			p.giveBack(pc) // closed: dropped
			continue
		}
		// Before PrepareConn, so that what it sets is not reset.
		if reset && pc.txRan.Load() && !pc.resetTaken(ctx) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
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
func (p *hostPool) release(pc *poolConn) {
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
func (p *hostPool) prepareConn(ctx context.Context, pc *poolConn) (ok bool, err error) {
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

func (p *hostPool) takeUntraced(ctx context.Context) (pc *poolConn, check bool, err error) {
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
				p.upAgainLocked()
				now := time.Now()
				return &poolConn{p: p, c: c, created: now, lastUsed: now}, false, nil
			}
			p.held--
			reserved = false
			if c == nil && ctxEnded(ctx) == nil && !p.closed {
				p.openFailedLocked(err)
				p.failWaitersLocked(err)
				p.failTakersLocked(err)
				p.openForWaitersLocked()
			}
			if p.closed {
				return nil, false, notSent(ErrPoolClosed)
			}
			if p.multi && c == nil && ctxEnded(ctx) == nil {
				// The host is down (hostDownLocked): choose another.
				return nil, false, notSent(&rerouteError{err})
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
func (p *hostPool) idleForTakeLocked() *poolConn {
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
func (p *hostPool) reserveOpenLocked() bool {
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
func (p *hostPool) serveTakersLocked() {
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
func (p *hostPool) failTakersLocked(err error) {
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
func (p *hostPool) connectHeld(ctx context.Context, wait time.Duration) (*Conn, error) {
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
	return p.connect(cctx)
}

// connect opens a connection to p's host. With several hosts, a 25006
// error (read-only transaction) it receives on a host believed writable,
// in any call (a statement, rows, a batch, a transaction), has the roles
// checked at once: the host's role changed, or its sessions were made
// read-only (default_transaction_read_only), and calls for a writable
// host must go elsewhere.
//
// Its session's report of the server (see noteRole) is compared with the
// host's state as it opens, and again whenever in_hot_standby changes.
func (p *hostPool) connect(ctx context.Context) (*Conn, error) {
	c, err := ConnectConfig(ctx, p.cfg)
	if err == nil && p.multi {
		c.readOnly = func() {
			if !p.state.Load().readOnly {
				p.set.kick()
			}
		}
		c.roleReport = func() { p.noteRole(c, false) }
		p.noteRole(c, true)
	}
	return c, err
}

// noteRole compares what c's session reports of its server with the
// host's state, and when they differ takes the session's word at once
// and has the roles checked: PostgreSQL 14 and later report
// in_hot_standby (and default_transaction_read_only) as a session starts,
// and a change of in_hot_standby (a promotion) with the ReadyForQuery
// that follows it. So a connection opened to a host whose role changed
// since its last check (a former primary, now a standby) tells it before
// it serves anyone, and one open across a promotion tells it with its
// next reply; without it, the role checks alone (every
// pool_health_check_period) would have told, and calls for one role ran
// on the other meanwhile. At a session's start (opening) both settings
// count; later, only in_hot_standby (default_transaction_read_only may be
// the session's own SET). A standby seen this way lags by an unknown
// amount until its check: it serves no call bound by
// pool_max_replica_lag before. Nothing changes for servers that report
// no in_hot_standby (before 14).
func (p *hostPool) noteRole(c *Conn, opening bool) {
	hot := c.ParameterStatus("in_hot_standby") // "on" or "off"; "" when not reported
	if hot == "" {
		return
	}
	standby := hot == "on"
	dtro := c.ParameterStatus("default_transaction_read_only")
	for {
		st := p.state.Load()
		if !st.settled || st.down {
			return // its check, which comes, tells
		}
		readOnly := st.readOnly
		if opening || (st.role == HostStandby) != standby {
			readOnly = standby || dtro == "on"
		}
		if (st.role == HostStandby) == standby && st.readOnly == readOnly {
			return
		}
		next := &hostState{settled: true, checked: st.checked, role: HostPrimary, readOnly: readOnly}
		if standby {
			next.role, next.behind = HostStandby, lagUnknown
		}
		if p.state.CompareAndSwap(st, next) {
			break
		}
	}
	p.set.kick()
	p.set.signal()
}

// lagUnknown is the hostState.behind of a standby whose lag is not known:
// behind for ever, as far as pool_max_replica_lag goes.
var lagUnknown = time.Unix(1, 0)

// balanceDrainingLocked keeps as many connections draining as callers wait
// in take: those that will drain soonest, by the routing's measure of
// their load (loadLocked), so never one held by open Rows or stalled
// while another is not. A mark on a held connection moves to one that is
// not; marks no longer needed are cleared, held ones first.
func (p *hostPool) balanceDrainingLocked() {
	n := 0
	for _, pc := range p.conns {
		if pc.draining {
			n++
		}
	}
	if n == 0 && p.takers == 0 {
		return
	}
	var now time.Time
	// marked returns the draining connection with the most load, unmarked
	// the other with the least.
	marked := func() (worst *poolConn, load int) {
		for _, pc := range p.conns {
			if l := p.loadLocked(pc, &now); pc.draining && (worst == nil || l > load) {
				worst, load = pc, l
			}
		}
		return worst, load
	}
	unmarked := func() (best *poolConn, load int) {
		for _, pc := range p.conns {
			if l := p.loadLocked(pc, &now); !pc.draining && !pc.retiring && (best == nil || l < load) {
				best, load = pc, l
			}
		}
		return best, load
	}
	for ; n > p.takers; n-- {
		pc, _ := marked()
		pc.draining = false
	}
	for ; n < p.takers; n++ {
		pc, _ := unmarked()
		if pc == nil {
			return
		}
		pc.draining = true
	}
	for {
		worst, wl := marked()
		best, bl := unmarked()
		if worst == nil || best == nil || wl < p.pc.maxPipeline || bl >= p.pc.maxPipeline {
			return
		}
		worst.draining, best.draining = false, true
	}
}

// giveBack returns a held connection to routing, or closes it when it is
// broken, inside a transaction, or past its lifetime.
func (p *hostPool) giveBack(pc *poolConn) {
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

// Release resets the connection's session state and returns it to the
// pool: the session is as Config.AfterConnect left it when the connection
// was made. The reset (RESET ALL, UNLISTEN *, advisory locks, temporary
// tables, cursors, the statements prepared with SQL PREPARE; pgline's own
// prepared statements stay) is one round trip, after which AfterConnect,
// when set, runs again; an error of either closes the connection (a panic
// of AfterConnect too, and goes on). A connection with requests still in
// flight (a statement given up at its deadline, whose reply is being
// drained from a server that may not answer) is closed instead, so that
// Release does not wait for it; the reset and AfterConnect are bounded by
// resetTimeout (5s). It is safe to call more than once.
func (pc *PoolConn) Release() {
	if !pc.released.CompareAndSwap(false, true) {
		return
	}
	defer pc.pc.p.release(pc.pc) // also when AfterConnect panics
	if c := pc.Conn; !c.IsClosed() && c.TxStatus() == 'I' {
		if c.busy() {
			c.Close()
		} else {
			pc.pc.resetSession(context.Background())
		}
	}
}

// resetSession resets the connection's session (resetSession, or
// resetPrepared when a statement that may have prepared one with SQL
// PREPARE was queued since the last) and runs Config.AfterConnect again, within resetTimeout and ctx, or closes it,
// and drops the notifications received for the last holder: they are not
// the next one's. When AfterConnect panics, the connection is closed and
// the panic goes on: the caller gives the connection back in a defer.
func (pc *poolConn) resetSession(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	reset := resetSession
	pc.c.wmu.Lock()
	if pc.c.stmts.sqlPrepared {
		reset = resetPrepared
	}
	pc.c.wmu.Unlock()
	if _, err := pc.c.Exec(ctx, reset); err != nil {
		pc.c.Close()
	} else if pc.p.cfg.AfterConnect != nil {
		pc.afterConnect(ctx)
	}
	pc.c.dropNotifications()
	pc.txRan.Store(false)
}

// afterConnect runs Config.AfterConnect on the connection just reset: an
// error closes it, and so does a panic, which goes on.
func (pc *poolConn) afterConnect(ctx context.Context) {
	done := false
	defer func() {
		if !done {
			pc.c.Close()
		}
	}()
	if err := pc.p.cfg.AfterConnect(ctx, pc.c); err != nil {
		pc.c.Close()
	}
	done = true
}

// resetTimeout bounds Release's reset of a connection: past it, the
// connection is closed instead.
const resetTimeout = 5 * time.Second

// close stops the host's pool: new calls fail with ErrPoolClosed,
// statements in flight and held connections finish (close waits for
// them), then every connection is closed.
func (p *hostPool) close() {
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
	if p.mon != nil { // the role checks have ended (hostSet.close)
		p.mon.Close()
		p.mon = nil
	}
	<-p.healthDone
}

// healthLoop closes idle connections past their idle time or lifetime,
// retires busy ones past their lifetime, drops broken ones and keeps
// pool_min_conns open.
func (p *hostPool) healthLoop() {
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
