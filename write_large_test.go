package pgline

// Large values written by many goroutines on one Conn (partial writes,
// flushers, TLS flushers), mixed with transactions and COPY FROM STDIN:
// each result is the caller's own.

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// md5Hex is the md5 of s in hex, as PostgreSQL's md5() returns it.
func md5Hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// largeValueOp runs one operation of kind k for goroutine g, step i,
// and checks its result is the caller's own: md5 of a large unique value
// (Query or simple protocol), a transaction, a COPY FROM STDIN.
func largeValueOp(ctx context.Context, c *Conn, table string, g, i int, rng *rand.Rand, withCopy bool) error {
	id := g*10000 + i
	val := fmt.Sprintf("%d:", id) + strings.Repeat(string(rune('A'+rng.IntN(26))), rng.IntN(400<<10))
	k := rng.IntN(6)
	if !withCopy && k == 4 {
		k = 0
	}
	switch k {
	case 0, 1:
		var got string
		var gotID int
		if err := c.QueryRow(ctx, "SELECT md5($1::text), $2::int", val, id).Scan(&got, &gotID); err != nil {
			return err
		}
		if got != md5Hex(val) || gotID != id {
			return fmt.Errorf("md5 %s id %d, want %s id %d: another caller's reply", got, gotID, md5Hex(val), id)
		}
	case 2:
		var got string
		if err := c.QueryRow(ctx, "SELECT $1::text", val[:min(len(val), 2000)]).Scan(&got); err != nil {
			return err
		}
		if got != val[:min(len(val), 2000)] {
			return fmt.Errorf("echo mismatch")
		}
	case 3:
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.Background())
		if _, err := tx.Exec(ctx, "INSERT INTO "+table+" VALUES ($1, $2)", id, val); err != nil {
			return err
		}
		var got string
		if err := tx.QueryRow(ctx, "SELECT md5(v) FROM "+table+" WHERE id = $1", id).Scan(&got); err != nil {
			return err
		}
		if got != md5Hex(val) {
			return fmt.Errorf("tx: md5 %s, want %s", got, md5Hex(val))
		}
		return tx.Commit(ctx)
	case 4:
		rows := [][]any{{id, val}, {-id, "x"}}
		n, err := c.CopyFrom(ctx, Identifier{table}, []string{"id", "v"}, CopyFromRows(rows))
		if err != nil {
			return err
		}
		if n != 2 {
			return fmt.Errorf("copy: %d rows", n)
		}
		var got string
		if err := c.QueryRow(ctx, "SELECT md5(v) FROM "+table+" WHERE id = $1", id).Scan(&got); err != nil {
			return err
		}
		if got != md5Hex(val) {
			return fmt.Errorf("copy: md5 %s, want %s", got, md5Hex(val))
		}
	case 5:
		tag, err := c.Exec(ctx, "SELECT md5('"+val+"') WHERE md5('"+val+"') = '"+md5Hex(val)+"'")
		if err != nil {
			return err
		}
		if tag.String() != "SELECT 1" {
			return fmt.Errorf("simple: tag %q, want SELECT 1", tag)
		}
	}
	return nil
}

// TestWriteLargeValuesOwnResults: many goroutines on one Conn send values up to
// 400 KiB (partial writes, flushers, TLS flushers), mixed with
// transactions and COPY FROM STDIN; each result is the caller's own.
// Then the same with ctxs that end at random moments: a result is the
// caller's own or its own ctx's error.
func TestWriteLargeValuesOwnResults(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	for name, dsn := range transportDSNs() {
		for _, withDeadline := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/deadline=%v", name, withDeadline), func(t *testing.T) {
				largeValueStorm(t, connect(t, dsn), "write_own_"+name, 16, 10, 99, withDeadline)
			})
		}
	}
}

// TestWriteLargeValuesPgBouncer: the same through PgBouncer (transaction
// pooling): large values from many goroutines, each result its own.
func TestWriteLargeValuesPgBouncer(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	c := connect(t, b.DSN("statement_cache_mode=describe"))
	largeValueStorm(t, c, "write_own_bouncer", 12, 8, 5, false)
}

// largeValueStorm runs ops operations of largeValueOp from each of
// goroutines goroutines on c, on table (created afresh), under ctxs that
// end at random moments when withDeadline: each result is the caller's
// own, or its own ctx's error. The connection works afterwards.
func largeValueStorm(t *testing.T, c *Conn, table string, goroutines, ops int, seed uint64, withDeadline bool) {
	t.Helper()
	if _, err := c.Exec(testCtx(t), "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+"(id int, v text)"); err != nil {
		t.Fatal(err)
	}
	defer deadlockWatchdog(t, c, 25*time.Second)()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var timeouts int
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), seed))
			for i := range ops {
				ctx, cancel := context.Background(), func() {}
				if withDeadline {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(5+rng.IntN(150))*time.Millisecond)
				}
				err := largeValueOp(ctx, c, table, g, i, rng, !withDeadline)
				cancel()
				if withDeadline && err != nil {
					if e := ownOutcomeErr(ctx, err); e != nil {
						t.Errorf("goroutine %d op %d: %v", g, i, e)
						return
					}
					mu.Lock()
					timeouts++
					mu.Unlock()
					continue
				}
				if err != nil {
					t.Errorf("goroutine %d op %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var v int
	if err := c.QueryRow(testCtx(t), "SELECT $1::int", 777).Scan(&v); err != nil || v != 777 {
		t.Fatalf("after: %d %v", v, err)
	}
	if withDeadline {
		t.Logf("%d ops ended by their ctx", timeouts)
	}
}
