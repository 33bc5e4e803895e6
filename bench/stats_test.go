package main

import (
	"context"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
		{[]float64{math.NaN(), 5, 1}, 3},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
	if got := median([]float64{math.NaN()}); !math.IsNaN(got) {
		t.Errorf("median(NaN) = %v, want NaN", got)
	}
}

func TestMedianIndex(t *testing.T) {
	if got := medianIndex([]float64{30, 10, 20}); got != 2 {
		t.Errorf("medianIndex = %d, want 2", got)
	}
	if got := medianIndex([]float64{40, 10, 30, 20}); got != 3 {
		t.Errorf("medianIndex (even) = %d, want 3 (the lower middle value, 20)", got)
	}
	if got := medianIndex(nil); got != -1 {
		t.Errorf("medianIndex(nil) = %d, want -1", got)
	}
}

func TestRatiosAreRoundByRound(t *testing.T) {
	// The driver is 2× pgx in every round although the machine got
	// slower: per-round ratios see 2×, a ratio of medians would not.
	drv := []float64{200, 100, 50, 400, 20}
	ref := []float64{100, 50, 25, 200, 10}
	if got := median(ratios(drv, ref)); got != 2 {
		t.Errorf("median of per-round ratios = %v, want 2", got)
	}
	r := ratios([]float64{1, 2, 3}, []float64{0, math.NaN()})
	for i, x := range r {
		if !math.IsNaN(x) {
			t.Errorf("ratio %d = %v, want NaN (zero, NaN or missing divisor)", i, x)
		}
	}
	if finite(math.NaN()) != nil || finite(math.Inf(1)) != nil || *finite(1.5) != 1.5 {
		t.Error("finite does not drop NaN/Inf or keep a number")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50}, {99, 99}, {100, 100}, {1, 1}, {0.1, 1}} {
		if got := percentile(d, tc.p); got != tc.want {
			t.Errorf("percentile(1..100, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing is not 0")
	}
	if got := percentile([]time.Duration{5}, 99); got != 5 {
		t.Errorf("percentile of one = %v", got)
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]time.Duration{30, 10, 50, 10, 50})
	want := requestSummary{SumNS: 150, AvgNS: 30, FastestNS: 10, FastestIdx: 1, SlowestNS: 50, SlowestIdx: 2}
	if s != want {
		t.Errorf("summarize = %+v, want %+v", s, want)
	}
}

func TestAggregate(t *testing.T) {
	cr := &caseResult{Drivers: []*driverResult{
		{Driver: namePgline, Status: statusOK, Rounds: []round{{OpsPerSec: 300, AllocsPerOp: 2}, {OpsPerSec: 90, AllocsPerOp: 4}, {OpsPerSec: 150, AllocsPerOp: 3}}},
		{Driver: namePgx, Status: statusOK, Rounds: []round{{OpsPerSec: 100}, {OpsPerSec: 30}, {OpsPerSec: 50}}},
		{Driver: nameLibPQ, Status: statusUnsupported},
		{Driver: nameFloor, Status: statusOK, Rounds: []round{{OpsPerSec: 600}, {OpsPerSec: 180}, {OpsPerSec: 300}}},
	}}
	aggregate(cr)
	d := cr.find(namePgline)
	if d.OpsPerSec != 150 || d.AllocsPerOp != 3 {
		t.Errorf("medians: %v ops/s, %v allocs/op; want 150, 3", d.OpsPerSec, d.AllocsPerOp)
	}
	if d.VsPgx == nil || *d.VsPgx != 3 || d.VsFloor == nil || *d.VsFloor != 0.5 {
		t.Errorf("ratios: %v, %v; want 3, 0.5", fmtRatio(d.VsPgx), fmtRatio(d.VsFloor))
	}
	if cr.find(nameLibPQ).VsPgx != nil {
		t.Error("an unsupported driver got a ratio")
	}
}

// TestInterleavedRound: the drivers take turns one operation at a time,
// each turn starting with the next driver, and each driver's round adds
// up its own operations.
func TestInterleavedRound(t *testing.T) {
	var order []string
	mk := func(name string, d time.Duration) *active {
		return &active{n: 2, chunk: 1, res: &driverResult{Driver: name, Status: statusOK}, t: &task{
			run: func(_ context.Context, n int, lat []time.Duration) error {
				order = append(order, name)
				time.Sleep(d)
				for i := range lat {
					lat[i] = d
				}
				return nil
			},
		}}
	}
	acts := []*active{mk("a", time.Millisecond), mk("b", 3*time.Millisecond), mk("c", 2*time.Millisecond)}
	r := &runner{rounds: 1, prog: newProgress(io.Discard)}
	c := &benchCase{name: "x", interleave: true}
	if err := r.interleavedRound(context.Background(), 1, 1, c, 1, acts); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(order, ""), "bcacab"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	for _, a := range acts {
		if len(a.res.Rounds) != 1 {
			t.Fatalf("%s: %d rounds", a.res.Driver, len(a.res.Rounds))
		}
		rd := a.res.Rounds[0]
		if rd.Ops != 2 || rd.OpsPerSec <= 0 || rd.P50NS == 0 {
			t.Errorf("%s: %+v", a.res.Driver, rd)
		}
	}
	if a, b := acts[0].res.Rounds[0].OpsPerSec, acts[1].res.Rounds[0].OpsPerSec; a <= b {
		t.Errorf("a (1 ms per operation) %.0f/s, b (3 ms) %.0f/s", a, b)
	}
}

