package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// runner runs cases: after one calibration per driver, round after
// round, each round split into turns that the drivers take in turn (A B
// C A B C …, see interleavedRound), so that a burst of the machine's
// other work slows every driver alike rather than one driver's round.
type runner struct {
	env     *env
	drivers []*driver
	rounds  int
	prog    *progress
}

// active is one driver's task within a case.
type active struct {
	res   *driverResult
	t     *task
	n     int // operations per round
	chunk int // operations per turn; n is a multiple of it
}

// turns is how many turns a's round takes.
func (a *active) turns() int { return a.n / a.chunk }

// turnsPerRound is how many turns a calibrated round is split into: a
// turn of 25 ms at the default round time, long enough that restarting a
// case's goroutines each turn costs nothing measurable, short enough that
// the machine's bursts (tens of milliseconds) fall on every driver.
const turnsPerRound = 10

// minOpsPerWorker is the fewest operations a turn gives each goroutine of
// a concurrent task (task.workers).
const minOpsPerWorker = 50

func (r *runner) runCase(ctx context.Context, idx, total int, c *benchCase) (*caseResult, error) {
	cr := &caseResult{Workload: c.workload, Name: c.name, Unit: c.unit, RTT: c.rtt}
	if c.setup != nil {
		if err := c.setup(ctx, r.env); err != nil {
			return nil, fmt.Errorf("%s: setup: %w", c.name, err)
		}
	}
	dsn := r.env.dsn
	if c.rtt {
		dsn = r.env.rttDSN
	}
	var acts []*active
	defer func() {
		for _, a := range acts {
			if a.t != nil && a.t.close != nil {
				a.t.close()
			}
		}
	}()
	for _, d := range r.drivers {
		res := &driverResult{Driver: d.name, Status: statusOK}
		cr.Drivers = append(cr.Drivers, res)
		r.prog.update(idx, total, c.name, d.name, "open")
		t, err := c.open(ctx, r.env, d, dsn)
		if err != nil {
			setErr(res, err)
			continue
		}
		res.Note = t.note
		acts = append(acts, &active{res: res, t: t})
	}
	for _, a := range acts {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.prog.update(idx, total, c.name, a.res.Driver, "warm-up")
		n, chunk, err := r.calibrate(ctx, a.t, c)
		if err != nil {
			setErr(a.res, err)
			continue
		}
		a.n, a.chunk = n, chunk
		a.res.OpsPerRound = n
	}
	for k := 1; k <= r.rounds; k++ {
		if err := r.interleavedRound(ctx, idx, total, c, k, acts); err != nil {
			return nil, err
		}
		r.prog.roundDone(idx, total, c.name, k, r.rounds)
	}
	aggregate(cr)
	return cr, nil
}

// interleavedRound is round k of a case: the drivers take turns (A B C
// A B C …, each turn starting with the next driver), each turn a.chunk
// operations (one operation in a case of long ones, one burst in a case
// of a fixed count, the whole round in a whole case), so that a burst
// of the machine's other work, which outlasts a turn, slows every driver
// alike instead of one driver's round. Each turn starts from a collected heap, as a round does (no
// driver pays for another's garbage); each driver's round adds up its
// turns. Latency percentiles are over every operation of the round; the
// per-request summary and chart (perRequest) show its median turn.
func (r *runner) interleavedRound(ctx context.Context, idx, total int, c *benchCase, k int, acts []*active) error {
	turns := 0
	for _, a := range acts {
		if a.res.Status == statusOK {
			turns = max(turns, a.turns())
		}
	}
	sums := make([]round, len(acts))
	lats := make([][][]time.Duration, len(acts))
	for j := range turns {
		for i := range acts {
			ai := (i + j + k) % len(acts)
			a := acts[ai]
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if a.res.Status != statusOK || j >= a.turns() {
				continue
			}
			if j == 0 {
				r.prog.update(idx, total, c.name, a.res.Driver, fmt.Sprintf("round %d/%d", k, r.rounds))
			}
			rd, lat, err := measure(ctx, a.t, a.chunk, c.peakHeap)
			if err != nil {
				setErr(a.res, err)
				continue
			}
			sums[ai] = addRound(sums[ai], rd)
			if lat != nil {
				lats[ai] = append(lats[ai], lat)
			}
		}
	}
	for i, a := range acts {
		if a.res.Status != statusOK || sums[i].Ops == 0 {
			continue
		}
		rd := sums[i]
		ops := float64(rd.Ops)
		rd.OpsPerSec = ops / time.Duration(rd.ElapsedNS).Seconds()
		rd.AllocsPerOp /= ops
		rd.BytesPerOp /= ops
		rd.CPUNSPerOp /= ops
		rd.FaultsPerOp /= ops
		if len(lats[i]) > 0 {
			s := slices.Concat(lats[i]...) // a copy: sorted in place
			slices.Sort(s)
			rd.P50NS, rd.P99NS = int64(percentile(s, 50)), int64(percentile(s, 99))
		}
		a.res.Rounds = append(a.res.Rounds, rd)
		if c.perRequest {
			a.res.lats = append(a.res.lats, medianTurn(lats[i]))
		}
	}
	return nil
}

