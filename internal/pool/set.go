package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// A Pool over several hosts: one Host per host, and what the Pool
// knows of each host (see Set).
//
// Every Host of a Pool with several hosts connects with
// target_session_attrs=any (see Config.Connect), so that its connections
// serve every view (pgline's Pool.Target). What a host is — primary or standby, read-only or not,
// how far a standby's replay lags — comes from a role check: one small
// query (roleSQL) on a connection of its own to the host (roleQuery),
// run by the Pool's monitor (checkLoop) at once, every check period, and
// soon after an event that
// may mean a change: a connection lost, a failed connection attempt, a
// 25006 (read-only transaction) error, or a call waiting for a host that
// matches. A call chooses a host from those states (Set.choose),
// then runs on that host's Host as on a single-host Pool. When the
// host it waits for goes down or changes role, the waiting call is
// woken with a rerouteError (nothing was sent) and chooses again.
//
// Lock order: Host.mu, then Set.mu or Set.sigMu; nothing
// takes a Host's mu while holding the Set's.

// Role is a host's part in replication, as a Set last saw it; its values
// are those of pgline's HostRole.
type Role uint8

// The roles of a host.
const (
	RoleUnknown Role = iota // not checked yet
	RolePrimary             // not in recovery
	RoleStandby             // a hot standby, in recovery
)

// hostState is what a Pool knows of one host. It is never changed once
// stored in Host.state: a change stores a new one.
type hostState struct {
	settled  bool      // a role check or a connection attempt has answered
	down     bool      // the last attempt to reach the host failed, with err
	err      error     // why it is down
	checked  time.Time // when a role check last answered
	role     Role
	readOnly bool // new sessions are read-only (transaction_read_only)
	// behind is, for a standby, the last time the primary was seen at
	// or before the position the standby has replayed, when it has been
	// seen past it since (zero: it has replayed all the primary had at
	// the last check): the writes it lacks came after, so its lag is at
	// most the time since (see Set.behindLocked).
	behind time.Time
	lsn    uint64 // a standby's replayed position at the check
}

// lag returns a standby's replay lag at now (0 when caught up).
func (st *hostState) lag(now time.Time) time.Duration {
	if st.role != RoleStandby || st.behind.IsZero() {
		return 0
	}
	return max(0, now.Sub(st.behind))
}

// downCopy returns st marked down with err.
func (st *hostState) downCopy(err error) *hostState {
	d := *st
	d.settled, d.down, d.err = true, true, err
	return &d
}

// rerouteError is the failure of a call that waited for a host which went
// down or changed role meanwhile: nothing was sent, and the call chooses a
// host again.
type rerouteError struct{ err error }

// Error says that the host changed, and why.
func (e *rerouteError) Error() string { return "pgline: the host changed: " + e.err.Error() }

// Unwrap returns why the host changed.
func (e *rerouteError) Unwrap() error { return e.err }

// rerouted reports whether err is a rerouteError.
func rerouted(err error) bool {
	var re *rerouteError
	return errors.As(err, &re)
}

// errRoleChanged is the cause of a rerouteError after a role check.
var errRoleChanged = errors.New("its role changed")

// Set is the hosts of a Pool, shared by the Pool and its views (each
// view routes by its own target_session_attrs, given to Route and Take).
// It is safe for concurrent use.
type Set struct {
	cfg    *Config       // never changed
	attrs  string        // the DSN's target_session_attrs ("any" when empty)
	hosts  []*Host       // in the order of cfg.Hosts
	random bool          // load_balance_hosts=random
	maxLag time.Duration // pool_max_replica_lag; NoLimit when none
	// period is the time between two role checks when no call waits:
	// pool_health_check_period, or a quarter of pool_max_replica_lag if
	// shorter.
	period       time.Duration
	checkTimeout time.Duration // bounds one host's role check

	kickc    chan struct{} // one token: check the hosts soon
	stop     chan struct{} // closed by close
	closing  context.Context
	cancel   context.CancelFunc
	loopDone chan struct{}  // closed when checkLoop returns
	checks   sync.WaitGroup // role checks running
	closed   atomic.Bool
	started  atomic.Bool  // checkLoop runs (or ran)
	waiting  atomic.Int32 // calls waiting in pick
	startMu  sync.Mutex   // held to start checkLoop, or to stop it
	closeOne sync.Once

	sigMu   sync.Mutex    // protects changed
	changed chan struct{} // closed and replaced when a host's state changes

	mu sync.Mutex // protects the fields below
	// samples are the primary's WAL positions at the role checks, oldest
	// first, each one further than the one before: a standby whose
	// replayed position is below a sample is behind since that sample.
	// The oldest goes once the next is older than keepSamples.
	samples []lsnSample
	sampled *Host // the primary the samples are of
}

