package pgline

import (
	"bytes"
	"context"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchConn connects to the shared test cluster over TCP for a benchmark
// and loads the benchmark table once.
func benchConn(b *testing.B) *Conn {
	b.Helper()
	c, err := Connect(context.Background(), srv.DSN())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	_, err = c.Exec(context.Background(), `
		CREATE TABLE IF NOT EXISTS bench_rows (
			id int4 PRIMARY KEY, name text, score float8, created timestamptz, hash text, flag bool);
		INSERT INTO bench_rows
			SELECT g, 'name ' || g, g * 0.5, '2024-01-01'::timestamptz + g * interval '1 minute', md5(g::text), g % 2 = 0
			FROM generate_series(1, 10000) g
			ON CONFLICT DO NOTHING;
		CREATE TABLE IF NOT EXISTS bench_insert (a int8, b text, c float8, d timestamptz, e text)`)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// dest returns the Scan destinations of r's fields, built once for a
// benchmark's loop.
func (r *benchRow) dest() []any {
	return []any{&r.ID, &r.Name, &r.Score, &r.Created, &r.Hash, &r.Flag}
}

// BenchmarkPointSelect: one row by primary key, sequential, one connection.
func BenchmarkPointSelect(b *testing.B) {
	c := benchConn(b)
	ctx := context.Background()
	var v benchRow
	dest := v.dest()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i = i%10000 + 1
		err := c.QueryRow(ctx, "SELECT id, name, score, created, hash, flag FROM bench_rows WHERE id = $1", i).
			Scan(dest...)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelectRows: n rows of 6 columns scanned into typed variables.
func BenchmarkSelectRows(b *testing.B) {
	c := benchConn(b)
	ctx := context.Background()
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var v benchRow
			dest := v.dest()
			b.ReportAllocs()
			defer reportCPU(b, c)()
			for b.Loop() {
				rows, err := c.Query(ctx, "SELECT id, name, score, created, hash, flag FROM bench_rows ORDER BY id LIMIT $1", n)
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for rows.Next() {
					if err := rows.Scan(dest...); err != nil {
						b.Fatal(err)
					}
					got++
				}
				if err := rows.Err(); err != nil || got != n {
					b.Fatal(got, err)
				}
			}
		})
	}
}

// BenchmarkInsert: a ~1 KB row with 5 parameters.
func BenchmarkInsert(b *testing.B) {
	c := benchConn(b)
	ctx := context.Background()
	text := strings.Repeat("x", 900)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Exec(ctx, "INSERT INTO bench_insert VALUES ($1, $2, $3, $4, $5)", int64(42), text, 3.14, now, "tail"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPoolParallel: 10-row queries from many goroutines through a
// Pool of 5 (b.RunParallel with 8 goroutines per CPU).
func BenchmarkPoolParallel(b *testing.B) {
	benchConn(b) // loads the table
	p, err := NewPool(context.Background(), srv.DSN("pool_max_conns=5"))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i = i%9000 + 1
			rows, err := p.Query(ctx, "SELECT id, name, score, created, hash, flag FROM bench_rows WHERE id >= $1 AND id < $1 + 10", i)
			if err != nil {
				b.Error(err)
				return
			}
			n := 0
			for rows.Next() {
				n++
			}
			if rows.Err() != nil || n != 10 {
				b.Error(n, rows.Err())
				return
			}
		}
	})
}

// BenchmarkPipelineConcurrent: point queries from 1000 goroutines on one
// Conn, with pipeline_sync=shared (the default) and each, against the
// same 1000 queries in one Batch under one Sync. It reports the CPU time
// the server's backend and this process spend per query (from /proc).
func BenchmarkPipelineConcurrent(b *testing.B) {
	benchConn(b) // loads the table
	ctx := context.Background()
	const n, q = 1000, "SELECT id FROM bench_rows WHERE id = $1"
	measure := func(b *testing.B, c *Conn, round func()) {
		var pid int
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			b.Fatal(err)
		}
		server, client := procCPU(pid), procCPU(os.Getpid())
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			round()
		}
		b.StopTimer()
		if server >= 0 && client >= 0 {
			b.ReportMetric(float64(procCPU(pid)-server)/float64(b.N*n), "server-ns/query")
			b.ReportMetric(float64(procCPU(os.Getpid())-client)/float64(b.N*n), "client-ns/query")
		}
	}
	for _, mode := range []string{"shared", "each"} {
		b.Run("goroutines/"+mode, func(b *testing.B) {
			c, err := Connect(ctx, srv.DSN("pipeline_sync="+mode))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			// Long-lived workers, as in a server: each runs one query per round.
			start, done := make(chan struct{}), make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range start {
						var id int32
						if err := c.QueryRow(ctx, q, int32(i+1)).Scan(&id); err != nil || id != int32(i+1) {
							b.Error(id, err)
						}
						done <- struct{}{}
					}
				}()
			}
			defer func() { close(start); wg.Wait() }()
			measure(b, c, func() {
				for range n {
					start <- struct{}{}
				}
				for range n {
					<-done
				}
			})
		})
	}
	b.Run("batch", func(b *testing.B) {
		c := benchConn(b)
		measure(b, c, func() {
			bt := &Batch{AllOrNothing: true}
			for i := range n {
				bt.Queue(q, int32(i+1))
			}
			br := c.SendBatch(ctx, bt)
			for range n {
				var id int32
				if err := br.QueryRow().Scan(&id); err != nil {
					b.Fatal(err)
				}
			}
			br.Close()
		})
	})
}