// medianTurn returns the turn whose latencies add up to the median of
// the turns' sums: in a case of a fixed count, one burst, whose sum is
// the time its requests took one after another.
func medianTurn(turns [][]time.Duration) []time.Duration {
	if len(turns) == 0 {
		return nil
	}
	sums := make([]float64, len(turns))
	for i, t := range turns {
		var s time.Duration
		for _, l := range t {
			s += l
		}
		sums[i] = float64(s)
	}
	return turns[medianIndex(sums)]
}

// addRound adds one operation's round b to sum: totals, with the per-
// operation figures summed (interleavedRound divides them).
func addRound(sum, b round) round {
	sum.Ops += b.Ops
	sum.ElapsedNS += b.ElapsedNS
	sum.AllocsPerOp += b.AllocsPerOp * float64(b.Ops)
	sum.BytesPerOp += b.BytesPerOp * float64(b.Ops)
	sum.CPUNSPerOp += b.CPUNSPerOp * float64(b.Ops)
	sum.FaultsPerOp += b.FaultsPerOp * float64(b.Ops)
	sum.PeakHeapBytes = max(sum.PeakHeapBytes, b.PeakHeapBytes)
	return sum
}

func setErr(res *driverResult, err error) {
	if errors.Is(err, errUnsupported) {
		res.Status = statusUnsupported
		return
	}
	res.Status = statusError
	res.Error = err.Error()
	res.Rounds = nil
}

// calibrate warms the task up (connections, statement caches) and
// returns how many operations fill the target time, n, and how many a
// turn runs, chunk (see interleavedRound).
//
// A case of a fixed count (fixedN: a burst of 50 or 500 requests) runs
// whole bursts: three warm-up bursts, then as many per round as fill the
// target, one per turn. One burst of 50 requests takes 5 ms; a round of
// one burst, as these cases had, was at the mercy of a single wake-up of
// the machine's other work (pool/pool5/seq/50's per-round ratios to
// pgxpool spread from 0.79 to 1.13 in one run).
func (r *runner) calibrate(ctx context.Context, t *task, c *benchCase) (n, chunk int, err error) {
	target, maxOps := r.env.sz.target, r.env.sz.maxOps
	if t.fixedN > 0 {
		// Three times: a pool that opens its connections in the
		// background (pgline's routes a burst to those it has) reaches
		// its full size, and each connection its first statements, before
		// the rounds measure it. The last one is timed.
		var el time.Duration
		for range 3 {
			start := time.Now()
			if err := t.run(ctx, t.fixedN, nil); err != nil {
				return 0, 0, err
			}
			el = time.Since(start)
		}
		bursts := int(math.Round(float64(target) / float64(max(el, time.Microsecond))))
		bursts = max(min(bursts, maxOps/t.fixedN), 1)
		return bursts * t.fixedN, t.fixedN, nil
	}
	step := max(t.step, 1)
	n, err = calibrateCount(ctx, t, step, target, maxOps)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case c.whole:
		return n, n, nil
	case c.interleave:
		return n, step, nil
	}
	chunk = max(n/turnsPerRound, t.workers*minOpsPerWorker)
	chunk = max((chunk+step-1)/step*step, step) // a multiple of step
	if chunk >= n {
		return n, n, nil
	}
	return (n + chunk - 1) / chunk * chunk, chunk, nil
}

// calibrateCount returns how many operations, a multiple of step, fill
// target (at most maxOps, at least the task's minOps).
func calibrateCount(ctx context.Context, t *task, step int, target time.Duration, maxOps int) (int, error) {
	// One run first, untimed: a driver whose connections sat idle while
	// the others warmed up pays for waking them (a pool of 100 after a
	// second idle: 10-25 ms for a burst that takes 3 ms warm, for pgline
	// and pgxpool alike), and a first run so paid for set n to one
	// lookup per goroutine.
	if err := t.run(ctx, step, nil); err != nil {
		return 0, err
	}
	n := step
	for {
		start := time.Now()
		if err := t.run(ctx, n, nil); err != nil {
			return 0, err
		}
		el := time.Since(start)
		if el >= target/2 || n >= maxOps {
			want := float64(n) * float64(target) / float64(max(el, time.Microsecond))
			n = int(math.Round(want/float64(step))) * step
			return max(min(max(n, step), maxOps/step*step), t.minOps), nil
		}
		if el < target/100 {
			n *= 10
		} else {
			n *= 2
		}
		n = min(n, maxOps)
	}
}

