package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgline/pgline/pgtest"
)

var (
	benchSrvOnce sync.Once
	benchSrvDSN  string
	benchSrvErr  error
)

// benchServer starts one throwaway server with bench_rows loaded for the
// benchmarks in this file.
func benchServer(b *testing.B) string {
	benchSrvOnce.Do(func() {
		srv, err := pgtest.Start(pgtest.Options{})
		if err != nil {
			benchSrvErr = err
			return
		}
		ctx := context.Background()
		c, err := pgx.Connect(ctx, srv.DSN())
		if err != nil {
			benchSrvErr = err
			return
		}
		defer c.Close(ctx)
		for _, q := range schema(defaultSizes(true))[:3] {
			if _, err := c.Exec(ctx, q); err != nil {
				benchSrvErr = err
				return
			}
		}
		benchSrvDSN = srv.DSN()
	})
	if benchSrvErr != nil {
		b.Skip(benchSrvErr)
	}
	return benchSrvDSN
}

// BenchmarkConc runs the pipeline/*/concN cases of the bench command for
// pgline and the floor in one process, one after the other (with -count,
// in turn), so that their ratio is measured under the same conditions.
// Besides time per statement it reports, per statement, the client's CPU
// (cpu-ns), every postgres process's (srv-ns), the machine's idle CPU
// (idle-ns: a convoy, where client and server take turns, shows here)
// and the client's read and write syscalls:
//
//	go -C bench test -run '^$' -bench Conc -count 6 .
//
// Linux only for the last four (/proc); elsewhere they read 0.
func BenchmarkConc(b *testing.B) {
	dsn := benchServer(b)
	for _, qn := range []string{"param", "cached"} {
		for _, w := range []int{20, 40} {
			for _, d := range []*driver{pglineDriver(), floorClientDriver()} {
				b.Run(fmt.Sprintf("%s/conc%d/%s", qn, w, d.name), func(b *testing.B) {
					ctx := context.Background()
					t, err := openConcurrent(ctx, d, dsn, pipeQueries[qn], w, false)
					if err != nil {
						b.Fatal(err)
					}
					defer t.close()
					if err := t.run(ctx, 2000, nil); err != nil {
						b.Fatal(err)
					}
					c0, _ := processUsage()
					r0, w0 := sysIO()
					s0 := serverCPU()
					i0 := sysIdle()
					b.ResetTimer()
					if err := t.run(ctx, b.N, nil); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					c1, _ := processUsage()
					r1, w1 := sysIO()
					s1 := serverCPU()
					i1 := sysIdle()
					n := float64(b.N)
					b.ReportMetric(float64(i1-i0)/n, "idle-ns/op")
					b.ReportMetric(float64(c1-c0)/n, "cpu-ns/op")
					b.ReportMetric(float64(s1-s0)/n, "srv-ns/op")
					b.ReportMetric(float64(r1-r0)/n, "reads/op")
					b.ReportMetric(float64(w1-w0)/n, "writes/op")
				})
			}
		}
	}
}

// sysIO returns this process's read and write system calls so far.
func sysIO() (reads, writes int64) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	return reads, writes
}

// serverCPU returns the CPU time used so far by every postgres process
// on the machine (clock ticks of 10 ms: measure over a second or more).
func serverCPU() time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(postgres") {
			continue
		}
		fs := strings.Fields(s[i+1:])
		if len(fs) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(fs[11], 10, 64)
		st, _ := strconv.ParseInt(fs[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// sysIdle returns the machine's idle CPU time so far (/proc/stat).
func sysIdle() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fs := strings.Fields(line)
	if len(fs) < 6 || fs[0] != "cpu" {
		return 0
	}
	idle, _ := strconv.ParseInt(fs[4], 10, 64)
	iowait, _ := strconv.ParseInt(fs[5], 10, 64)
	return time.Duration(idle+iowait) * 10 * time.Millisecond
}
