package otelpgline_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/otelpgline"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// poolValues are the pool metrics as collected, by name and, for the
// metrics that have one, the value of their distinguishing attribute
// ("db.client.connection.count/idle").
type poolValues map[string]float64

// collectPool reads the pool metrics, checking that each data point names
// the pool.
func (h *harness) collectPool(t *testing.T, pool string) poolValues {
	t.Helper()
	v := poolValues{}
	for _, sm := range h.collect(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			add := func(attrs map[string]string, x float64) {
				if attrs["db.client.connection.pool.name"] != pool {
					t.Errorf("%s: pool name %q, want %q", m.Name, attrs["db.client.connection.pool.name"], pool)
				}
				key := m.Name
				if s := attrs["db.client.connection.state"]; s != "" {
					key += "/" + s
				}
				if k := attrs["pgline.request.kind"]; k != "" {
					key += "/" + k
				}
				v[key] = x
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if d.IsMonotonic {
					t.Errorf("%s is monotonic", m.Name)
				}
				for _, dp := range d.DataPoints {
					add(attrMap(dp.Attributes.ToSlice()), float64(dp.Value))
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					add(attrMap(dp.Attributes.ToSlice()), dp.Value)
				}
			}
		}
	}
	return v
}

// statValues are the pool metrics that s should give.
func statValues(s pgline.PoolStat) poolValues {
	open := s.TotalConns - s.OpeningConns
	depth := 0.0
	if busy := open - s.AcquiredConns - s.IdleConns; busy > 0 && s.InFlight > 0 {
		depth = float64(s.InFlight) / float64(busy)
	}
	return poolValues{
		"db.client.connection.count/idle":                 float64(s.IdleConns),
		"db.client.connection.count/used":                 float64(open - s.IdleConns),
		"db.client.connection.max":                        float64(s.MaxConns),
		"db.client.connection.pending_requests/acquire":   float64(s.AcquireWaiting),
		"db.client.connection.pending_requests/statement": float64(s.Waiting),
		"pgline.pool.connection.opening":                  float64(s.OpeningConns),
		"pgline.pool.connection.acquired":                 float64(s.AcquiredConns),
		"pgline.pool.statement.in_flight":                 float64(s.InFlight),
		"pgline.pool.pipeline.depth":                      depth,
		"pgline.pool.pooler.hosts":                        float64(len(s.PoolerHosts)),
	}
}

// checkPool fails unless the collected values are want, and p.Stat()
// agrees with them.
func checkPool(t *testing.T, what string, got, want poolValues, p *pgline.Pool) {
	t.Helper()
	for _, m := range []poolValues{want, statValues(p.Stat())} {
		if len(got) != len(m) {
			t.Errorf("%s: %d values, want %d: %v", what, len(got), len(m), got)
		}
		for k, v := range m {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %v, want %v", what, k, g, v)
			}
		}
	}
}

// waitStat waits until p.Stat() satisfies ok.
func waitStat(t *testing.T, p *pgline.Pool, ok func(pgline.PoolStat) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(p.Stat()); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pool never reached the state: %+v", p.Stat())
		}
	}
}

// TestPoolMetricsHeld holds connections with Acquire, and makes an Acquire
// wait, and checks the metrics at each step.
func TestPoolMetricsHeld(t *testing.T) {
	h := newHarness(t, []string{"pool_max_conns=3"})
	p := h.pool(t)
	unregister, err := otelpgline.RegisterPoolMetrics(p, otelpgline.WithMeterProvider(h.mp))
	if err != nil {
		t.Fatal(err)
	}
	pool := h.addr + ":" + strconv.Itoa(h.port) + "/" + h.cfg.Database
	ctx := testCtx(t)
	zero := poolValues{
		"db.client.connection.count/idle": 0, "db.client.connection.count/used": 0,
		"db.client.connection.max": 3, "db.client.connection.pending_requests/acquire": 0,
		"db.client.connection.pending_requests/statement": 0, "pgline.pool.connection.opening": 0,
		"pgline.pool.connection.acquired": 0, "pgline.pool.statement.in_flight": 0,
		"pgline.pool.pipeline.depth": 0, "pgline.pool.pooler.hosts": 0,
	}
	checkPool(t, "new pool", h.collectPool(t, pool), zero, p)

	var held []*pgline.PoolConn
	for range 2 {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, pc)
	}
	checkPool(t, "2 of 3 held", h.collectPool(t, pool), merge(zero, poolValues{
		"db.client.connection.count/used": 2, "pgline.pool.connection.acquired": 2}), p)

	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, pc)
	got := make(chan *pgline.PoolConn)
	go func() {
		pc, err := p.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- pc
	}()
	waitStat(t, p, func(s pgline.PoolStat) bool { return s.AcquireWaiting == 1 })
	checkPool(t, "3 held, 1 waiting", h.collectPool(t, pool), merge(zero, poolValues{
		"db.client.connection.count/used": 3, "pgline.pool.connection.acquired": 3,
		"db.client.connection.pending_requests/acquire": 1}), p)

	held[0].Release()
	held[0] = <-got
	for _, pc := range held {
		if pc != nil {
			pc.Release()
		}
	}
	waitStat(t, p, func(s pgline.PoolStat) bool { return s.IdleConns == 3 })
	checkPool(t, "all released", h.collectPool(t, pool), merge(zero, poolValues{"db.client.connection.count/idle": 3}), p)

	if err := unregister(); err != nil {
		t.Fatal(err)
	}
	if v := h.collectPool(t, pool); len(v) != 0 {
		t.Errorf("values after unregister: %v", v)
	}
}

// TestPoolMetricsPipeline blocks statements on a server lock so that they
// stay in flight on the pool's one connection.
func TestPoolMetricsPipeline(t *testing.T) {
	h := newHarness(t, []string{"pool_max_conns=1"})
	p := h.pool(t)
	unregister, err := otelpgline.RegisterPoolMetrics(p, otelpgline.WithMeterProvider(h.mp), otelpgline.WithPoolName("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer unregister()
	ctx := testCtx(t)
	locker := h.connect(t)
	if _, err := locker.Exec(ctx, "SELECT pg_advisory_lock(7001)"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, err := p.Exec(ctx, "SELECT pg_advisory_xact_lock_shared(7001)"); err != nil {
				t.Error(err)
			}
		})
	}
	waitStat(t, p, func(s pgline.PoolStat) bool { return s.InFlight == 3 })
	checkPool(t, "3 in flight", h.collectPool(t, "orders"), poolValues{
		"db.client.connection.count/idle": 0, "db.client.connection.count/used": 1,
		"db.client.connection.max": 1, "db.client.connection.pending_requests/acquire": 0,
		"db.client.connection.pending_requests/statement": 0, "pgline.pool.connection.opening": 0,
		"pgline.pool.connection.acquired": 0, "pgline.pool.statement.in_flight": 3,
		"pgline.pool.pipeline.depth": 3, "pgline.pool.pooler.hosts": 0,
	}, p)
	if _, err := locker.Exec(context.Background(), "SELECT pg_advisory_unlock(7001)"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// merge returns a copy of m with the values of set.
func merge(m, set poolValues) poolValues {
	out := make(poolValues, len(m))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range set {
		out[k] = v
	}
	return out
}
