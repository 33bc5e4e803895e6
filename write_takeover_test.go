package pgline

// The writer role handed over between callers (writer.flushUnlock and
// overdueLocked: a writer that yields, a caller that takes its role over)
// with the API's other writers (CopyFrom, a streamed ReaderArg, Batch,
// transactions, WaitForNotification), and the helpers other root tests
// use. The takeovers under echo, partial writes, short ctxs, failures and
// cancels are pinned beside the engine (internal/session's
// writer_test.go). These are storms.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// writerTakeovers reads c.writer.takeovers under wmu.
func writerTakeovers(c *Conn) uint64 {
	c.s.Wmu.Lock()
	defer c.s.Wmu.Unlock()
	return c.s.Writer.Takeovers
}

// waitWriterIdle waits for the connection to go idle and checks the
// takeover's bookkeeping: nothing queued, nobody writing or yielding.
func waitWriterIdle(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.s.Wmu.Lock()
		q, f, y, tail, w := c.s.Queued, c.s.Writer.Taken, c.s.Writer.Yielding, c.s.Tail, len(c.s.Writer.Wbuf)
		c.s.Wmu.Unlock()
		if q == 0 && !f && !y && tail == nil && w == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("not idle: queued %d, writer taken %v, yielding %v, tail %v, wbuf %d", q, f, y, tail != nil, w)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// loopLoad runs goroutines in loops until a deadline, or until maxErrs
// failures were reported (the first maxErrs are the test's errors).
type loopLoad struct {
	t       *testing.T
	end     time.Time
	maxErrs int64
	bad     atomic.Int64
	wg      sync.WaitGroup
	// more, when set before spawn, keeps the loops going past end while
	// it returns true, until last: for a load that must have exercised
	// something, which a loaded machine may not do in the first d.
	more func() bool
	last time.Time
}

func newLoopLoad(t *testing.T, d time.Duration, maxErrs int64) *loopLoad {
	now := time.Now()
	return &loopLoad{t: t, end: now.Add(d), last: now.Add(5 * d), maxErrs: maxErrs}
}

// running reports whether the loops go on.
func (l *loopLoad) running() bool {
	if l.bad.Load() >= l.maxErrs {
		return false
	}
	now := time.Now()
	return now.Before(l.end) || l.more != nil && now.Before(l.last) && l.more()
}

// fail reports a failure.
func (l *loopLoad) fail(format string, args ...any) {
	if l.bad.Add(1) <= l.maxErrs {
		l.t.Errorf(format, args...)
	}
}

// spawn starts n goroutines each running f in a loop.
func (l *loopLoad) spawn(n int, f func()) {
	for range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for l.running() {
				f()
			}
		}()
	}
}

// wait waits for the goroutines to end.
func (l *loopLoad) wait() { l.wg.Wait() }

// runEchoLoad runs g goroutines on q for d, each running SELECT $1::int8
// with values unique across the run, and reports the mismatches.
func runEchoLoad(t *testing.T, ctx context.Context, g int, d time.Duration, q func(context.Context, string, ...any) *Row) (n int64) {
	t.Helper()
	var seq atomic.Int64
	var wg sync.WaitGroup
	var bad atomic.Int64
	end := time.Now().Add(d)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && bad.Load() < 10 {
				v := seq.Add(1)
				var got int64
				err := q(ctx, "SELECT $1::int8", v).Scan(&got)
				if err != nil || got != v {
					bad.Add(1)
					t.Errorf("sent %d, got %d, %v", v, got, err)
				}
			}
		}()
	}
	wg.Wait()
	return seq.Load()
}

// TestWriterTakeoverMixedWriters: takeovers with everything else that
// writes or waits for the writer's role on the same Conn: CopyFrom
// (writer.claim), a streamed ReaderArg (sendStreamed), Batch, transactions,
// and WaitForNotification, while echo goroutines keep the writer yielding
// and callers taking its role over.
func TestWriterTakeoverMixedWriters(t *testing.T) {
	storm(t)
	// Batches and WaitForNotification are kept apart: together they hit a
	// data race that predates the takeover (TestWaitForNotificationBatchSyncsRace).
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		for _, listen := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/listen=%v", dsn, listen), func(t *testing.T) { writerTakeoverMix(t, dsn, listen) })
		}
	}
}

