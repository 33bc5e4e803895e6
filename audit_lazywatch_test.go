package pgline

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStormMixedOps: many goroutines on one Conn mix QueryRow,
// Query (rows read slowly), Exec, Batch and CopyTo with ctxs that are
// already done, end mid-reply, or never end. Every outcome is the
// caller's own value or its own ctx's error, a ctx's error comes at its
// deadline, and the connection keeps working.
func TestStormMixedOps(t *testing.T) {
	storm(t)
	dsns := map[string]string{"tcp": srv.DSN(), "tls": srv.DSN("sslmode=require"), "unix": srv.SocketDSN()}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			c := connect(t, dsn+" cancel_grace=20ms")
			defer deadlockWatchdog(t, c, 40*time.Second)()
			bg := context.Background()
			const late = time.Second // -race on a small machine
			var wg sync.WaitGroup
			for g := range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					for i := range 30 {
						id := g*10000 + i
						ctx, cancel := bg, context.CancelFunc(func() {})
						var limit time.Duration
						switch rng.IntN(4) {
						case 0: // never ends
						case 1: // already ended
							ctx, cancel = context.WithCancel(bg)
							cancel()
						default: // ends mid-flight
							limit = time.Duration(rng.IntN(8000)) * time.Microsecond
							ctx, cancel = context.WithTimeout(bg, limit)
						}
						start := time.Now()
						kind, err := mixedOp(ctx, c, rng.IntN(6), id, rng)
						cancel()
						if err = ownOutcomeErr(ctx, err); err != nil {
							t.Errorf("goroutine %d, op %d (%s): %v", g, i, kind, err)
							return
						}
						if limit > 0 && ctx.Err() != nil && time.Since(start) > limit+late {
							t.Errorf("goroutine %d, op %d (%s): returned %v after a %v deadline", g, i, kind, time.Since(start), limit)
						}
					}
				}()
			}
			wg.Wait()
			var v int
			if err := c.QueryRow(bg, "SELECT $1::int", 777).Scan(&v); err != nil || v != 777 {
				t.Fatalf("after: %d, %v", v, err)
			}
		})
	}
}

// mixedOp runs one operation of kind k for id and checks that what
// it returned is id's.
func mixedOp(ctx context.Context, c *Conn, k, id int, rng *rand.Rand) (string, error) {
	switch k {
	case 0:
		var v int
		err := c.QueryRow(ctx, "SELECT $1::int", id).Scan(&v)
		if err == nil && v != id {
			err = fmt.Errorf("got %d, want %d", v, id)
		}
		return "QueryRow", err
	case 1:
		var v int
		err := c.QueryRow(ctx, "SELECT $1::int FROM pg_sleep($2)", id, float64(rng.IntN(3))/1000).Scan(&v)
		if err == nil && v != id {
			err = fmt.Errorf("got %d, want %d", v, id)
		}
		return "QueryRow sleep", err
	case 2:
		rows, err := c.Query(ctx, "SELECT $1::int, g, repeat('x', 200 + g % 7) FROM generate_series(1, 600) g", id)
		if err != nil {
			return "Query", err
		}
		n := 0
		for {
			ended := ctx.Err() != nil
			if !rows.Next() {
				break
			}
			if ended {
				rows.Close()
				return "Query", fmt.Errorf("row %d returned after the ctx ended", n+1)
			}
			var v, g int
			var s string
			if err := rows.Scan(&v, &g, &s); err != nil {
				rows.Close()
				return "Query", err
			}
			n++
			if v != id || g != n || len(s) != 200+g%7 {
				rows.Close()
				return "Query", fmt.Errorf("row %d: (%d, %d, %d bytes), want (%d, %d, %d bytes)", n, v, g, len(s), id, n, 200+n%7)
			}
			if n%100 == 0 {
				time.Sleep(200 * time.Microsecond)
			}
		}
		if err := rows.Err(); err != nil {
			return "Query", err
		}
		if n != 600 {
			return "Query", fmt.Errorf("%d rows, want 600", n)
		}
		return "Query", nil
	case 3:
		tag, err := c.Exec(ctx, "SELECT $1::int, pg_sleep(0.001)", id)
		if err == nil && tag.String() != "SELECT 1" {
			err = fmt.Errorf("tag %q", tag)
		}
		return "Exec", err
	case 4:
		b := &Batch{}
		for j := range 3 {
			b.Queue("SELECT $1::int", id*10+j)
		}
		br := c.SendBatch(ctx, b)
		var first error
		for j := range 3 {
			var v int
			err := br.QueryRow().Scan(&v)
			if err == nil && v != id*10+j {
				err = fmt.Errorf("batch statement %d: got %d, want %d", j, v, id*10+j)
			}
			if err != nil && first == nil {
				first = err
			}
		}
		if err := br.Close(); err != nil && first == nil {
			first = err
		}
		return "Batch", first
	default:
		var buf bytes.Buffer
		tag, err := c.CopyTo(ctx, &buf, "COPY (SELECT "+strconv.Itoa(id)+" FROM generate_series(1, 300)) TO STDOUT")
		if err == nil {
			want := strings.Repeat(strconv.Itoa(id)+"\n", 300)
			if tag.RowsAffected() != 300 || buf.String() != want {
				err = fmt.Errorf("tag %q, %d bytes, want 300 lines of %d", tag, buf.Len(), id)
			}
		}
		return "CopyTo", err
	}
}
