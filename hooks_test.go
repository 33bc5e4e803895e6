package pgline

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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

// TestPoolConfigFields: the pool settings are Config fields as well as DSN
// keys: set after ParseConfig they take effect; settings no Pool can run
// with are refused by NewPoolConfig.
func TestPoolConfigFields(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=8"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pool.MaxConns = 1
	cfg.Pool.MaxPipeline = 1
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	held, err := p.Query(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	// One connection, one statement at a time: the next one waits.
	done := make(chan error, 1)
	go func() { _, err := p.Exec(ctx, "SELECT 2"); done <- err }()
	for p.Stat().Waiting != 1 {
		if ctx.Err() != nil {
			t.Fatalf("the statement never waited: %+v", p.Stat())
		}
		time.Sleep(time.Millisecond)
	}
	if st := p.Stat(); st.MaxConns != 1 || st.TotalConns != 1 {
		t.Fatalf("stat %+v", st)
	}
	held.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, bad := range []PoolConfig{{MaxConns: 2, MinConns: 3}, {MaxConns: -1}, {MaxPipeline: -5}} {
		c := *cfg
		c.Pool = bad
		if p, err := NewPoolConfig(ctx, &c); err == nil {
			p.Close()
			t.Errorf("NewPoolConfig with %+v: no error", bad)
		}
	}
}

// TestPoolHookPanics: a PrepareConn or AfterRelease that panics leaves no
// connection counted held (the Pool went on counting one, and Close then
// waited for ever); the panic reaches the caller.
func TestPoolHookPanics(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	var panicPrepare, panicRelease atomic.Bool
	cfg.PrepareConn = func(ctx context.Context, c *Conn) (bool, error) {
		if panicPrepare.Swap(false) {
			panic("prepare")
		}
		return true, nil
	}
	cfg.AfterRelease = func(c *Conn) bool {
		if panicRelease.Swap(false) {
			panic("release")
		}
		return true
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	recovered := func(f func()) (r any) {
		defer func() { r = recover() }()
		f()
		return nil
	}
	panicPrepare.Store(true)
	if r := recovered(func() { p.Acquire(ctx) }); r != "prepare" {
		t.Fatalf("PrepareConn's panic: %v", r)
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("after PrepareConn panicked: %v (%+v)", err, p.Stat())
	}
	panicRelease.Store(true)
	if r := recovered(c.Release); r != "release" {
		t.Fatalf("AfterRelease's panic: %v", r)
	}
	if st := p.Stat(); st.AcquiredConns != 0 {
		t.Fatalf("a connection is still counted held: %+v", st)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatalf("Close did not return: %+v", p.Stat())
	}
}

// TestPoolOwnsItsConfig: changing the Config after NewPoolConfig changes
// nothing in the Pool (it shared the Hosts slice and RuntimeParams map).
func TestPoolOwnsItsConfig(t *testing.T) {
	ctx := testCtx(t)
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=2"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cfg.Hosts[0].Port = 1
	cfg.RuntimeParams["search_path"] = "nowhere"
	var path string
	if err := p.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&path); err != nil || path == "nowhere" {
		t.Fatalf("after changing the caller's Config: %q, %v", path, err)
	}
}