// writerTakeoverMix runs TestWriterTakeoverMixedWriters on a Conn with the
// extra settings, with WaitForNotification and notifications (listen) or
// with batches.
func writerTakeoverMix(t *testing.T, extra string, listen bool) {
	c := connect(t, srv.DSN(extra))
	other := connect(t, srv.DSN())
	ctx := testCtx(t)
	tbl := fmt.Sprintf("takeover_mix_%d", time.Now().UnixNano())
	if _, err := other.Exec(ctx, "CREATE TABLE "+tbl+" (k int8, src text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Exec(context.Background(), "DROP TABLE "+tbl) })
	ch := "takeover_ch"
	if err := c.Listen(ctx, ch); err != nil {
		t.Fatal(err)
	}

	var seq atomic.Int64
	l := newLoopLoad(t, 2*time.Second, 20)
	l.more = func() bool { return writerTakeovers(c) == 0 } // until one has happened
	fail, spawn := l.fail, l.spawn
	// Echo.
	spawn(60, func() {
		v := seq.Add(1)
		var got int64
		if err := c.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got); err != nil || got != v {
			fail("echo: sent %d got %d %v", v, got, err)
		}
	})
	// Batch of 5 distinct values.
	var batches atomic.Int64
	nb := 5
	if listen {
		nb = 0
	}
	spawn(nb, func() {
		b := &Batch{}
		var want []int64
		for i := 0; i < 5; i++ {
			v := seq.Add(1)
			want = append(want, v)
			b.Queue("SELECT $1::int8", v)
		}
		br := c.SendBatch(ctx, b)
		for i, w := range want {
			var got int64
			if err := br.QueryRow().Scan(&got); err != nil || got != w {
				fail("batch item %d: sent %d got %d %v", i, w, got, err)
			}
		}
		if err := br.Close(); err != nil {
			fail("batch close: %v", err)
		}
		batches.Add(1)
	})
	// Transactions: inserted rows count once, and the txid is stable.
	var txRows atomic.Int64
	spawn(2, func() {
		tx, err := c.Begin(ctx)
		if err != nil {
			fail("begin: %v", err)
			return
		}
		var id1, id2 int64
		if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&id1); err != nil {
			fail("tx txid: %v", err)
		}
		v := seq.Add(1)
		if _, err := tx.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, 'tx')", v); err != nil {
			fail("tx insert: %v", err)
		}
		var got int64
		if err := tx.QueryRow(ctx, "SELECT $1::int8", v).Scan(&got); err != nil || got != v {
			fail("tx echo: sent %d got %d %v", v, got, err)
		}
		if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&id2); err != nil || id1 != id2 {
			fail("tx txid %d then %d %v", id1, id2, err)
		}
		if err := tx.Commit(ctx); err != nil {
			fail("commit: %v", err)
			return
		}
		txRows.Add(1)
	})
	// CopyFrom of 200 rows.
	var copyRows atomic.Int64
	spawn(1, func() {
		rows := make([][]any, 200)
		for i := range rows {
			rows[i] = []any{seq.Add(1), "copy"}
		}
		n, err := c.CopyFrom(ctx, Identifier{tbl}, []string{"k", "src"}, CopyFromRows(rows))
		if err != nil || n != 200 {
			fail("copy: %d %v", n, err)
			return
		}
		copyRows.Add(200)
	})
	// Streamed parameter of 3 MiB: its md5 must come back with its tag.
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	sum := md5.Sum(big)
	spawn(1, func() {
		v := seq.Add(1)
		var got string
		var gotV int64
		err := c.QueryRow(ctx, "SELECT md5($1::bytea), $2::int8", session.ReaderArg(bytes.NewReader(big), int64(len(big))), v).Scan(&got, &gotV)
		if err != nil || got != hex.EncodeToString(sum[:]) || gotV != v {
			fail("streamed: %s %d (want %d) %v", got, gotV, v, err)
		}
	})
	// Notifications sent by the Conn itself, received in order.
	var sent atomic.Int64
	nl := 1
	if !listen {
		nl = 0
	}
	spawn(nl, func() {
		n := sent.Add(1)
		if _, err := c.Exec(ctx, "SELECT pg_notify($1, $2)", ch, strconv.FormatInt(n, 10)); err != nil {
			fail("notify: %v", err)
		}
	})
	var recv atomic.Int64
	waitNext := func(d time.Duration) bool {
		wctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		n, err := c.WaitForNotification(wctx)
		if err != nil {
			if wctx.Err() == nil {
				fail("wait: %v", err)
			}
			return false
		}
		want := recv.Add(1)
		if n.Channel != ch || n.Payload != strconv.FormatInt(want, 10) {
			fail("notification %q %q, want payload %d", n.Channel, n.Payload, want)
		}
		return true
	}
	spawn(nl, func() { waitNext(20 * time.Millisecond) })
	l.wait()
	for recv.Load() < sent.Load() && waitNext(2*time.Second) {
	}
	if recv.Load() != sent.Load() {
		t.Errorf("notifications: %d sent, %d received", sent.Load(), recv.Load())
	}
	var cnt, copied int64
	if err := other.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE src='copy') FROM "+tbl).Scan(&cnt, &copied); err != nil {
		t.Fatal(err)
	}
	if cnt != txRows.Load()+copyRows.Load() || copied != copyRows.Load() {
		t.Errorf("table has %d rows (%d copied), want %d tx + %d copied", cnt, copied, txRows.Load(), copyRows.Load())
	}
	var dup int64
	if err := other.QueryRow(ctx, "SELECT count(*) FROM (SELECT k FROM "+tbl+" GROUP BY k HAVING count(*) > 1) d").Scan(&dup); err != nil || dup != 0 {
		t.Errorf("duplicated keys: %d %v", dup, err)
	}
	t.Logf("statements %d, batches %d, tx %d, copied %d, notifications %d, takeovers %d",
		seq.Load(), batches.Load(), txRows.Load(), copyRows.Load(), recv.Load(), writerTakeovers(c))
	waitWriterIdle(t, c)
	if writerTakeovers(c) == 0 {
		t.Errorf("no takeover happened")
	}
}