// NewSet makes the Hosts of cfg, which has at least one host, and starts
// them: each opens pool_min_conns connections in the background, and a
// Set of several hosts starts checking their roles.
func NewSet(cfg *Config) *Set {
	s := &Set{
		cfg:          cfg,
		attrs:        cfg.Attrs,
		random:       cfg.Random,
		maxLag:       NoLimit,
		period:       cfg.Settings.HealthPeriod,
		checkTimeout: max(5*time.Second, 2*cfg.ConnectTimeout),
		kickc:        make(chan struct{}, 1),
		stop:         make(chan struct{}),
		loopDone:     make(chan struct{}),
		changed:      make(chan struct{}),
	}
	if s.attrs == "" {
		s.attrs = "any"
	}
	if d := cfg.MaxReplicaLag; d > 0 {
		s.maxLag = d
		// A standby is taken for behind since the check before the
		// one that saw the primary past it (the safe side): with four
		// checks per bound, one that keeps up with a busy primary looks
		// at most two periods, half the bound, behind.
		s.period = min(s.period, max(s.maxLag/4, paceMin))
	}
	s.closing, s.cancel = context.WithCancel(context.Background())
	if len(cfg.Hosts) == 1 {
		// As a Pool always was: its connections are checked against
		// target_session_attrs as they are made (see Config.Connect).
		s.hosts = []*Host{newHost(s, 0, false)}
		return s
	}
	for i := range cfg.Hosts {
		s.hosts = append(s.hosts, newHost(s, i, true))
	}
	s.startMonitor()
	return s
}

// Hosts returns the Set's Hosts, in the order of Config.Hosts; the
// caller must not change the slice.
func (s *Set) Hosts() []*Host { return s.hosts }

// Direct returns the one Host every call for attrs goes to when there is
// no choice to make: the Set has one host, and attrs is the DSN's or
// any, with which its connections are made. It returns nil otherwise:
// the calls go through Route and Take, which choose.
func (s *Set) Direct(attrs string) *Host {
	if len(s.hosts) == 1 && (attrs == "" || attrs == "any" || attrs == s.attrs) {
		return s.hosts[0]
	}
	return nil
}

// maxReroutes bounds how many times a call chooses a host again because
// the one it waited for went down or changed role.
func (s *Set) maxReroutes() int { return 2*len(s.hosts) + 2 }

// Route takes a slot for one statement on a host that matches attrs
// (see Host.Route; rows: a Query or SendBatch, whose Rows count open
// from routing), choosing the host with pick.
func (s *Set) Route(ctx context.Context, attrs string, rows bool) (*Conn, error) {
	return s.onHost(ctx, attrs, func(hp *Host, ctx context.Context) (*Conn, error) {
		return hp.Route(ctx, rows)
	}, func(pc *Conn) { pc.p.done(pc, rows) })
}

// Take takes a connection of a host that matches attrs for exclusive use
// (see Host.Take), choosing the host with pick.
func (s *Set) Take(ctx context.Context, attrs string, reset bool) (*Conn, error) {
	return s.onHost(ctx, attrs, func(hp *Host, ctx context.Context) (*Conn, error) { return hp.Take(ctx, reset) },
		func(pc *Conn) { pc.p.giveBack(pc) })
}