// BenchmarkPipelineGoroutines: 20 and 40 goroutines sharing one Conn, each
// running SELECT $1::int back to back; bench/internal/floor's BenchmarkPipe
// runs the same through the least machinery that gives each goroutine its
// own reply (the floor of the bench command's pipeline/*/concN cases).
// With a ctx that can end (the bench command's, and most servers'), every
// statement's ctx is watched.
func BenchmarkPipelineGoroutines(b *testing.B) {
	for _, n := range []int{20, 40} {
		for _, kind := range []string{"background", "cancelable"} {
			b.Run(strconv.Itoa(n)+"/"+kind, func(b *testing.B) {
				ctx := context.Background()
				if kind == "cancelable" {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				c, err := Connect(ctx, srv.DSN(""))
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ReportAllocs()
				report := reportCPU(b, c)
				defer report()
				b.ResetTimer()
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							var v int32
							if err := c.QueryRow(ctx, "SELECT $1::int", int32(7)).Scan(&v); err != nil || v != 7 {
								b.Error(v, err)
								return
							}
						}
					}()
				}
				wg.Wait()
			})
		}
	}
}

// reportCPU starts counting the CPU time of this process and of c's
// server process; the function it returns reports both per operation
// (client-ns/op, server-ns/op), which on a shared machine vary less than
// the time per operation.
func reportCPU(b *testing.B, c *Conn) func() {
	var pid int
	if err := c.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		b.Fatal(err)
	}
	server, client := procCPU(pid), procCPU(os.Getpid())
	return func() {
		if server >= 0 && client >= 0 && b.N > 0 {
			b.ReportMetric(float64(procCPU(os.Getpid())-client)/float64(b.N), "client-ns/op")
			b.ReportMetric(float64(procCPU(pid)-server)/float64(b.N), "server-ns/op")
		}
	}
}

