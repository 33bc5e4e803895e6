package pgline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// A Pool over several hosts: one hostPool per host, and what the Pool
// knows of each host.
//
// Every hostPool of a Pool with several hosts connects with
// target_session_attrs=any, so that its connections serve every view
// (Pool.Target). What a host is — primary or standby, read-only or not,
// how far a standby's replay lags — comes from a role check: one small
// query (roleSQL) on a connection of its own to the host (roleQuery),
// run by the Pool's monitor (checkLoop) at once, every check period, and
// soon after an event that
// may mean a change: a connection lost, a failed connection attempt, a
// 25006 (read-only transaction) error, or a call waiting for a host that
// matches. A call chooses a host from those states (hostSet.choose),
// then runs on that host's hostPool as on a single-host Pool. When the
// host it waits for goes down or changes role, the waiting call is
// woken with a rerouteError (nothing was sent) and chooses again.
//
// Lock order: hostPool.mu, then hostSet.mu or hostSet.sigMu; nothing
// takes a hostPool's mu while holding the hostSet's.

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

// hostState is what a Pool knows of one host. It is never changed once
// stored in hostPool.state: a change stores a new one.
type hostState struct {
	settled  bool      // a role check or a connection attempt has answered
	down     bool      // the last attempt to reach the host failed, with err
	err      error     // why it is down
	checked  time.Time // when a role check last answered
	role     HostRole
	readOnly bool // new sessions are read-only (transaction_read_only)
	// behind is, for a standby, the last time the primary was seen at
	// or before the position the standby has replayed, when it has been
	// seen past it since (zero: it has replayed all the primary had at
	// the last check): the writes it lacks came after, so its lag is at
	// most the time since (see hostSet.behindLocked).
	behind time.Time
	lsn    uint64 // a standby's replayed position at the check
}