// onHost runs get on a host picked for attrs, picked again (up to
// maxReroutes times, within ctx) when the call was sent back because
// that host went down or changed role, or when the host no longer
// matches attrs once get has its connection (its state changed while the
// call waited, or the connection just opened told of a new role, see
// Host.noteRole): the connection is then handed back (release) unused.
func (s *Set) onHost(ctx context.Context, attrs string, get func(*Host, context.Context) (*Conn, error), release func(*Conn)) (*Conn, error) {
	for n := 0; ; n++ {
		hp, err := s.pick(ctx, attrs)
		if err != nil {
			return nil, err
		}
		pc, err := get(hp, ctx)
		if err == nil && !s.stillMatches(hp, attrs) {
			release(pc)
			pc, err = nil, s.cfg.NotSent(&rerouteError{errRoleChanged})
		}
		if err == nil || !rerouted(err) || n >= s.maxReroutes() || ctx.Err() != nil {
			return pc, err
		}
	}
}

// startMonitor starts checkLoop, once, unless the set is closed.
func (s *Set) startMonitor() {
	if s.started.Load() {
		return
	}
	s.startMu.Lock()
	defer s.startMu.Unlock()
	if s.closed.Load() || s.started.Load() {
		return
	}
	s.started.Store(true)
	go s.checkLoop()
}

// kick asks for a role check soon; it never blocks.
func (s *Set) kick() {
	select {
	case s.kickc <- struct{}{}:
	default:
	}
}

// signal wakes the calls waiting for a host's state to change.
func (s *Set) signal() {
	s.sigMu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.sigMu.Unlock()
}

// changedChan returns the channel closed at the next signal.
func (s *Set) changedChan() <-chan struct{} {
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	return s.changed
}

// pick returns the Host a call for attrs goes to (see choose). When
// no host matches, a call waits for one while the role checks are not
// all in, and after that only when its ctx has a deadline (then up to
// it) and a host may yet come to match; otherwise it gets an error at
// once, naming each host and why it does not match. The errors are
// SafeToRetry.
func (s *Set) pick(ctx context.Context, attrs string) (*Host, error) {
	s.startMonitor()
	kicked := false
	for {
		ch := s.changedChan()
		if hp := s.choose(attrs); hp != nil {
			return hp, nil
		}
		if s.closed.Load() {
			return nil, s.cfg.closedErr()
		}
		settled, why := s.noHost(attrs)
		if settled && !s.waitable(ctx) {
			return nil, s.cfg.NotSent(why)
		}
		if !kicked {
			s.kick() // and while it waits, the checks come paced (checkLoop)
			kicked = true
		}
		s.waiting.Add(1)
		select {
		case <-ch:
			s.waiting.Add(-1)
		case <-ctx.Done():
			s.waiting.Add(-1)
			_, why = s.noHost(attrs)
			return nil, s.cfg.NotSent(fmt.Errorf("%w (waiting for a host: %w)", ctx.Err(), why))
		}
	}
}

// choose returns the host a call for attrs goes to, or nil: among the
// hosts that match attrs (see matches; prefer-standby: the standbys, else,
// once every host has been checked, the primary), the first in the DSN's
// order, or one at random with load_balance_hosts=random.
func (s *Set) choose(attrs string) *Host {
	now := s.lagNow()
	if attrs == "prefer-standby" {
		if hp := s.chooseAmong("standby", now); hp != nil {
			return hp
		}
		for _, hp := range s.hosts {
			if !hp.state.Load().settled {
				return nil // it may be a standby: wait for its check
			}
		}
		return s.chooseAmong("primary", now)
	}
	return s.chooseAmong(attrs, now)
}

