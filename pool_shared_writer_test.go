package pgline

// The writer role through a Pool of two
// connections: routed statements, transactions and Acquire'd connections
// share the connections the takeover writes on.

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestPoolSharedWriterMixedCallers(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for _, dsn := range []string{"pool_max_conns=2", "pool_max_conns=2 pipeline_sync=each"} {
		t.Run(dsn, func(t *testing.T) {
			p := newTestPool(t, dsn)
			ctx := testCtx(t)
			var seq, txs, acq atomic.Int64
			l := newLoopLoad(t, 2*time.Second, 10)
			fail, spawn := l.fail, l.spawn
			spawn(100, func() {
				v := seq.Add(1)
				var got int64
				if err := p.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got); err != nil || got != v {
					fail("echo: sent %d got %d %v", v, got, err)
				}
			})
			spawn(2, func() {
				tx, err := p.Begin(ctx)
				if err != nil {
					fail("begin: %v", err)
					return
				}
				defer tx.Rollback(ctx)
				var pid1, pid2 int32
				v := seq.Add(1)
				var got int64
				if err := tx.QueryRow(ctx, "SELECT pg_backend_pid(), $1::int8", v).Scan(&pid1, &got); err != nil || got != v {
					fail("tx: sent %d got %d %v", v, got, err)
				}
				if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid2); err != nil || pid1 != pid2 {
					fail("tx pids %d %d %v", pid1, pid2, err)
				}
				var st string
				if err := tx.QueryRow(ctx, "SELECT current_setting('transaction_isolation')").Scan(&st); err != nil {
					fail("tx: %v", err)
				}
				if err := tx.Commit(ctx); err != nil {
					fail("commit: %v", err)
				}
				txs.Add(1)
			})
			spawn(2, func() {
				pc, err := p.Acquire(ctx)
				if err != nil {
					fail("acquire: %v", err)
					return
				}
				defer pc.Release()
				for i := 0; i < 5; i++ {
					v := seq.Add(1)
					var got int64
					if err := pc.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got); err != nil || got != v {
						fail("acquired: sent %d got %d %v", v, got, err)
					}
				}
				acq.Add(1)
			})
			l.wait()
			t.Logf("statements %d, tx %d, acquired %d, stat %+v", seq.Load(), txs.Load(), acq.Load(), p.Stat())
		})
	}
}
