package pgline

import (
	"context"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// TestPoolSilentHostRecovers: host 0 is a proxy in front of a
// standby that first accepts TCP and never answers, then (after 7s, the
// host found down meanwhile) forwards new connections to the standby,
// leaving the first ones hung. The host's role check then succeeds and
// the standby view routes to it: its calls must not stall on the hung
// connection attempts made while it was silent.
func TestPoolSilentHostRecovers(t *testing.T) {
	P := startPrimary(t)
	S := startStandby(t, P, pgtest.StandbyOptions{Name: "silent_host_s"})
	var forward atomic.Bool
	px := newTestProxy(t, S.Addr, func(_ int, c net.Conn) bool {
		if !forward.Load() {
			io.Copy(io.Discard, c) // accepted, never answered
			return false
		}
		return true
	})
	before := runtime.NumGoroutine()
	port, _ := strconv.Atoi(px.port())
	dsn := hostsDSN([]int{port, P.Port}, P.User, P.Database, "application_name=silent_host", "pool_max_conns=2")
	cfg, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pool.HealthCheckPeriod = 500 * time.Millisecond
	p, err := NewPoolConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	anyv := p.Target("any")
	// Calls through "any" go to host 0 before its check: they start opens
	// that hang.
	for range 3 {
		_, err := timedCall(300*time.Millisecond, func(ctx context.Context) error {
			_, err := anyv.Exec(ctx, "SELECT 1")
			return err
		})
		t.Logf("any while silent: %v", err)
	}
	time.Sleep(7 * time.Second)
	h := p.Stat().Hosts[0]
	t.Logf("host 0 while silent: down=%v total=%d err=%v", h.Down, h.TotalConns, h.Err)
	forward.Store(true)
	// Wait for the role check to find host 0 a standby.
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if h := p.Stat().Hosts[0]; !h.Down && h.Role == HostStandby {
			break
		}
	}
	h = p.Stat().Hosts[0]
	t.Logf("host 0 after it answers: role=%v down=%v total=%d", h.Role, h.Down, h.TotalConns)
	sb := p.Target("standby")
	fails := 0
	for i := range 5 {
		var port int
		over, err := timedCall(2*time.Second, func(ctx context.Context) error {
			return sb.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port)
		})
		t.Logf("standby view call %d: over=%v port=%d err=%v", i, over.Round(time.Millisecond), port, err)
		if err != nil {
			fails++
		}
	}
	if fails > 0 {
		t.Errorf("%d of 5 calls on the standby view failed with the standby answering through host 0 (Stat host 0: %+v)", fails, p.Stat().Hosts[0])
	}
	p.Close()
	checkNoGoroutinesLeft(t, before)
}

// timedCall runs f with a ctx of deadline d and reports how long past
// the deadline it returned.
func timedCall(d time.Duration, f func(ctx context.Context) error) (over time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err = f(ctx)
	return time.Since(start) - d, err
}
