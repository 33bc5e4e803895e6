package pgline

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestConnectHooks: BeforeConnect changes the Config of one connection
// only; AfterConnect runs on every new connection, a Pool's too, and its
// error closes the connection and is the connect's error.
func TestConnectHooks(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("user=scramuser"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.PassFile = ""
	var before, after atomic.Int32
	cfg.BeforeConnect = func(ctx context.Context, cc *Config) error {
		before.Add(1)
		cc.Password = pwSCRAM // a rotating secret, say
		cc.RuntimeParams["application_name"] = "hooked"
		return nil
	}
	cfg.AfterConnect = func(ctx context.Context, c *Conn) error {
		after.Add(1)
		_, err := c.Exec(ctx, "SET search_path = hooked_schema, public")
		return err
	}
	c, err := ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var path, app string
	if err := c.QueryRow(ctx, "SELECT current_setting('search_path'), current_setting('application_name')").Scan(&path, &app); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if path != "hooked_schema, public" || app != "hooked" {
		t.Fatalf("search_path %q, application_name %q", path, app)
	}
	if cfg.Password != "" || cfg.RuntimeParams["application_name"] != "" {
		t.Fatalf("BeforeConnect changed the caller's Config: %q %q", cfg.Password, cfg.RuntimeParams["application_name"])
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&path); err != nil || path != "hooked_schema, public" {
		t.Fatalf("through the Pool: %q, %v", path, err)
	}
	if before.Load() != 2 || after.Load() != 2 {
		t.Fatalf("hooks ran %d and %d times, want 2 each", before.Load(), after.Load())
	}
	cfg2 := *cfg
	cfg2.AfterConnect = func(ctx context.Context, c *Conn) error { return errors.New("no types") }
	if _, err := ConnectConfig(ctx, &cfg2); err == nil || !strings.Contains(err.Error(), "AfterConnect: no types") {
		t.Fatalf("AfterConnect's error: %v", err)
	}
	cfg2.BeforeConnect = func(ctx context.Context, cc *Config) error { return errors.New("no token") }
	if _, err := ConnectConfig(ctx, &cfg2); err == nil || !strings.Contains(err.Error(), "BeforeConnect: no token") {
		t.Fatalf("BeforeConnect's error: %v", err)
	}
}

// TestPoolPrepareConnAfterRelease: PrepareConn sees each connection before
// Acquire or Begin hands it out (false: another is taken; an error: the
// call fails, nothing held), and AfterRelease after Release or a
// transaction's end (false: the connection is closed).
func TestPoolPrepareConnAfterRelease(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=2"))
	if err != nil {
		t.Fatal(err)
	}
	var refuseNext, failNext, keep atomic.Bool
	var prepared, released atomic.Int32
	keep.Store(true)
	cfg.PrepareConn = func(ctx context.Context, c *Conn) (bool, error) {
		prepared.Add(1)
		if failNext.Swap(false) {
			return false, errors.New("not ready")
		}
		return !refuseNext.Swap(false), nil
	}
	cfg.AfterRelease = func(c *Conn) bool {
		released.Add(1)
		return keep.Load()
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	refuseNext.Store(true)
	c, err = p.Acquire(ctx) // the first is refused and closed; another is opened
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if prepared.Load() != 3 || released.Load() != 2 {
		t.Fatalf("PrepareConn %d times, AfterRelease %d times; want 3 and 2", prepared.Load(), released.Load())
	}
	failNext.Store(true)
	if _, err := p.Begin(ctx); err == nil || !strings.Contains(err.Error(), "PrepareConn: not ready") {
		t.Fatalf("Begin with PrepareConn failing: %v", err)
	}
	keep.Store(false)
	if err := BeginFunc(ctx, p, func(tx *Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st := p.Stat(); st.AcquiredConns != 0 || st.TotalConns != 0 {
		t.Fatalf("after AfterRelease said no: %+v", st)
	}
}
