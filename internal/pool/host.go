package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Host is the connections of a Pool to one host, and the engine that
// routes statements over them: each statement goes to the connection
// with the least load (its requests in flight, unless open Rows or a
// silent head hold it: see route.go), where it is pipelined with the
// others; connections are opened as load needs them, up to
// pool_max_conns; when every connection has pool_max_pipeline statements
// in flight, statements wait in one line and Acquire and Begin in
// another, each served in arrival order (see route.go and take.go). A
// Pool is a handle on the Hosts of its Set: with one host, on exactly
// one. A Host is safe for concurrent use.
type Host struct {
	cfg   *Config  // the Set's
	st    Settings // cfg.Settings
	index int      // in cfg.Hosts

	// set is the Pool's set of hosts; multi reports that it has more than
	// this one, and then a failed connection attempt marks the host down
	// and sends the calls waiting here to choose a host again (see
	// hostDownLocked), instead of waiting for this host to come back.
	set   *Set
	multi bool
	label string // the host, "host:port" or the socket path

	// state is what the last role check or connection attempt found (see
	// Set.check); never nil.
	state atomic.Pointer[hostState]
	// checking is set while a role check of this host runs; it alone
	// uses mon, the monitor connection (see roleQuery), and basicRole.
	checking  atomic.Bool
	mon       Backend
	basicRole bool // the server has no WAL functions: roleSQLBasic

	mu      sync.Mutex // protects the fields below
	conns   []*Conn    // open connections that statements are routed to
	opening int        // connections being opened
	held    int        // connections held by Acquire or Begin
	takers  int        // Acquire or Begin calls waiting for a connection
	// The Acquire and Begin calls waiting for a connection (see
	// serveTakersLocked), and those opening one.
	takeLine  waitLine
	takeOpens int
	closed    bool          // Close was called
	changed   chan struct{} // closed and replaced when the fields change, if watched
	watched   bool          // someone waits on changed (see signalLocked)
	lastErr   error         // the last failure to open a connection
	stmtLine  waitLine      // the statements waiting for a slot (see route)
	waiters   sync.Pool     // *waiter, recycled (see newWaiter)
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

// newHost starts the Host of set's host index.
func newHost(set *Set, index int, multi bool) *Host {
	p := &Host{
		cfg:        set.cfg,
		st:         set.cfg.Settings,
		index:      index,
		set:        set,
		multi:      multi,
		label:      set.cfg.Hosts[index],
		changed:    make(chan struct{}),
		stopHealth: make(chan struct{}),
		healthDone: make(chan struct{}),
	}
	p.state.Store(&hostState{})
	p.closing, p.stopOpens = context.WithCancel(context.Background())
	p.mu.Lock()
	p.fillMinLocked()
	p.mu.Unlock()
	go p.healthLoop()
	return p
}

// Index is the host's place in Config.Hosts.
func (p *Host) Index() int { return p.index }

// Label names the host: "host:port" or the socket path.
func (p *Host) Label() string { return p.label }

// MaxConns is pool_max_conns, the most connections open to the host.
func (p *Host) MaxConns() int { return p.st.MaxConns }

// Conn is a connection of a Host, and the Host's bookkeeping of it: its
// counters are guarded by Host.mu. A routed Conn (Host.Route) serves
// many statements at once, each ended by Done; a held one (Host.Take)
// serves its taker alone until GiveBack or Release.
type Conn struct {
	p        *Host
	b        Backend
	inflight int // statements routed to it and not finished
	// openRows counts the Rows of Query and SendBatch routed to it and
	// not closed: from the moment they are routed, since they go to user
	// code, which holds the statements queued behind them (see
	// Host.loadLocked). rowHolds counts the Rows of QueryRow read and
	// not scanned yet: Scan reads them at once, so they hold nothing back
	// (a Row left unscanned stalls its connection instead).
	openRows int
	rowHolds int
	retiring bool // past its lifetime: no new statements; closed when idle
	draining bool // wanted by Acquire or Begin: no new statements until idle
	// txRan: a Pool transaction ran on it since its session was last
	// reset; what it set for the session (LISTEN, SET) is not an
	// Acquire holder's, who gets it reset first (see Host.Take).
	txRan   atomic.Bool
	created time.Time
	// lastUsed is when a statement routed to it last finished, or when
	// it last went from idle to busy: with statements in flight, its last
	// sign of progress (see stallAfter).
	lastUsed time.Time
}

// Backend is the connection.
func (pc *Conn) Backend() Backend { return pc.b }

// Host is the host the connection is to.
func (pc *Conn) Host() *Host { return pc.p }

// Done ends one statement routed to the connection (see Host.done).
func (pc *Conn) Done(rows bool) { pc.p.done(pc, rows) }

// HoldRow counts the Rows of a QueryRow routed to the connection as
// read until Scan closes them, which ends the statement with Done(true)
// (see Conn.rowHolds).
func (pc *Conn) HoldRow() {
	pc.p.mu.Lock()
	pc.rowHolds++
	pc.p.mu.Unlock()
}

// MarkTxRan notes that a Pool transaction ran on the held connection: an
// Acquire that takes it later resets its session first.
func (pc *Conn) MarkTxRan() { pc.txRan.Store(true) }

// signalLocked serves the Acquire and Begin calls waiting in line and
// wakes Close, waiting for a change (statements wait in route's queue).
func (p *Host) signalLocked() {
	p.serveTakersLocked()
	if !p.watched {
		return
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.watched = false
}

// changedLocked returns the channel closed at the next change.
func (p *Host) changedLocked() <-chan struct{} {
	p.watched = true
	return p.changed
}

// totalLocked counts the connections open, being opened and held.
func (p *Host) totalLocked() int { return len(p.conns) + p.opening + p.held }

// openLocked starts opening one connection in the background, once the
// backoff after failed attempts has passed.
func (p *Host) openLocked() {
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
			ctx, cancel = context.WithTimeout(p.closing, DefaultConnectTimeout)
		}
		c, err := p.connect(ctx)
		if err != nil && ctx.Err() != nil && p.closing.Err() == nil {
			// Not any caller's deadline: say so, without wrapping
			// context.DeadlineExceeded.
			err = fmt.Errorf("pgline: connecting to %s: %w within %v (connect_timeout is not set)", p.label, errNoAnswer, DefaultConnectTimeout)
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
		p.conns = append(p.conns, &Conn{p: p, b: c, created: now, lastUsed: now})
		p.lastErr = nil
		p.upAgainLocked()
		p.serveLocked()
		p.signalLocked()
	}()
}

// DefaultConnectTimeout bounds a connection attempt a Pool makes in the
// background when connect_timeout is not set, so that a host that accepts
// and never answers does not hold the slot for ever; the attempt is made
// again after the backoff, and the calls waiting go on waiting.
const DefaultConnectTimeout = 10 * time.Second

// errNoAnswer is wrapped by the error of a connection attempt that ran
// out of DefaultConnectTimeout: the Pool's own bound, no outcome for the
// calls waiting (see waitsForHost).
var errNoAnswer = errors.New("no answer")

// Backoff between failed connection attempts: from backoffMin, doubled
// per failure up to backoffMax, each drawn between half and all of it.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = time.Second
)

