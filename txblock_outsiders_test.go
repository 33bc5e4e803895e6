package pgline

// Statements of other goroutines on a Conn that a Tx holds never run
// inside the Tx's block, and the Tx's statements always do, also when the
// Tx's statements, Commits and Rollbacks are given up as their ctx ends.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// TestTxOutsidersNeverInBlock: other goroutines' statements on the Conn
// never run inside a Tx, and the Tx's statements always do (checked by
// txid_current).
func TestTxOutsidersNeverInBlock(t *testing.T) {
	ctx := testCtx(t)
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	outside := map[int64]bool{}
	var bad []string
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var x int64
				var err error
				switch i % 3 {
				case 0:
					err = c.QueryRow(ctx, "SELECT txid_current()").Scan(&x)
				case 1:
					err = c.QueryRow(ctx, "SELECT txid_current() + $1", 0).Scan(&x)
				case 2:
					var s string
					s, err = c.queryScalar(ctx, "SELECT txid_current()")
					fmt.Sscan(s, &x)
				}
				if err != nil {
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
					continue
				}
				mu.Lock()
				if outside[x] {
					bad = append(bad, fmt.Sprintf("txid %d seen twice outside", x))
				}
				outside[x] = true
				mu.Unlock()
			}
		}(g)
	}
	var txids []int64
	for round := 0; round < 60; round++ {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var first int64
		if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&first); err != nil {
			t.Fatal(err)
		}
		var iwg sync.WaitGroup
		for k := 0; k < 4; k++ {
			iwg.Add(1)
			go func(k int) {
				defer iwg.Done()
				var x int64
				var err error
				if k%2 == 0 {
					err = tx.QueryRow(ctx, "SELECT txid_current()").Scan(&x)
				} else {
					err = tx.QueryRow(ctx, "SELECT txid_current() + $1", 0).Scan(&x)
				}
				if err != nil || x != first {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("tx stmt: txid %d want %d err %v", x, first, err))
					mu.Unlock()
				}
			}(k)
		}
		iwg.Wait()
		if round%2 == 0 {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		txids = append(txids, first)
	}
	close(stop)
	wg.Wait()
	for _, x := range txids {
		if outside[x] {
			t.Errorf("an outside statement ran in transaction %d", x)
		}
	}
	for i, b := range bad {
		if i > 10 {
			break
		}
		t.Error(b)
	}
}

// TestTxOutsidersCtxEndsStorm: transactions with given-up statements,
// Commits and Rollbacks whose ctx ends, on a Conn shared with goroutines
// inserting outside: every outsider's successful insert persists (it
// never ran inside a rolled back transaction), and a nil Commit keeps
// every statement of the transaction that succeeded.
func TestTxOutsidersCtxEndsStorm(t *testing.T) {
	storm(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	c, err := Connect(ctx, srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tbl := testTable(t, ctx, c, "(id bigint, who text)")
	var next atomic.Int64
	var mu sync.Mutex
	outOK := map[int64]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := next.Add(1)
				var err error
				if id%2 == 0 {
					_, err = c.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, 'out')", id)
				} else {
					_, err = c.Exec(ctx, "INSERT INTO "+tbl+" SELECT "+strconv.FormatInt(id, 10)+", 'out'")
				}
				if err == nil {
					mu.Lock()
					outOK[id] = true
					mu.Unlock()
				}
			}
		}(g)
	}
	type txRes struct {
		ids      []int64
		ok       []bool
		commit   error
		doCommit bool
	}
	var txs []txRes
	for round := 0; round < 80; round++ {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var r txRes
		var rmu sync.Mutex
		var iwg sync.WaitGroup
		for k := 0; k < 3; k++ {
			id := next.Add(1)
			iwg.Add(1)
			go func() {
				defer iwg.Done()
				sctx, cancel := context.WithTimeout(ctx, time.Duration(5+rand.Intn(40))*time.Millisecond)
				defer cancel()
				_, err := tx.Exec(sctx, "INSERT INTO "+tbl+" SELECT $1, 'tx' FROM pg_sleep($2::float8)", id, float64(rand.Intn(10))/1000)
				rmu.Lock()
				r.ids = append(r.ids, id)
				r.ok = append(r.ok, err == nil)
				rmu.Unlock()
			}()
		}
		iwg.Wait()
		ectx, ecancel := context.WithTimeout(ctx, time.Duration(rand.Intn(20))*time.Millisecond)
		r.doCommit = round%3 != 0
		if r.doCommit {
			r.commit = tx.Commit(ectx)
		} else {
			r.commit = tx.Rollback(ectx)
		}
		ecancel()
		txs = append(txs, r)
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	time.Sleep(200 * time.Millisecond)
	present := map[int64]string{}
	rows, err := c.Query(ctx, "SELECT id, who FROM "+tbl)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var who string
		rows.Scan(&id, &who)
		present[id] = who
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	fails := 0
	for id := range outOK {
		if present[id] != "out" {
			t.Errorf("outside insert %d succeeded but is gone (ran inside a rolled back transaction?)", id)
			fails++
			if fails > 10 {
				break
			}
		}
	}
	var committed, failed int
	for i, r := range txs {
		anyPresent := false
		for j, id := range r.ids {
			if present[id] == "tx" {
				anyPresent = true
			}
			if r.doCommit && r.commit == nil && r.ok[j] && present[id] != "tx" {
				t.Errorf("tx %d: Commit nil, statement ok, row %d missing", i, id)
			}
			if r.doCommit && r.commit == nil && !r.ok[j] && present[id] == "tx" {
				t.Errorf("tx %d: Commit nil kept row %d of a statement whose caller got an error", i, id)
			}
		}
		if anyPresent && (!r.doCommit || r.commit != nil && (session.SafeToRetry(r.commit) || errors.Is(r.commit, ErrTxRolledBack))) {
			t.Errorf("tx %d (commit=%v): rows present though %v", i, r.doCommit, r.commit)
		}
		if r.doCommit && r.commit == nil {
			committed++
		} else if r.doCommit {
			failed++
		}
	}
	t.Logf("commits ok %d failed %d; outside ok %d", committed, failed, len(outOK))
}