// lag returns a standby's replay lag at now (0 when caught up).
func (st *hostState) lag(now time.Time) time.Duration {
	if st.role != HostStandby || st.behind.IsZero() {
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

func (e *rerouteError) Error() string { return "pgline: the host changed: " + e.err.Error() }
func (e *rerouteError) Unwrap() error { return e.err }

// rerouted reports whether err is a rerouteError.
func rerouted(err error) bool {
	var re *rerouteError
	return errors.As(err, &re)
}

// errRoleChanged is the cause of a rerouteError after a role check.
var errRoleChanged = errors.New("its role changed")

// Pacing of the role checks: soon after a kick, then paceMin doubling up
// to paceMax while calls wait for a host that matches.
const (
	paceMin = 10 * time.Millisecond
	paceMax = 250 * time.Millisecond
)

// lsnSample is the primary's WAL position, first seen at at and last
// seen (unchanged) at until (see hostSet.samples).
type lsnSample struct {
	at, until time.Time
	lsn       uint64
}

// maxSamples bounds hostSet.samples.
const maxSamples = 1024

// hostSet is the hosts of a Pool, shared by the Pool and its views.
type hostSet struct {
	cfg    *Config       // the Pool's own copy, every host
	attrs  string        // the DSN's target_session_attrs ("any" when empty)
	hosts  []*hostPool   // in the order of cfg.Hosts
	random bool          // load_balance_hosts=random
	maxLag time.Duration // pool_max_replica_lag; noLimit when none
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
	sampled *hostPool        // the primary the samples are of
	views   map[string]*Pool // Target's views, one per attrs
}

// newHostSet makes the hostPools of cfg (the Pool's own copy).
func newHostSet(cfg *Config) *hostSet {
	pc := cfg.Pool.settings()
	s := &hostSet{
		cfg:          cfg,
		attrs:        cfg.TargetSessionAttrs,
		random:       cfg.LoadBalanceHosts == "random",
		maxLag:       noLimit,
		period:       pc.healthPeriod,
		checkTimeout: max(5*time.Second, 2*cfg.ConnectTimeout),
		kickc:        make(chan struct{}, 1),
		stop:         make(chan struct{}),
		loopDone:     make(chan struct{}),
		changed:      make(chan struct{}),
		views:        make(map[string]*Pool),
	}
	if s.attrs == "" {
		s.attrs = "any"
	}
	if d := cfg.Pool.MaxReplicaLag; d > 0 {
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
		// target_session_attrs as they are made.
		s.hosts = []*hostPool{newHostPool(cfg, pc, s, false)}
		return s
	}
	for _, h := range cfg.Hosts {
		hc := *cfg
		hc.Hosts = []HostConfig{h}
		hc.TargetSessionAttrs = "any"
		s.hosts = append(s.hosts, newHostPool(&hc, pc, s, true))
	}
	s.startMonitor()
	return s
}

// view returns the Pool that routes to the hosts matching attrs.
func (s *hostSet) view(attrs string) *Pool {
	if attrs == "" {
		attrs = "any"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.views[attrs]; v != nil {
		return v
	}
	v := &Pool{cfg: s.cfg, set: s, attrs: attrs}
	switch attrs {
	case "any", "read-write", "read-only", "primary", "standby", "prefer-standby":
	default:
		v.err = fmt.Errorf("pgline: Pool.Target: invalid target_session_attrs %q", attrs)
		return v
	}
	if len(s.hosts) == 1 && (attrs == "any" || attrs == s.attrs) {
		v.direct = s.hosts[0]
	}
	s.views[attrs] = v
	return v
}

// startMonitor starts checkLoop, once, unless the set is closed.
func (s *hostSet) startMonitor() {
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
func (s *hostSet) kick() {
	select {
	case s.kickc <- struct{}{}:
	default:
	}
}

// signal wakes the calls waiting for a host's state to change.
func (s *hostSet) signal() {
	s.sigMu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.sigMu.Unlock()
}

// changedChan returns the channel closed at the next signal.
func (s *hostSet) changedChan() <-chan struct{} {
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	return s.changed
}

// pick returns the hostPool a call for attrs goes to (see choose). When
// no host matches, a call waits for one while the role checks are not
// all in, and after that only when its ctx has a deadline (then up to
// it) and a host may yet come to match; otherwise it gets an error at
// once, naming each host and why it does not match. The errors are
// SafeToRetry.
func (s *hostSet) pick(ctx context.Context, attrs string) (*hostPool, error) {
	s.startMonitor()
	kicked := false
	for {
		ch := s.changedChan()
		if hp := s.choose(attrs); hp != nil {
			return hp, nil
		}
		if s.closed.Load() {
			return nil, notSent(ErrPoolClosed)
		}
		settled, why := s.noHost(attrs)
		if settled && !s.waitable(ctx) {
			return nil, notSent(why)
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
			return nil, notSent(fmt.Errorf("%w (waiting for a host: %w)", ctx.Err(), why))
		}
	}
}

// choose returns the host a call for attrs goes to, or nil: among the
// hosts that match attrs (see matches; prefer-standby: the standbys, else,
// once every host has been checked, the primary), the first in the DSN's
// order, or one at random with load_balance_hosts=random.
func (s *hostSet) choose(attrs string) *hostPool {
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

func (s *hostSet) chooseAmong(want string, now time.Time) *hostPool {
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
func (s *hostSet) matches(st *hostState, want string, now time.Time) bool {
	if st.down || st.role == HostStandby && s.maxLag != noLimit && st.lag(now) > s.maxLag {
		return false
	}
	switch want {
	case "any":
		return true
	case "read-write":
		return st.role != HostUnknown && !st.readOnly
	case "read-only":
		return st.role != HostUnknown && st.readOnly
	case "primary":
		return st.role == HostPrimary
	case "standby":
		return st.role == HostStandby
	}
	return false
}

// lagNow is the time matches takes a standby's lag at: now, or zero
// (not read) when no pool_max_replica_lag bounds it.
func (s *hostSet) lagNow() time.Time {
	if s.maxLag == noLimit {
		return time.Time{}
	}
	return time.Now()
}

// stillMatches reports whether hp, chosen for attrs, matches them still
// (see choose; prefer-standby: a standby, or the primary).
func (s *hostSet) stillMatches(hp *hostPool, attrs string) bool {
	now := s.lagNow()
	st := hp.state.Load()
	if attrs == "prefer-standby" {
		return s.matches(st, "standby", now) || s.matches(st, "primary", now)
	}
	return s.matches(st, attrs, now)
}

// noHost tells why no host matches attrs: settled reports that every
// host has been checked (or found down) at least once.
func (s *hostSet) noHost(attrs string) (settled bool, err error) {
	now := time.Now()
	settled = true
	var ce ConnectError
	for _, hp := range s.hosts {
		st := hp.state.Load()
		var why error
		switch {
		case st.down:
			why = st.err
		case !st.settled:
			settled = false
			why = errors.New("not checked yet")
		case st.role == HostStandby && s.maxLag != noLimit && st.lag(now) > s.maxLag:
			why = &sessionAttrsError{attrs, fmt.Sprintf("standby %v behind, more than pool_max_replica_lag=%v",
				st.lag(now).Round(time.Millisecond), s.maxLag)}
		case attrs == "read-write" || attrs == "read-only":
			why = &sessionAttrsError{attrs, "session is read-write"}
			if st.readOnly {
				why = &sessionAttrsError{attrs, "session is read-only"}
			}
		default:
			why = &sessionAttrsError{attrs, "server is not in hot standby mode"}
			if st.role == HostStandby {
				why = &sessionAttrsError{attrs, "server is in hot standby mode"}
			}
		}
		ce.Attempts = append(ce.Attempts, HostError{Host: hp.label, Err: why})
	}
	return settled, &ce
}

// waitable reports whether a call that found no host waits for one: its
// ctx has a deadline, and some host is up or down for a reason that may
// pass (not a server refusing the session, see waitsForHost).
func (s *hostSet) waitable(ctx context.Context) bool {
	if _, ok := ctx.Deadline(); !ok || ctx.Err() != nil {
		return false
	}
	for _, hp := range s.hosts {
		if st := hp.state.Load(); !st.down || waitsForHost(ctx, st.err) {
			return true
		}
	}
	return false
}

// checkLoop runs the role checks: at once, then every period, and soon
// after a kick; while calls wait for a host, every paceMin doubling up
// to paceMax.
func (s *hostSet) checkLoop() {
	defer close(s.loopDone)
	t := time.NewTimer(0)
	defer t.Stop()
	gap := paceMin // the least time between two checks now
	var last time.Time
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.kickc:
			if d := time.Until(last.Add(gap)); d > 0 {
				t.Reset(d)
				select {
				case <-s.stop:
					return
				case <-t.C:
				}
			}
		}
		last = time.Now()
		s.checkAll()
		next := s.period
		if s.waiting.Load() > 0 {
			next = gap
			gap = min(2*gap, paceMax)
		} else {
			gap = paceMin
		}
		t.Reset(next)
	}
}

// checkAll starts a role check of every host not being checked already.
func (s *hostSet) checkAll() {
	for _, hp := range s.hosts {
		if !hp.checking.CompareAndSwap(false, true) {
			continue
		}
		s.checks.Add(1)
		go func() {
			defer s.checks.Done()
			defer hp.checking.Store(false)
			s.check(hp)
		}()
	}
}

// errProbeBackoff is the answer of a role check that did not try, as
// connection attempts to the host are backed off: the host's state stays
// as it is.
var errProbeBackoff = errors.New("pgline: connection attempts to the host are backed off")

// check runs the role check of one host and stores what it found.
func (s *hostSet) check(hp *hostPool) {
	ctx, cancel := context.WithTimeout(s.closing, s.checkTimeout)
	defer cancel()
	start := time.Now()
	r, err := hp.roleQuery(ctx)
	switch {
	case s.closed.Load() || errors.Is(err, errProbeBackoff):
		return
	case err != nil:
		s.setDown(hp, err)
	default:
		s.apply(hp, r, start, time.Now())
	}
}

// setDown marks hp down after a failed role check.
func (s *hostSet) setDown(hp *hostPool, err error) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	hp.hostDownLocked(err)
}

// hostDownLocked marks the host down, after a failed connection attempt
// or role check, and, when the Pool has other hosts, sends the calls
// waiting for this one's connections to choose a host again.
func (p *hostPool) hostDownLocked(err error) {
	old := p.state.Load()
	p.state.Store(old.downCopy(err))
	if p.multi {
		// With one host, its calls wait for it as they always did.
		p.rerouteWaitersLocked(err)
	}
	p.set.signal()
	if !old.down {
		p.set.kick() // has another host taken over?
	}
}

// rerouteWaitersLocked ends the wait of every call waiting here, with a
// rerouteError: it chooses a host again.
func (p *hostPool) rerouteWaitersLocked(err error) {
	for _, l := range []*waitLine{&p.stmtLine, &p.takeLine} {
		for w := l.head; w != nil; w = l.head {
			l.remove(w)
			w.err = notSent(&rerouteError{err})
			w.wake()
		}
	}
}

// apply stores the answer of hp's role check, started at start and
// answered at at. A primary's position is taken as of start (it was no
// further then: the safe side for the lag of the standbys).
func (s *hostSet) apply(hp *hostPool, r roleResult, start, at time.Time) {
	st := &hostState{settled: true, checked: at, role: HostPrimary, readOnly: r.readOnly}
	s.mu.Lock()
	if r.standby {
		st.role = HostStandby
		st.behind, st.lsn = s.behindLocked(r, at), r.lsn
	} else {
		s.sampleLocked(hp, r.lsn, start)
		s.restateStandbysLocked(hp)
	}
	s.mu.Unlock()
	old := hp.state.Swap(st)
	if hp.multi && old.settled && !old.down && (old.role != st.role || old.readOnly != st.readOnly) {
		hp.mu.Lock()
		hp.rerouteWaitersLocked(errRoleChanged)
		hp.mu.Unlock()
		s.kick() // a primary no more: has another taken over?
	}
	s.signal()
}

// keepSamples is how long the primary's positions are kept apart (see
// hostSet.samples): long enough that a standby past pool_max_replica_lag
// shows it.
func (s *hostSet) keepSamples() time.Duration {
	keep := 10 * s.period
	if s.maxLag != noLimit {
		keep = max(keep, 4*s.maxLag)
	}
	return keep
}

// sampleLocked records the position of the primary hp at a check.
func (s *hostSet) sampleLocked(hp *hostPool, lsn uint64, at time.Time) {
	if s.sampled != hp {
		if s.sampled != nil {
			if st := s.sampled.state.Load(); st.role == HostPrimary && !st.down {
				return // two primaries: the samples stay those of the first
			}
		}
		s.sampled, s.samples = hp, s.samples[:0]
	}
	if n := len(s.samples); n > 0 && lsn <= s.samples[n-1].lsn {
		s.samples[n-1].until = at // no further: still there at at
		return
	}
	s.samples = append(s.samples, lsnSample{at: at, until: at, lsn: lsn})
	keep := s.keepSamples()
	// The first sample past a standby's position gives its lag: the
	// oldest goes only when the next is old as well (a standby below it
	// is then behind by more than keep, either way).
	for len(s.samples) > maxSamples || len(s.samples) > 2 && at.Sub(s.samples[1].at) > keep {
		s.samples = append(s.samples[:0], s.samples[1:]...)
	}
}

// restateStandbysLocked sets, from the primary's newest sample, the lag of
// the standbys whose last check found them caught up, without waiting for
// their next check: a standby held behind is seen at the primary's check
// that passed it.
func (s *hostSet) restateStandbysLocked(primary *hostPool) {
	if s.sampled != primary || len(s.samples) == 0 {
		return
	}
	newest := s.samples[len(s.samples)-1].lsn
	for _, h := range s.hosts {
		st := h.state.Load()
		if h == primary || st.role != HostStandby || st.down || !st.behind.IsZero() || !walPast(newest, st.lsn) {
			continue
		}
		next := *st
		next.behind = s.behindLocked(roleResult{standby: true, lsn: st.lsn}, st.checked)
		h.state.CompareAndSwap(st, &next) // a newer check's answer wins
	}
}

// walPast reports whether the primary's WAL insert position primary is
// past the position a standby has replayed: the primary has written
// something the standby lacks. The insert position is the primary's
// (not its write position, which lags commits by up to wal_writer_delay
// under synchronous_commit=off), but at the start of a WAL page it counts
// the page's header, which no record fills: a gap of at most a long page
// header (40 bytes) up to a position that close to a page start (8 KiB
// pages) is no gap.
func walPast(primary, standby uint64) bool {
	const header, page = 40, 8192
	return primary > standby && !(primary-standby <= header && primary%page <= header)
}

// behindLocked returns since when a standby that answered r at at is
// behind, at most (zero: caught up): when the first sample of the
// primary past its replayed position is found, the last time the primary
// was seen before that sample (the writes the standby lacks came after
// it), or a period before a first sample that is past it already. So a
// read is never served by a standby more than pool_max_replica_lag
// behind, and one keeping up with a busy primary looks up to two
// periods behind. Without samples of a primary known to be up (none
// taken yet, or the primary they are of is down or no longer a primary:
// the standby may have received writes it never saw), its own view: the
// age of the last transaction it replayed when it has received WAL it
// has not replayed.
func (s *hostSet) behindLocked(r roleResult, at time.Time) time.Time {
	if s.sampled != nil && len(s.samples) > 0 && s.sampledUp() {
		for i, x := range s.samples {
			if walPast(x.lsn, r.lsn) {
				if i == 0 {
					return x.at.Add(-s.period)
				}
				return s.samples[i-1].until
			}
		}
		return time.Time{}
	}
	if r.receive > r.lsn && r.replayAge >= 0 {
		return at.Add(-r.replayAge)
	}
	return time.Time{}
}

// sampledUp reports whether the primary the samples are of is still
// known as an up primary.
func (s *hostSet) sampledUp() bool {
	st := s.sampled.state.Load()
	return st.role == HostPrimary && !st.down
}

// roleSQL is the role check: in recovery, read-only, the position
// replayed (standby) or written (primary), the position received, and
// the age of the last transaction replayed (NULL on a primary). Every
// function it calls is cheap. roleSQLBasic is for servers before
// PostgreSQL 10, without the WAL functions: no lag there.
const (
	roleSQL = "SELECT pg_catalog.pg_is_in_recovery(), pg_catalog.current_setting('transaction_read_only'), " +
		"CASE WHEN pg_catalog.pg_is_in_recovery() THEN pg_catalog.pg_last_wal_replay_lsn() ELSE pg_catalog.pg_current_wal_insert_lsn() END, " +
		"pg_catalog.pg_last_wal_receive_lsn(), " +
		"EXTRACT(epoch FROM pg_catalog.now() - pg_catalog.pg_last_xact_replay_timestamp())"
	roleSQLBasic = "SELECT pg_catalog.pg_is_in_recovery(), pg_catalog.current_setting('transaction_read_only')"
)

// roleResult is the answer to roleSQL.
type roleResult struct {
	standby, readOnly bool
	lsn, receive      uint64
	replayAge         time.Duration // -1 when unknown
	rows              int
}

// scan reads roleSQL's (or roleSQLBasic's) row.
func (r *roleResult) scan(row *wire.DataRow) error {
	if n := row.NumColumns(); n != 5 && n != 2 {
		return fmt.Errorf("pgline: role check: %d columns", n)
	}
	r.rows++
	v := func(i int) string {
		if i >= row.NumColumns() {
			return ""
		}
		b, _ := row.Column(i)
		return string(b)
	}
	r.standby, r.readOnly = v(0) == "t", v(1) == "on"
	r.lsn, r.receive = parseLSN(v(2)), parseLSN(v(3))
	r.replayAge = -1
	if f, err := strconv.ParseFloat(v(4), 64); err == nil {
		r.replayAge = time.Duration(f * float64(time.Second))
	}
	return nil
}

// parseLSN reads a pg_lsn ("16/B374D848"); 0 when it is not one.
func parseLSN(s string) uint64 {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0
	}
	return h<<32 | l
}

// roleQuery runs the role check on the host's monitor connection: a
// connection of its own, outside the pool, so that the check waits
// neither for a free slot nor behind the statements pipelined on a
// routed connection, and a host that does not answer it in time is one
// that does not answer. It is opened when needed (see monitorConn), and
// once more when the one kept turns out closed.
func (p *hostPool) roleQuery(ctx context.Context) (roleResult, error) {
	for attempt := 0; ; attempt++ {
		c, reused, err := p.monitorConn(ctx)
		if err != nil {
			return roleResult{}, err
		}
		var r roleResult
		sql := roleSQL
		if p.basicRole {
			sql = roleSQLBasic
		}
		_, err = c.simpleQueryUntraced(ctx, nil, sql, r.scan)
		var pgErr *PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42883" && !p.basicRole {
			p.basicRole = true // no pg_last_wal_replay_lsn: before PostgreSQL 10
			_, err = c.simpleQueryUntraced(ctx, nil, roleSQLBasic, r.scan)
		}
		if err == nil && r.rows != 1 {
			err = errors.New("pgline: role check: no row")
		}
		if err == nil {
			return r, nil
		}
		broken := c.IsClosed()
		c.Close()
		p.mon = nil
		if !broken || !reused || attempt > 0 || ctx.Err() != nil {
			return r, err
		}
	}
}

// monitorConn returns the monitor connection, reused reporting that it
// was open already, or opens it: once, unless connection attempts to the
// host are backed off (errProbeBackoff). A failed attempt counts as one
// of the pool's (see openFailedLocked); one that succeeds ends the
// backoff. Only the role check running holds it (hostPool.checking).
func (p *hostPool) monitorConn(ctx context.Context) (c *Conn, reused bool, err error) {
	if p.mon != nil && p.mon.usableAfterIdle(ctx) {
		return p.mon, true, nil
	}
	p.mon = nil
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, notSent(ErrPoolClosed)
	}
	if p.failures > 0 && time.Now().Before(p.nextOpen) {
		p.mu.Unlock()
		return nil, false, errProbeBackoff
	}
	p.mu.Unlock()
	c, err = ConnectConfig(ctx, p.monCfg)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil && p.closed:
		c.Close()
		return nil, false, notSent(ErrPoolClosed)
	case err != nil:
		if !p.closed {
			p.openFailedLocked(err)
		}
		return nil, false, err
	}
	p.failures, p.lastErr = 0, nil
	p.mon = c
	return c, false, nil
}

// close stops the role checks and closes every hostPool, waiting for
// their statements and held connections (see Pool.Close).
func (s *hostSet) close() {
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