// procCPU returns the user and system CPU time of process pid so far, or
// -1 when /proc cannot tell.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// BenchmarkConnect: opening a connection over TCP with the default
// statement_cache_mode (auto: one more round trip, the pooler check) and
// with prepare (no check).
func BenchmarkConnect(b *testing.B) {
	for _, mode := range []string{"auto", "prepare"} {
		b.Run(mode, func(b *testing.B) {
			dsn := srv.DSN("statement_cache_mode=" + mode)
			b.ReportAllocs()
			for b.Loop() {
				c, err := Connect(context.Background(), dsn)
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// BenchmarkPoolGoroutines: point lookups from G goroutines at once through
// a Pool of 4 connections (pool_max_pipeline 64: past G=256 statements
// wait for a slot). It reports the 99th percentile and the longest time
// a statement took, wait included, and the longest a goroutine went
// without completing one.
func BenchmarkPoolGoroutines(b *testing.B) {
	benchConn(b) // loads the table
	const q = "SELECT name FROM bench_rows WHERE id = $1"
	ops := []struct {
		name string
		gs   []int
		run  func(ctx context.Context, p *Pool, i int, name *string) error
	}{
		{"stmt", []int{100, 1000, 5000}, func(ctx context.Context, p *Pool, i int, name *string) error {
			return p.QueryRow(ctx, q, i).Scan(name)
		}},
		// A transaction holds a connection: Begin waits for an idle one.
		{"tx", []int{100, 1000}, func(ctx context.Context, p *Pool, i int, name *string) error {
			tx, err := p.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if err := tx.QueryRow(ctx, q, i).Scan(name); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}},
	}
	for _, op := range ops {
		for _, g := range op.gs {
			b.Run(fmt.Sprintf("%s/G=%d", op.name, g), func(b *testing.B) {
				p, err := NewPool(context.Background(), srv.DSN("pool_max_conns=4"))
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				ctx := context.Background()
				var lat, gaps latencyHist
				b.ReportAllocs()
				b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
				// Issue 14: client CPU per statement at G=5000 within 1.5x
				// of G=100.
				cpu0 := procCPU(os.Getpid())
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					var name string
					last := time.Now() // this goroutine's last completed operation
					for pb.Next() {
						i = i%10000 + 1
						start := time.Now()
						if err := op.run(ctx, p, i, &name); err != nil {
							b.Error(err)
							return
						}
						end := time.Now()
						lat.add(end.Sub(start))
						gaps.add(end.Sub(last))
						last = end
					}
				})
				if cpu0 >= 0 {
					b.ReportMetric(float64(procCPU(os.Getpid())-cpu0)/float64(b.N), "client-ns/op")
				}
				b.ReportMetric(float64(lat.quantile(0.99))/1e6, "p99-ms")
				b.ReportMetric(float64(lat.max.Load())/1e6, "max-ms")
				// The longest any goroutine went without completing an
				// operation (issue 14: under 1 s at any G).
				b.ReportMetric(float64(gaps.max.Load())/1e6, "max-gap-ms")
			})
		}
	}
}

// latencyHist is a histogram of durations in power-of-two buckets of
// nanoseconds, safe for concurrent use without locks.
type latencyHist struct {
	buckets [64]atomic.Int64
	max     atomic.Int64
}

func (h *latencyHist) add(d time.Duration) {
	h.buckets[bits.Len64(uint64(d))].Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// quantile returns the upper bound of the bucket holding quantile q.
func (h *latencyHist) quantile(q float64) time.Duration {
	var total int64
	for i := range h.buckets {
		total += h.buckets[i].Load()
	}
	want := int64(q * float64(total))
	var seen int64
	for i := range h.buckets {
		if seen += h.buckets[i].Load(); seen > want {
			return time.Duration(uint64(1)<<i - 1)
		}
	}
	return 0
}

// BenchmarkPoolSequential: one goroutine's 10-row queries, one at a time,
// through a Pool of 5 and on a lone Conn: the Pool's routing should cost
// next to nothing (issue 14: within 5 % of the lone Conn). The pool5 and
// conn sub-benchmarks run each side alone; alternating runs the two in
// turn, query by query, and reports each side's time and pool/conn, the
// ratio measured under the same load (this machine's noise moves a
// sub-benchmark run on its own by 15 %).
func BenchmarkPoolSequential(b *testing.B) {
	c := benchConn(b)
	p, err := NewPool(context.Background(), srv.DSN("pool_max_conns=5"))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	i := 0
	query := func(b *testing.B, via func(ctx context.Context, sql string, args ...any) (*Rows, error)) {
		i = i%9000 + 1
		rows, err := via(ctx, "SELECT id, name, score, created, hash, flag FROM bench_rows WHERE id >= $1 AND id < $1 + 10", i)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if rows.Err() != nil || n != 10 {
			b.Fatal(n, rows.Err())
		}
	}
	for _, via := range []struct {
		name  string
		query func(ctx context.Context, sql string, args ...any) (*Rows, error)
	}{{"pool5", p.Query}, {"conn", c.Query}} {
		b.Run(via.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				query(b, via.query)
			}
		})
	}
	b.Run("alternating", func(b *testing.B) {
		var took [2]time.Duration // pool, conn
		sides := [2]func(ctx context.Context, sql string, args ...any) (*Rows, error){p.Query, c.Query}
		for n := 0; b.Loop(); n++ {
			for k := range 2 {
				side := (n + k) % 2 // which goes first alternates too
				t0 := time.Now()
				query(b, sides[side])
				took[side] += time.Since(t0)
			}
		}
		pool, conn := took[0], took[1]
		b.ReportMetric(float64(pool.Nanoseconds())/float64(b.N), "pool-ns/op")
		b.ReportMetric(float64(conn.Nanoseconds())/float64(b.N), "conn-ns/op")
		b.ReportMetric(pool.Seconds()/conn.Seconds(), "pool/conn")
	})
	b.Logf("pool after the sequential queries: %+v", p.Stat())
}
