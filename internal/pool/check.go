package pool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// The role checks of a Set's hosts: what each host is (primary or
// standby, read-only or not) and how far a standby's replay lags, from
// one small query (roleSQL) on a connection of the host's own (the
// monitor, see roleQuery), run by checkLoop. A primary's WAL positions are
// kept as samples, against which a standby's replayed position gives its
// lag (behindLocked).

// Pacing of the role checks: soon after a kick, then paceMin doubling up
// to paceMax while calls wait for a host that matches.
const (
	paceMin = 10 * time.Millisecond
	paceMax = 250 * time.Millisecond
)

// lsnSample is the primary's WAL position, first seen at at and last
// seen (unchanged) at until (see Set.samples).
type lsnSample struct {
	at, until time.Time
	lsn       uint64
}

// maxSamples bounds Set.samples.
const maxSamples = 1024

// checkLoop runs the role checks: at once, then every period, and soon
// after a kick; while calls wait for a host, every paceMin doubling up
// to paceMax.
func (s *Set) checkLoop() {
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
func (s *Set) checkAll() {
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
func (s *Set) check(hp *Host) {
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
func (s *Set) setDown(hp *Host, err error) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	hp.hostDownLocked(err)
}

// hostDownLocked marks the host down, after a failed connection attempt
// or role check, and, when the Pool has other hosts, sends the calls
// waiting for this one's connections to choose a host again.
func (p *Host) hostDownLocked(err error) {
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
func (p *Host) rerouteWaitersLocked(err error) {
	for _, l := range []*waitLine{&p.stmtLine, &p.takeLine} {
		for w := l.head; w != nil; w = l.head {
			l.remove(w)
			w.err = p.cfg.NotSent(&rerouteError{err})
			w.wake()
		}
	}
}

// apply stores the answer of hp's role check, started at start and
// answered at at. A primary's position is taken as of start (it was no
// further then: the safe side for the lag of the standbys).
func (s *Set) apply(hp *Host, r roleResult, start, at time.Time) {
	st := &hostState{settled: true, checked: at, role: RolePrimary, readOnly: r.readOnly}
	s.mu.Lock()
	if r.standby {
		st.role = RoleStandby
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
// Set.samples): long enough that a standby past pool_max_replica_lag
// shows it.
func (s *Set) keepSamples() time.Duration {
	keep := 10 * s.period
	if s.maxLag != NoLimit {
		keep = max(keep, 4*s.maxLag)
	}
	return keep
}

// sampleLocked records the position of the primary hp at a check.
func (s *Set) sampleLocked(hp *Host, lsn uint64, at time.Time) {
	if s.sampled != hp {
		if s.sampled != nil {
			if st := s.sampled.state.Load(); st.role == RolePrimary && !st.down {
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
func (s *Set) restateStandbysLocked(primary *Host) {
	if s.sampled != primary || len(s.samples) == 0 {
		return
	}
	newest := s.samples[len(s.samples)-1].lsn
	for _, h := range s.hosts {
		st := h.state.Load()
		if h == primary || st.role != RoleStandby || st.down || !st.behind.IsZero() || !walPast(newest, st.lsn) {
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
func (s *Set) behindLocked(r roleResult, at time.Time) time.Time {
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
func (s *Set) sampledUp() bool {
	st := s.sampled.state.Load()
	return st.role == RolePrimary && !st.down
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
func (p *Host) roleQuery(ctx context.Context) (roleResult, error) {
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
		err = c.SimpleQuery(ctx, sql, r.scan)
		var pgErr interface{ SQLState() string } // pgline's *PgError
		if errors.As(err, &pgErr) && pgErr.SQLState() == "42883" && !p.basicRole {
			p.basicRole = true // no pg_last_wal_replay_lsn: before PostgreSQL 10
			err = c.SimpleQuery(ctx, roleSQLBasic, r.scan)
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
// backoff. Only the role check running holds it (Host.checking).
func (p *Host) monitorConn(ctx context.Context) (c Backend, reused bool, err error) {
	if p.mon != nil && p.mon.UsableAfterIdle(ctx) {
		return p.mon, true, nil
	}
	p.mon = nil
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, p.cfg.closedErr()
	}
	if p.failures > 0 && time.Now().Before(p.nextOpen) {
		p.mu.Unlock()
		return nil, false, errProbeBackoff
	}
	p.mu.Unlock()
	c, err = p.cfg.Connect(ctx, p, true)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil && p.closed:
		c.Close()
		return nil, false, p.cfg.closedErr()
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
