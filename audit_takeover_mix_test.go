package pgline

// Audit of the writer takeover (be9dffd) with everything else that writes
// or waits for the writer's role on the same Conn: CopyFrom (claimWriter),
// a streamed ReaderArg (sendStreamed), Batch, transactions, and
// WaitForNotification, while echo goroutines keep the writer yielding and
// callers taking its role over.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

func TestAuditTakeoverMix(t *testing.T) {
	// Batches and WaitForNotification are kept apart: together they hit a
	// data race that predates the takeover (TestAuditTakeoverBatchSyncsRace).
	for _, dsn := range []string{"", "pipeline_sync=each"} {
		for _, listen := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/listen=%v", dsn, listen), func(t *testing.T) { auditTakeoverMix(t, dsn, listen) })
		}
	}
}

func auditTakeoverMix(t *testing.T, extra string, listen bool) {
	c := connect(t, srv.DSN(extra))
	other := connect(t, srv.DSN())
	ctx := testCtx(t)
	tbl := fmt.Sprintf("audit_takeover_mix_%d", time.Now().UnixNano())
	if _, err := other.Exec(ctx, "CREATE TABLE "+tbl+" (k int8, src text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Exec(context.Background(), "DROP TABLE "+tbl) })
	ch := "audit_takeover_ch"
	if err := c.Listen(ctx, ch); err != nil {
		t.Fatal(err)
	}

	var seq atomic.Int64
	l := newAuditLoad(t, 2*time.Second, 20)
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
		err := c.QueryRow(ctx, "SELECT md5($1::bytea), $2::int8", ReaderArg(bytes.NewReader(big), int64(len(big))), v).Scan(&got, &gotV)
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
		seq.Load(), batches.Load(), txRows.Load(), copyRows.Load(), recv.Load(), auditTakeovers(c))
	auditQuiescent(t, c)
	if auditTakeovers(c) == 0 {
		t.Errorf("no takeover happened")
	}
}
