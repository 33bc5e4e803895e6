package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// benchCase is one workload variant, run for every driver.
type benchCase struct {
	workload string // "rows", "point", …; what -only selects
	name     string // "rows/1000"
	unit     string // what one operation is: "query", "insert", "request"
	// perRequest keeps every request's latency of the median round's
	// median turn for the per-request chart and the sum/average/fastest/
	// slowest summary.
	perRequest bool
	peakHeap   bool // sample the heap during the loop (large values)
	// interleave makes each turn of a round one operation (see
	// runner.interleavedRound): for operations of a second or so.
	interleave bool
	// whole runs each driver's round as one run of all its operations,
	// the drivers one after another: for cases whose run starts many
	// goroutines (the sweep), where a turn would measure their start.
	whole bool
	rtt   bool // connect through the delay proxy
	// setup prepares the database before the drivers run (not measured).
	setup func(ctx context.Context, e *env) error
	// open prepares the case for one driver; errUnsupported means "—".
	open func(ctx context.Context, e *env, d *driver, dsn string) (*task, error)
}

// task is one case prepared for one driver.
type task struct {
	// run performs n operations; lat, when not nil, has length n and
	// receives each operation's latency.
	run func(ctx context.Context, n int, lat []time.Duration) error
	// fixedN, when positive, is the operation count the case defines
	// (pool: 50 or 500 requests); otherwise the runner calibrates n.
	fixedN int
	// step, when above 1, makes n a multiple of it (batches of 10).
	step int
	// minOps, when above 1, is the fewest operations a round runs: a
	// round of one operation of half a second is at the mercy of one
	// burst of the machine's other work.
	minOps int
	// workers is how many goroutines run the task's operations
	// (concurrent): a turn gives each at least minOpsPerWorker operations,
	// so that the run's start, its goroutines woken one by one, and its
	// tail, with fewer of them busy, do not count.
	workers int
	noLat   bool   // latency per operation does not apply
	note    string // how the driver ran the case, when it is not plain
	close   func()
}

// workloadNames lists the workloads in run order.
var workloadNames = []string{"connect", "rows", "point", "insert", "large", "copy", "pipeline", "pool", "sweep", "rtt"}

// buildCases returns the cases of the selected workloads.
func buildCases(only map[string]bool, sz sizes) []*benchCase {
	var cs []*benchCase
	add := func(w string, f func(sizes) []*benchCase) {
		if only == nil || only[w] {
			cs = append(cs, f(sz)...)
		}
	}
	add("connect", func(sz sizes) []*benchCase { return connectCases(sz, false) })
	add("rows", rowsCases)
	add("point", pointCases)
	add("insert", insertCases)
	add("large", largeCases)
	add("copy", copyCases)
	add("pipeline", func(sz sizes) []*benchCase { return pipelineCases(sz, false) })
	add("pool", func(sz sizes) []*benchCase { return poolCases(sz, false) })
	add("sweep", func(sz sizes) []*benchCase { return sweepCases(sz, false) })
	add("rtt", func(sz sizes) []*benchCase {
		cs := append(connectCases(sz, true), pipelineCases(sz, true)...)
		return append(append(cs, poolCases(sz, true)...), sweepCases(sz, true)...)
	})
	return cs
}

// parseOnly reads the -only list.
func parseOnly(s string) (map[string]bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	only := map[string]bool{}
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		found := false
		for _, n := range workloadNames {
			found = found || n == w
		}
		if !found {
			return nil, fmt.Errorf("-only: unknown workload %q (want a comma list of %s)", w, strings.Join(workloadNames, ", "))
		}
		only[w] = true
	}
	return only, nil
}

// sizes are the knobs -quick turns down. -quick still runs a small
// version of every case behind a row of the README's figures table, under
// the same name as the full run (TestQuickCoversREADMEFigures).
type sizes struct {
	quick       bool
	rowCounts   []int
	largeBig    []string // keys of the 50 MiB values (largeValues) to load and read
	pipeQueries []string
	pipeModes   []string
	rttModes    []string
	poolCounts  []int
	target      time.Duration // wall time one measured loop aims for
	maxOps      int
}