// TestCalibrateTurns: a calibrated round is split into turns of about a
// tenth of it (a multiple of step, at least minOpsPerWorker operations
// per goroutine of a concurrent task); a case of a fixed count runs whole
// bursts, as many as fill the target; whole and interleave cases keep
// their one run and their one operation per turn.
func TestCalibrateTurns(t *testing.T) {
	r := &runner{env: &env{sz: sizes{target: 20 * time.Millisecond, maxOps: 100000}}}
	// fake is a task whose operations take op each.
	fake := func(op time.Duration) func(context.Context, int, []time.Duration) error {
		return func(_ context.Context, n int, _ []time.Duration) error {
			time.Sleep(time.Duration(n) * op)
			return nil
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		t    *task
		c    *benchCase
		// check the result
		ok func(n, chunk int) bool
	}{
		{"calibrated", &task{run: fake(20 * time.Microsecond)}, &benchCase{},
			func(n, chunk int) bool { return n%chunk == 0 && n/chunk >= 8 && n/chunk <= 12 }},
		{"step", &task{run: fake(20 * time.Microsecond), step: 7}, &benchCase{},
			func(n, chunk int) bool { return chunk%7 == 0 && n%chunk == 0 && n/chunk >= 8 }},
		{"workers", &task{run: fake(2 * time.Microsecond), workers: 1000}, &benchCase{},
			func(n, chunk int) bool { return chunk >= 1000*minOpsPerWorker || chunk == n }},
		{"whole", &task{run: fake(20 * time.Microsecond)}, &benchCase{whole: true},
			func(n, chunk int) bool { return chunk == n && n > 100 }},
		{"interleave", &task{run: fake(time.Millisecond)}, &benchCase{interleave: true},
			func(n, chunk int) bool { return chunk == 1 && n > 1 }},
		{"fixed", &task{run: fake(20 * time.Microsecond), fixedN: 50}, &benchCase{},
			func(n, chunk int) bool { return chunk == 50 && n%50 == 0 && n/50 >= 5 && n/50 <= 30 }},
		{"fixed long", &task{run: fake(time.Millisecond), fixedN: 50}, &benchCase{},
			func(n, chunk int) bool { return chunk == 50 && n == 50 }},
	} {
		n, chunk, err := r.calibrate(ctx, tc.t, tc.c)
		if err != nil {
			t.Fatal(err)
		}
		if chunk <= 0 || !tc.ok(n, chunk) {
			t.Errorf("%s: n %d, chunk %d", tc.name, n, chunk)
		}
	}
}

// TestMedianTurn: the per-request figures show the turn whose sum is the
// median.
func TestMedianTurn(t *testing.T) {
	ms := time.Millisecond
	turns := [][]time.Duration{{5 * ms, 5 * ms}, {1 * ms, 1 * ms}, {3 * ms, 2 * ms}}
	if got := medianTurn(turns); len(got) != 2 || got[0] != 3*ms {
		t.Errorf("median turn %v, want the one of 3 ms and 2 ms", got)
	}
	if medianTurn(nil) != nil {
		t.Error("no turns gave a turn")
	}
}

// TestConcurrentKeepsWorkers: concurrent runs every index of each run
// exactly once from the same goroutines, run after run, fills each
// latency, returns an operation's error, and stop ends its goroutines.
func TestConcurrentKeepsWorkers(t *testing.T) {
	const workers = 8
	var mu sync.Mutex
	seen := map[int]int{}
	fail := -1
	before := runtime.NumGoroutine()
	run, stop := concurrent(workers, func(_ context.Context, i int) error {
		mu.Lock()
		defer mu.Unlock()
		seen[i]++
		if i == fail {
			return errors.New("op failed")
		}
		return nil
	})
	for round := range 3 {
		clear(seen)
		lat := make([]time.Duration, 100)
		if err := run(context.Background(), 100, lat); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 100 {
			t.Fatalf("round %d: %d indexes run, want 100", round, len(seen))
		}
		for i, n := range seen {
			if n != 1 || lat[i] <= 0 {
				t.Fatalf("round %d: index %d run %d times, latency %v", round, i, n, lat[i])
			}
		}
		// The workers stay between runs (a few goroutines of other
		// tests may come and go meanwhile).
		if g := runtime.NumGoroutine() - before; g < workers-2 || g > workers+2 {
			t.Errorf("round %d: %d goroutines more than before, want the %d workers", round, g, workers)
		}
	}
	fail = 7
	if err := run(context.Background(), 50, nil); err == nil || err.Error() != "op failed" {
		t.Errorf("failing operation: %v", err)
	}
	stop()
	stop() // a second stop does nothing
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine() - before; g > 0 {
		t.Errorf("%d goroutines left after stop", g)
	}
}
