package pgline

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// Statements of many goroutines on one Conn share Syncs (BEGIN/COMMIT
// replace a Sync). A deferred constraint fails at that COMMIT: the
// statement it belongs to must get the error, and the statements of the
// group must each have the right outcome.
func TestCommitChainedDeferredFailure(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := auditTestTable(t, ctx, c, "(id int, CONSTRAINT u UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)")
	var next atomic.Int64
	type res struct {
		id  int64
		bad bool
		err error
	}
	out := make(chan res, 100000)
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				id := next.Add(1)
				bad := id%3 == 0
				q := "INSERT INTO " + tbl + " VALUES ($1) RETURNING id"
				if bad {
					q = "INSERT INTO " + tbl + " VALUES ($1), ($1) RETURNING id"
				}
				var err error
				switch (id / 3) % 3 {
				case 0:
					_, err = c.Exec(ctx, q, id)
				case 1:
					var x int64
					err = c.QueryRow(ctx, q, id).Scan(&x)
				case 2:
					var r *Rows
					r, err = c.Query(ctx, q, id)
					if err == nil {
						for r.Next() {
						}
						r.Close()
						err = r.Err()
					}
				}
				out <- res{id, bad, err}
			}
		}(g)
	}
	wg.Wait()
	close(out)
	counts := map[int64]int{}
	r, err := c.Query(ctx, "SELECT id, count(*)::int FROM "+tbl+" GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int64
		var n int
		r.Scan(&id, &n)
		counts[id] = n
	}
	var fails int
	for x := range out {
		got := counts[x.id]
		switch {
		case x.bad && x.err == nil:
			t.Errorf("id %d: deferred violation reported success (rows %d)", x.id, got)
			fails++
		case x.bad && got != 0:
			t.Errorf("id %d: violating insert left %d rows", x.id, got)
			fails++
		case !x.bad && x.err == nil && got != 1:
			t.Errorf("id %d: success but %d rows", x.id, got)
			fails++
		case !x.bad && x.err != nil:
			t.Errorf("id %d: good insert failed: %v (rows %d)", x.id, x.err, got)
			fails++
		case x.bad:
			var pe *PgError
			if !errors.As(x.err, &pe) || pe.Code != "23505" {
				t.Errorf("id %d: error %v, want 23505", x.id, x.err)
				fails++
			}
		}
		if fails > 20 {
			break
		}
	}
	t.Logf("shared syncs %d, resent %d", c.shared, c.resent)
}
