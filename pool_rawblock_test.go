package pgline

// A raw BEGIN given to a Pool's routed calls: the Pool shares
// connections, so a block a routed text opened and left open would take
// other callers' statements into it.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPoolRefusesRawBegin: on a Pool of one connection, two goroutines
// insert through Pool.Exec while a third, a careless call site, gives
// Pool.Exec a raw BEGIN now and then. The BEGIN is refused, never sent,
// with an error naming Pool.Begin; every insert reported done is in the
// table. Before, the BEGIN succeeded, the inserts pipelined behind it
// ran inside its block and were reported done, and the connection was
// then closed (it was in a transaction), rolling them back: 10 to 49
// inserts reported done were missing per run. pgxpool loses nothing (a
// pgx connection serves one statement at a time).
func TestPoolRefusesRawBegin(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	ctx := testCtx(t)
	admin := connect(t, srv.DSN())
	tbl := uniqueName("pool_rawbegin")
	if _, err := admin.Exec(ctx, "CREATE TABLE "+tbl+" (id int8 PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP TABLE IF EXISTS "+tbl) })
	p := newTestPool(t, "pool_max_conns=1")

	var (
		mu   sync.Mutex
		done []int64 // the inserts reported done
		wg   sync.WaitGroup
	)
	stop := time.Now().Add(1500 * time.Millisecond)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); time.Now().Before(stop); i++ {
				id := int64(g)*1_000_000 + i
				if _, err := p.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1)", id); err == nil {
					mu.Lock()
					done = append(done, id)
					mu.Unlock()
				}
			}
		}()
	}
	begins, accepted := 0, 0
	var firstErr error
	for time.Now().Before(stop) {
		time.Sleep(20 * time.Millisecond)
		begins++
		_, err := p.Exec(ctx, "BEGIN")
		switch {
		case err == nil:
			accepted++
		case firstErr == nil:
			firstErr = err
		}
	}
	wg.Wait()
	var inTable int64
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+tbl+" WHERE id = ANY($1)", done).Scan(&inTable); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d inserts reported done, %d in the table; %d raw BEGINs, %d accepted; first refusal: %v",
		len(done), inTable, begins, accepted, firstErr)
	if missing := int64(len(done)) - inTable; missing != 0 {
		t.Errorf("%d inserts reported done are missing from the table", missing)
	}
	if accepted != 0 {
		t.Errorf("%d of %d raw BEGINs given to Pool.Exec were run", accepted, begins)
	}
	if firstErr != nil && (!errors.Is(firstErr, ErrRoutedBlock) || !strings.Contains(firstErr.Error(), "Pool.Begin")) {
		t.Errorf("the refusal: %v; want ErrRoutedBlock, naming Pool.Begin", firstErr)
	}
}

// TestPoolRoutedBlockTexts: each routed entry point refuses a text that
// leaves its block open, before sending anything (the Pool's connection
// stays idle, outside any block), and routes one that ends its block.
func TestPoolRoutedBlockTexts(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=1")
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrRoutedBlock) {
			t.Errorf("%s: %v, want ErrRoutedBlock", what, err)
		}
	}
	_, err := p.Exec(ctx, "BEGIN")
	refused("Exec BEGIN", err)
	_, err = p.Exec(ctx, "start transaction isolation level serializable")
	refused("Exec START TRANSACTION", err)
	_, err = p.Exec(ctx, "BEGIN; SELECT 1; COMMIT; BEGIN")
	refused("Exec of a text that opens a second block", err)
	_, err = p.Query(ctx, "BEGIN")
	refused("Query BEGIN", err)
	var v int32
	refused("QueryRow BEGIN", p.QueryRow(ctx, "BEGIN").Scan(&v))
	var b Batch
	b.Queue("SELECT 1")
	b.Queue("BEGIN")
	br := p.SendBatch(ctx, &b)
	_, err = br.Exec()
	refused("SendBatch [SELECT 1, BEGIN]", err)
	br.Close()

	if _, err := p.Exec(ctx, "BEGIN; SELECT 1; COMMIT"); err != nil {
		t.Errorf("Exec of a text that ends its block: %v", err)
	}
	var ok Batch
	ok.Queue("BEGIN")
	ok.Queue("SELECT 1")
	ok.Queue("COMMIT")
	br = p.SendBatch(ctx, &ok)
	for i := range 3 {
		if _, err := br.Exec(); err != nil {
			t.Errorf("batch [BEGIN, SELECT 1, COMMIT], statement %d: %v", i, err)
		}
	}
	br.Close()
	if err := p.QueryRow(ctx, "SELECT 7").Scan(&v); err != nil || v != 7 {
		t.Errorf("routed statement after: %d, %v", v, err)
	}
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Release()
	if s := pc.TxStatus(); s != 'I' {
		t.Errorf("the Pool's connection is in a block: TxStatus %c", s)
	}
	// Raw transaction control on a connection of one's own stays allowed.
	if _, err := pc.Exec(ctx, "BEGIN"); err != nil {
		t.Errorf("BEGIN on an acquired connection: %v", err)
	}
	if _, err := pc.Exec(ctx, "COMMIT"); err != nil {
		t.Errorf("COMMIT on an acquired connection: %v", err)
	}
}
