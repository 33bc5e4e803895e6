package pgline

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/pool"
)

// TestPoolSlowServerNoDeadline: a server that answers its first connection
// only after the Pool's own bound on a background connection attempt (10s
// without connect_timeout) is slow, not down. A statement whose ctx has
// no deadline waits for the next attempt, as a connection without
// connect_timeout waits in libpq, instead of getting the bound's expiry,
// which is no outcome of its own (seen under load in the bench's
// rtt/sweep/pool100/G5000).
func TestPoolSlowServerNoDeadline(t *testing.T) {
	t.Parallel() // mostly waits (see ownClusters)
	if testing.Short() {
		t.Skip("waits for the Pool's 10s bound")
	}
	px := newTestProxy(t, srv.Addr, func(i int, _ net.Conn) bool {
		if i == 0 {
			time.Sleep(pool.DefaultConnectTimeout + 2*time.Second)
		}
		return true
	})
	p, err := NewPool(context.Background(), srv.DSN("host=127.0.0.1 port="+px.port()+" pool_max_conns=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	var n int
	err = p.QueryRow(context.Background(), "SELECT 42").Scan(&n)
	t.Logf("answered after %v: %d, %v", time.Since(start).Round(time.Millisecond), n, err)
	if err != nil || n != 42 {
		t.Fatalf("a statement without a deadline failed while the server was only slow: %v", err)
	}
}