// openFailedLocked notes a failed connection attempt: the next one waits.
func (p *Host) openFailedLocked(err error) {
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

// backoffErrLocked is the error that a call which does not wait for the
// host (waitsForHost) gets at once, instead of a place in line, while no
// connection to the host is open and the next attempt waits out its
// backoff: the last attempt's failure, not sent. Nil otherwise: for a call
// that waits, or whose ctx has ended (its own error says so); while a
// connection is open (it may be freed for the call); on a Set of several
// hosts (a host down there is routed around, see hostDownLocked).
func (p *Host) backoffErrLocked(ctx context.Context) error {
	switch {
	case p.multi, p.failures == 0, p.lastErr == nil, ctxEnded(ctx) != nil,
		len(p.conns) > 0, p.held > p.takeOpens, // a connection is open
		!time.Now().Before(p.nextOpen), p.cfg.waitsForHost(ctx, p.lastErr):
		return nil
	}
	return p.cfg.NotSent(p.lastErr)
}

// upAgainLocked notes a connection made: when the host was marked down,
// a role check soon says what it is now.
func (p *Host) upAgainLocked() {
	if p.multi && p.state.Load().down {
		p.set.kick()
	}
}

// waitsForHost reports whether a call whose connection attempt failed
// with err waits for the next one: only with a deadline, and unless the
// error is final (Config.Final: a server refused the session for
// another reason than too many connections) or the Set closed. The
// Pool's own bound on an attempt (errNoAnswer) fails nobody: a host slow
// rather than down answers a later one, and without connect_timeout a
// call waits for it, as a connection does in libpq, until its ctx ends.
func (cfg *Config) waitsForHost(ctx context.Context, err error) bool {
	if errors.Is(err, errNoAnswer) {
		return ctx.Err() == nil
	}
	_, ok := ctx.Deadline()
	return ok && ctx.Err() == nil && !cfg.Final(err) && !errors.Is(err, cfg.ErrClosed)
}

// connectWaitErr is the error of a call whose ctx ended while it waited
// for a connection, with the last attempt's failure.
func (cfg *Config) connectWaitErr(ctx context.Context, last error) error {
	if last == nil {
		return cfg.NotSent(ctx.Err())
	}
	return cfg.NotSent(fmt.Errorf("%w (last connection attempt: %w)", ctx.Err(), last))
}

// closedErr is the error of a call on a closed Set.
func (cfg *Config) closedErr() error { return cfg.NotSent(cfg.ErrClosed) }

// ctxEnded returns ctx's error, or context.DeadlineExceeded once its
// deadline has passed (a timer may not have ended it yet), or nil; as
// pgline's own.
func ctxEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// fillMinLocked opens connections up to pool_min_conns.
func (p *Host) fillMinLocked() {
	for !p.closed && p.totalLocked() < p.st.MinConns {
		p.openLocked()
	}
}

// pruneClosedLocked drops the connections that have been closed (by a
// fatal error, or by the server).
func (p *Host) pruneClosedLocked() {
	p.conns = slices.DeleteFunc(p.conns, func(pc *Conn) bool { return pc.b.IsClosed() })
}

// dropLocked removes pc from the routable connections.
func (p *Host) dropLocked(pc *Conn) {
	for i, x := range p.conns {
		if x == pc {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			return
		}
	}
}

// done ends one statement routed to pc; rows reports that it was counted
// in openRows (a Query or SendBatch) or rowHolds (a QueryRow read). Rows
// and Rows of a Row end alike (pgline's Rows.finish), so done takes a Row's hold
// off first: the Rows of one connection are read in turn, so a Row held
// while another Rows ends is that Rows' successor, and taking its hold
// off first can only keep openRows counted a moment longer (until the
// Row's own end), never shorter.
func (p *Host) done(pc *Conn, rows bool) {
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
	if pc.b.TxStatus() != 'I' {
		// A routed statement left its session in a transaction (BEGIN
		// given to Exec): no statement may be routed into it. The
		// connection is closed once idle, which rolls it back, as
		// giveBack does for Acquire's.
		pc.retiring = true
	}
	if pc.b.IsClosed() || pc.retiring && pc.inflight == 0 {
		p.lostLocked(pc)
		p.dropLocked(pc)
		if pc.inflight == 0 {
			pc.b.Close()
		}
		p.fillMinLocked()
	}
	p.serveLocked()
	p.signalLocked()
	p.mu.Unlock()
}

// lostLocked is called for every connection the host drops, and notes
// those found closed (not retired). With other hosts, a connection whose
// server stopped answering
// (Backend.PeerLost: a partition, a host gone) marks the host down at
// once, so that calls go to the others without waiting for a connection
// attempt or a role check to time out on it; a role check (Set.check)
// brings it back when it answers again. Any other loss asks for a role
// check: is the host still there, and what is it?
func (p *Host) lostLocked(pc *Conn) {
	if !p.multi || !pc.b.IsClosed() {
		return
	}
	if err := pc.b.PeerLost(); err != nil {
		p.hostDownLocked(err)
		return
	}
	p.set.kick()
}

// Route takes a slot for one statement on a connection of the host (see
// route), with the connection checked when it was idle for
// pool_idle_check (see Backend.UsableAfterIdle; broken ones are
// dropped); rows reports a Query or SendBatch, whose Rows count open on
// the connection from now on. The statement ends with Conn.Done(rows).
func (p *Host) Route(ctx context.Context, rows bool) (*Conn, error) {
	for {
		pc, check, err := p.route(ctx, rows)
		if err != nil || !check || pc.b.UsableAfterIdle(ctx) {
			return pc, err
		}
		p.done(pc, rows) // closed: dropped
	}
}

// connect opens a connection to p's host (Config.Connect). With several
// hosts, the connection reports to NoteReadOnly and NoteRole, and its
// session's report of the server (see noteRole) is compared with the
// host's state as it opens.
func (p *Host) connect(ctx context.Context) (Backend, error) {
	c, err := p.cfg.Connect(ctx, p, false)
	if err == nil && p.multi {
		p.noteRole(c, true)
	}
	return c, err
}

// NoteReadOnly is told, on a Set of several hosts, of each 25006 error
// (read-only transaction) a connection to the host receives, in any call
// (a statement, rows, a batch, a transaction): on a host believed
// writable, it has the roles checked at once, since the host's role
// changed, or its sessions were made read-only
// (default_transaction_read_only), and calls for a writable host must go
// elsewhere.
func (p *Host) NoteReadOnly() {
	if !p.state.Load().readOnly {
		p.set.kick()
	}
}

// NoteRole is told, on a Set of several hosts, when the server of c, a
// connection to the host, reports a new in_hot_standby (see noteRole).
func (p *Host) NoteRole(c Backend) { p.noteRole(c, false) }

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
func (p *Host) noteRole(c Backend, opening bool) {
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
		if opening || (st.role == RoleStandby) != standby {
			readOnly = standby || dtro == "on"
		}
		if (st.role == RoleStandby) == standby && st.readOnly == readOnly {
			return
		}
		next := &hostState{settled: true, checked: st.checked, role: RolePrimary, readOnly: readOnly}
		if standby {
			next.role, next.behind = RoleStandby, lagUnknown
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

// close stops the host's pool: new calls fail with Config.ErrClosed,
// statements in flight and held connections finish (close waits for
// them), then every connection is closed.
func (p *Host) close() {
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
		pc.b.Close()
	}
	if p.mon != nil { // the role checks have ended (Set.close)
		p.mon.Close()
		p.mon = nil
	}
	<-p.healthDone
}

// healthLoop closes idle connections past their idle time or lifetime,
// retires busy ones past their lifetime, drops broken ones and keeps
// pool_min_conns open.
func (p *Host) healthLoop() {
	defer close(p.healthDone)
	t := time.NewTicker(p.st.HealthPeriod)
	defer t.Stop()
	for {
		select {
		case <-p.stopHealth:
			return
		case <-t.C:
		}
		p.mu.Lock()
		now := time.Now()
		var closing []Backend
		for i := 0; i < len(p.conns); i++ {
			pc := p.conns[i]
			expired := now.Sub(pc.created) > p.st.MaxLifetime
			idleTooLong := pc.inflight == 0 && now.Sub(pc.lastUsed) > p.st.MaxIdle && p.totalLocked() > p.st.MinConns
			if pc.b.IsClosed() || pc.inflight == 0 && (expired || idleTooLong) {
				p.conns = append(p.conns[:i], p.conns[i+1:]...)
				i--
				closing = append(closing, pc.b)
				continue
			}
			if expired {
				pc.retiring = true
			}
			// Nobody can wait for notifications on a routed connection
			// (a LISTEN run in a Pool transaction outlives it): drop
			// them rather than keep them for ever.
			pc.b.DropNotifications()
		}
		p.fillMinLocked()
		p.signalLocked()
		p.mu.Unlock()
		for _, c := range closing {
			c.Close()
		}
	}
}

// Stat is a Host's counters at one moment (see Host.Stat).
type Stat struct {
	Total       int // connections open, being opened, or held
	Idle        int // open, routable, with nothing in flight
	Held        int // held by Take
	Opening     int // being opened
	InFlight    int // statements in flight on routable connections
	Waiting     int // statements waiting for a slot
	TakeWaiting int // Take calls waiting for a connection of their own
	MaxConns    int // pool_max_conns
}

// Stat returns the host's counters; the monitor connection of the role
// checks is not among them.
func (p *Host) Stat() Stat {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stat{
		Total:       p.totalLocked(),
		Held:        p.held,
		Opening:     p.opening,
		Waiting:     p.stmtLine.n,
		TakeWaiting: p.takeLine.n,
		MaxConns:    p.st.MaxConns,
	}
	for _, pc := range p.conns {
		s.InFlight += pc.inflight
		if pc.inflight == 0 {
			s.Idle++
		}
	}
	return s
}

// State is what a Set knows of a host (see Host.State).
type State struct {
	Role     Role
	ReadOnly bool          // new sessions are read-only (transaction_read_only)
	Lag      time.Duration // a standby's replay lag; 0 when caught up
	Checked  time.Time     // when a role check last answered (zero: never)
	Down     bool          // the last connection attempt or role check failed, with Err
	Err      error
}

// State returns what the last role check or connection attempt found of
// the host, with a standby's lag at now.
func (p *Host) State(now time.Time) State {
	st := p.state.Load()
	return State{Role: st.role, ReadOnly: st.readOnly, Lag: st.lag(now), Checked: st.checked, Down: st.down, Err: st.err}
}

// Backends returns the connections statements are routed to now, a
// snapshot (held connections are not among them); for tests that look
// at the connections themselves.
func (p *Host) Backends() []Backend {
	p.mu.Lock()
	defer p.mu.Unlock()
	bs := make([]Backend, len(p.conns))
	for i, pc := range p.conns {
		bs[i] = pc.b
	}
	return bs
}
