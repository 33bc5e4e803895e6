package floor

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPipe: 20 and 40 goroutines sharing one connection through a
// Pipe, each running SELECT $1::int; the root module's
// BenchmarkPipelineGoroutines runs the same through a pgline Conn. turn is
// NewPipe's Pipe, which looks at no ctx; reader/cancelable is
// NewReaderPipe's under a ctx that can end (each caller's deadline kept,
// as pgline's cancelable case), reader/background the same Pipe under a
// ctx that cannot.
func BenchmarkPipe(b *testing.B) {
	for _, n := range []int{20, 40} {
		for _, kind := range []string{"turn", "reader/background", "reader/cancelable"} {
			b.Run(strconv.Itoa(n)+"/"+kind, func(b *testing.B) {
				c, err := Connect(b.Context(), Config{Addr: srv.Addr(), User: srv.User, Database: "postgres"})
				if err != nil {
					b.Fatal(err)
				}
				for _, st := range [][2]string{{"q", "SELECT $1::int"}, {"begin", "BEGIN"}, {"commit", "COMMIT"}} {
					if err := c.Prepare(st[0], st[1]); err != nil {
						b.Fatal(err)
					}
				}
				if err := c.Prepare("pid", "SELECT pg_backend_pid()::text"); err != nil {
					b.Fatal(err)
				}
				pid, err := c.ExecValue("pid", nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				var p *Pipe
				if kind == "turn" {
					p = NewPipe(c, "begin", "commit")
				} else {
					p = NewReaderPipe(c, "begin", "commit")
				}
				ctx := context.Background()
				if kind == "reader/cancelable" {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				defer p.Close()
				var next atomic.Int64
				var wg sync.WaitGroup
				server, client := procCPU(string(pid)), procCPU("self")
				b.ResetTimer()
				for range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							var a [12]byte
							if n, err := p.ExecContext(ctx, "q", [][]byte{strconv.AppendInt(a[:0], 7, 10)}, nil); err != nil || n != 1 {
								b.Error(n, err)
								return
							}
						}
					}()
				}
				wg.Wait()
				// As the root module's BenchmarkPipelineGoroutines reports.
				if server >= 0 && client >= 0 && b.N > 0 {
					b.ReportMetric(float64(procCPU("self")-client)/float64(b.N), "client-ns/op")
					b.ReportMetric(float64(procCPU(string(pid))-server)/float64(b.N), "server-ns/op")
				}
			})
		}
	}
}

// procCPU returns the user and system CPU time of process pid ("self":
// this one) so far, or -1 when /proc cannot tell.
func procCPU(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return -1
	}
	// The fields after the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}
