package pgline

import (
	"context"
	"errors"
	"testing"
)

// TestBeginFunc: BeginFunc and BeginTxFunc commit when the function returns
// nil and roll back when it returns an error or panics, on a Conn, a Pool
// and a Tx (a savepoint).
func TestBeginFunc(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN(""))
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS txfunc; CREATE TABLE txfunc (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	p := newTestPool(t, "pool_max_conns=2")
	insert := func(id int) func(*Tx) error {
		return func(tx *Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO txfunc VALUES ($1)", id)
			return err
		}
	}
	boom := errors.New("boom")
	if err := BeginFunc(ctx, c, insert(1)); err != nil {
		t.Fatal(err)
	}
	if err := BeginFunc(ctx, p, insert(2)); err != nil {
		t.Fatal(err)
	}
	if err := BeginFunc(ctx, c, func(tx *Tx) error { insert(3)(tx); return boom }); !errors.Is(err, boom) {
		t.Fatalf("function error: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "panic in tx" {
				t.Fatalf("recovered %v", r)
			}
		}()
		BeginFunc(ctx, p, func(tx *Tx) error { insert(4)(tx); panic("panic in tx") })
	}()
	// A savepoint: the inner failure undoes only the inner insert.
	if err := BeginFunc(ctx, c, func(tx *Tx) error {
		if err := insert(5)(tx); err != nil {
			return err
		}
		if err := BeginFunc(ctx, tx, func(sp *Tx) error { insert(6)(sp); return boom }); !errors.Is(err, boom) {
			t.Errorf("savepoint: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A read-only transaction refuses the write (25006) and is rolled back.
	var pgErr *PgError
	if err := BeginTxFunc(ctx, p, TxOptions{ReadOnly: true}, insert(7)); !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Fatalf("read-only: %v", err)
	}
	rows, err := c.Query(ctx, "SELECT id FROM txfunc ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := CollectRows(rows, RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 || ids[0] != 1 || ids[1] != 2 || ids[2] != 5 {
		t.Fatalf("committed ids %v, want [1 2 5]", ids)
	}
	if st := p.Stat(); st.AcquiredConns != 0 {
		t.Fatalf("a connection is still held: %+v", st)
	}
}

// TestPoolAcquireFuncPingConfig: AcquireFunc releases the connection
// whatever the function returns; Ping reaches the server; Config is a
// copy.
func TestPoolAcquireFuncPingConfig(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPool(t, "pool_max_conns=2")
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	var pid int
	err := p.AcquireFunc(ctx, func(c *PoolConn) error {
		if st := p.Stat(); st.AcquiredConns != 1 {
			t.Errorf("inside AcquireFunc: %+v", st)
		}
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || pid == 0 {
		t.Fatalf("AcquireFunc: %v, pid %d", err, pid)
	}
	if st := p.Stat(); st.AcquiredConns != 0 {
		t.Fatalf("after AcquireFunc: %+v", st)
	}
	cfg := p.Config()
	if cfg.Pool.MaxConns != 2 || len(cfg.Hosts) == 0 {
		t.Fatalf("Config: %+v", cfg)
	}
	cfg.Hosts[0].Port = 1
	cfg.RuntimeParams["x"] = "y"
	if p.Config().Hosts[0].Port == 1 || p.Config().RuntimeParams["x"] == "y" {
		t.Fatal("changing Config's copy changed the pool's")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Ping(canceled); err == nil {
		t.Fatal("Ping with a canceled ctx succeeded")
	}
}
