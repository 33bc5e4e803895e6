package pgline

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A CancelRequest meant for a given-up statement may land on the first
// statement of an independent batch queued behind it; pgline sends that
// statement again, after the rest of the batch ran. The batch's later
// statements must not run before it.
func TestAuditTxoBatchResendOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := auditTestTable(t, ctx, c, "(id int, v int)")
	hits := 0
	for i := 0; i < 150 && hits < 3; i++ {
		xctx, xcancel := context.WithTimeout(ctx, 2*time.Millisecond)
		sleep := 0.094 + float64(i%13)/1000
		xdone := make(chan struct{})
		go func() {
			c.Exec(xctx, fmt.Sprintf("SELECT pg_sleep(%.3f)", sleep))
			close(xdone)
		}()
		time.Sleep(500 * time.Microsecond)
		b := &Batch{}
		b.Queue("INSERT INTO "+tbl+" SELECT $1, 0 FROM pg_sleep(0.01)", i)
		b.Queue("UPDATE "+tbl+" SET v = v + 1 WHERE id = $1", i)
		br := c.SendBatch(ctx, b)
		_, e1 := br.Exec()
		tag2, e2 := br.Exec()
		br.Close()
		<-xdone
		xcancel()
		if errors.Is(e1, ErrCanceledByOther) || errors.Is(e2, ErrCanceledByOther) {
			hits++
			t.Logf("iter %d: stray cancel reported: %v / %v", i, e1, e2)
			continue
		}
		if e1 != nil || e2 != nil {
			t.Logf("iter %d: %v / %v", i, e1, e2)
			continue
		}
		var v int
		if err := c.QueryRow(ctx, "SELECT v FROM "+tbl+" WHERE id = $1", i).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != 1 || tag2.RowsAffected() != 1 {
			hits++
			t.Errorf("iter %d: batch INSERT then UPDATE: UPDATE tag %q, v = %d: the INSERT ran after the UPDATE", i, tag2, v)
		}
	}
	t.Logf("cancels %d", c.cancels.Load())
}