func defaultSizes(quick bool) sizes {
	if quick {
		return sizes{
			quick: true, rowCounts: []int{10, 1000, 10000},
			largeBig:    []string{"bytea_50MiB"},
			pipeQueries: []string{"param", "cached"},
			pipeModes:   []string{"serial", "batch10", "conc20"},
			rttModes:    []string{"serial", "batch10", "conc40"},
			poolCounts:  []int{50, 500}, // 500: only the README's cases (quickPool)
			target:      20 * time.Millisecond, maxOps: 5000,
		}
	}
	return sizes{
		rowCounts: []int{10, 100, 1000, 10000}, largeBig: []string{"bytea_50MiB", "text_50MiB"},
		pipeQueries: []string{"select1", "param", "cached"},
		pipeModes:   []string{"serial", "batch10", "conc1", "conc5", "conc20", "conc40"},
		rttModes:    []string{"serial", "batch10", "conc5", "conc40"},
		poolCounts:  []int{50, 500},
		target:      250 * time.Millisecond, maxOps: 200000,
	}
}

// seq runs op n times in a row.
func seq(op func(ctx context.Context, i int) error) func(context.Context, int, []time.Duration) error {
	return func(ctx context.Context, n int, lat []time.Duration) error {
		for i := range n {
			t0 := time.Now()
			if err := op(ctx, i); err != nil {
				return err
			}
			if lat != nil {
				lat[i] = time.Since(t0)
			}
		}
		return nil
	}
}

// concurrent runs op n times from workers goroutines taking the next
// index from a shared counter; each latency is that operation's own. The
// goroutines start on the first run and serve every run until stop, as
// goroutines issuing statements back to back do: started for each run,
// their start and first stack growth counted in the run (5,000 goroutines
// started for a round of 6 lookups each added 1.1 µs of client CPU per
// lookup to the sweep at G=5000, for every driver).
func concurrent(workers int, op func(ctx context.Context, i int) error) (run func(context.Context, int, []time.Duration) error, stop func()) {
	type job struct {
		ctx  context.Context
		n    int
		next atomic.Int64
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
	}
	jobs := make(chan *job)
	var start, stopped sync.Once
	work := func(w int) {
		for j := range jobs {
			for {
				i := int(j.next.Add(1) - 1)
				if i >= j.n {
					break
				}
				t0 := time.Now()
				if err := op(j.ctx, i); err != nil {
					j.errs[w] = err
					break
				}
				if j.lat != nil {
					j.lat[i] = time.Since(t0)
				}
			}
			j.wg.Done()
		}
	}
	run = func(ctx context.Context, n int, lat []time.Duration) error {
		start.Do(func() {
			for w := range workers {
				go work(w)
			}
		})
		j := &job{ctx: ctx, n: n, lat: lat, errs: make([]error, workers)}
		j.wg.Add(workers)
		for range workers {
			jobs <- j // a worker may take two: it then has nothing left to do
		}
		j.wg.Wait()
		return firstErr(j.errs)
	}
	return run, func() { stopped.Do(func() { close(jobs) }) }
}

// allAtOnce starts n goroutines together, one operation each; a latency
// runs from the common start to that operation's end, so it includes
// queueing (the "Promise.all" case).
func allAtOnce(op func(ctx context.Context, i int) error) func(context.Context, int, []time.Duration) error {
	return func(ctx context.Context, n int, lat []time.Duration) error {
		var wg sync.WaitGroup
		errs := make([]error, n)
		t0 := time.Now()
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = op(ctx, i)
				if lat != nil {
					lat[i] = time.Since(t0)
				}
			}()
		}
		wg.Wait()
		return firstErr(errs)
	}
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// expectRows fails when a query returned the wrong number of rows.
func expectRows(got, want int) error {
	if got != want {
		return fmt.Errorf("got %d rows, want %d", got, want)
	}
	return nil
}

// sortedCopy returns d sorted, leaving d alone.
func sortedCopy(d []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}