// measure runs n operations once, after a garbage collection, with the
// heap statistics around them.
func measure(ctx context.Context, t *task, n int, peak bool) (round, []time.Duration, error) {
	var lat []time.Duration
	if !t.noLat {
		lat = make([]time.Duration, n)
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	var ps *peakSampler
	if peak {
		ps = startPeakSampler()
	}
	runtime.ReadMemStats(&m0)
	cpu0, faults0 := processUsage()
	start := time.Now()
	err := t.run(ctx, n, lat)
	el := time.Since(start)
	cpu1, faults1 := processUsage()
	runtime.ReadMemStats(&m1)
	var peakBytes int64
	if ps != nil {
		peakBytes = ps.stop()
	}
	if err != nil {
		return round{}, nil, err
	}
	rd := round{
		Ops: n, ElapsedNS: int64(el),
		OpsPerSec:     float64(n) / el.Seconds(),
		AllocsPerOp:   float64(m1.Mallocs-m0.Mallocs) / float64(n),
		BytesPerOp:    float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n),
		PeakHeapBytes: peakBytes,
	}
	if cpu0 > 0 {
		rd.CPUNSPerOp = float64(cpu1-cpu0) / float64(n)
		rd.FaultsPerOp = float64(faults1-faults0) / float64(n)
	}
	if lat != nil {
		s := sortedCopy(lat)
		rd.P50NS, rd.P99NS = int64(percentile(s, 50)), int64(percentile(s, 99))
	}
	return rd, lat, nil
}

// peakSampler polls the live heap every millisecond and keeps the
// largest growth over the heap at its start.
type peakSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak int64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func startPeakSampler() *peakSampler {
	p := &peakSampler{done: make(chan struct{})}
	sample := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(sample)
	base := int64(sample[0].Value.Uint64())
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := int64(sample[0].Value.Uint64()) - base; v > p.peak {
				p.peak = v
			}
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *peakSampler) stop() int64 {
	close(p.done)
	p.wg.Wait()
	return p.peak
}

// aggregate fills each driver's medians and per-round ratios.
func aggregate(cr *caseResult) {
	ref, fl := cr.find(refDriver), cr.find(floorDriver)
	for _, d := range cr.Drivers {
		if !d.ok() {
			continue
		}
		ops := roundField(d, func(r round) float64 { return r.OpsPerSec })
		d.OpsPerSec = median(ops)
		d.AllocsPerOp = median(roundField(d, func(r round) float64 { return r.AllocsPerOp }))
		d.BytesPerOp = median(roundField(d, func(r round) float64 { return r.BytesPerOp }))
		d.P50NS = int64(median(roundField(d, func(r round) float64 { return float64(r.P50NS) })))
		d.P99NS = int64(median(roundField(d, func(r round) float64 { return float64(r.P99NS) })))
		d.CPUNSPerOp = median(roundField(d, func(r round) float64 { return r.CPUNSPerOp }))
		d.FaultsPerOp = median(roundField(d, func(r round) float64 { return r.FaultsPerOp }))
		d.PeakHeapBytes = int64(median(roundField(d, func(r round) float64 { return float64(r.PeakHeapBytes) })))
		if ref != nil && ref.ok() {
			d.VsPgx = finite(median(ratios(ops, roundField(ref, func(r round) float64 { return r.OpsPerSec }))))
		}
		if fl != nil && fl.ok() {
			d.VsFloor = finite(median(ratios(ops, roundField(fl, func(r round) float64 { return r.OpsPerSec }))))
		}
		if len(d.lats) > 0 {
			lat := d.lats[medianIndex(ops)]
			s := summarize(lat)
			d.Requests = &s
			d.LatenciesNS = make([]int64, len(lat))
			for i, l := range lat {
				d.LatenciesNS[i] = int64(l)
			}
		}
	}
}

func roundField(d *driverResult, f func(round) float64) []float64 {
	out := make([]float64, len(d.Rounds))
	for i, r := range d.Rounds {
		out[i] = f(r)
	}
	return out
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