// chooseAmong returns a host that matches want (see choose).
func (s *Set) chooseAmong(want string, now time.Time) *Host {
	if !s.random {
		for _, hp := range s.hosts {
			if s.matches(hp.state.Load(), want, now) {
				return hp
			}
		}
		return nil
	}
	n := 0
	for _, hp := range s.hosts {
		if s.matches(hp.state.Load(), want, now) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	k := rand.N(n)
	for _, hp := range s.hosts {
		if s.matches(hp.state.Load(), want, now) {
			if k == 0 {
				return hp
			}
			k--
		}
	}
	return nil // the states changed meanwhile
}

// matches reports whether a host in state st takes a call for want: a
// host that is down never does, nor a standby lagging more than
// pool_max_replica_lag; any takes a host not checked yet, the others
// need its role.
func (s *Set) matches(st *hostState, want string, now time.Time) bool {
	if st.down || st.role == RoleStandby && s.maxLag != NoLimit && st.lag(now) > s.maxLag {
		return false
	}
	switch want {
	case "any":
		return true
	case "read-write":
		return st.role != RoleUnknown && !st.readOnly
	case "read-only":
		return st.role != RoleUnknown && st.readOnly
	case "primary":
		return st.role == RolePrimary
	case "standby":
		return st.role == RoleStandby
	}
	return false
}

// lagNow is the time matches takes a standby's lag at: now, or zero
// (not read) when no pool_max_replica_lag bounds it.
func (s *Set) lagNow() time.Time {
	if s.maxLag == NoLimit {
		return time.Time{}
	}
	return time.Now()
}

// stillMatches reports whether hp, chosen for attrs, matches them still
// (see choose; prefer-standby: a standby, or the primary).
func (s *Set) stillMatches(hp *Host, attrs string) bool {
	now := s.lagNow()
	st := hp.state.Load()
	if attrs == "prefer-standby" {
		return s.matches(st, "standby", now) || s.matches(st, "primary", now)
	}
	return s.matches(st, attrs, now)
}

// noHost tells why no host matches attrs (Config.NoHost): settled
// reports that every host has been checked (or found down) at least
// once.
func (s *Set) noHost(attrs string) (settled bool, err error) {
	now := time.Now()
	settled = true
	misses := make([]Miss, 0, len(s.hosts))
	for _, hp := range s.hosts {
		st := hp.state.Load()
		m := Miss{Host: hp.label}
		switch {
		case st.down:
			m.Err = st.err
		case !st.settled:
			settled = false
			m.Err = errors.New("not checked yet")
		case st.role == RoleStandby && s.maxLag != NoLimit && st.lag(now) > s.maxLag:
			m.Mismatch = fmt.Sprintf("standby %v behind, more than pool_max_replica_lag=%v",
				st.lag(now).Round(time.Millisecond), s.maxLag)
		case attrs == "read-write" || attrs == "read-only":
			m.Mismatch = "session is read-write"
			if st.readOnly {
				m.Mismatch = "session is read-only"
			}
		default:
			m.Mismatch = "server is not in hot standby mode"
			if st.role == RoleStandby {
				m.Mismatch = "server is in hot standby mode"
			}
		}
		misses = append(misses, m)
	}
	return settled, s.cfg.NoHost(attrs, misses)
}

// waitable reports whether a call that found no host waits for one: its
// ctx has a deadline, and some host is up or down for a reason that may
// pass (not a server refusing the session, see waitsForHost).
func (s *Set) waitable(ctx context.Context) bool {
	if _, ok := ctx.Deadline(); !ok || ctx.Err() != nil {
		return false
	}
	for _, hp := range s.hosts {
		if st := hp.state.Load(); !st.down || s.cfg.waitsForHost(ctx, st.err) {
			return true
		}
	}
	return false
}

// close stops the role checks and closes every Host, waiting for
// their statements and held connections: new calls fail with
// Config.ErrClosed, statements in flight and held connections finish
// (Close waits for them), then every connection is closed. It is safe to
// call more than once.
func (s *Set) Close() {
	s.closeOne.Do(func() {
		s.startMu.Lock()
		s.closed.Store(true)
		close(s.stop)
		s.cancel()
		started := s.started.Load()
		s.startMu.Unlock()
		if started {
			<-s.loopDone
		}
		s.checks.Wait() // they end at once: closing is canceled
		var wg sync.WaitGroup
		for _, hp := range s.hosts {
			wg.Go(hp.close)
		}
		wg.Wait()
		s.signal() // calls waiting in pick see the set closed
	})
}
