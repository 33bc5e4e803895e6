package session

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
	"github.com/pgline/pgline/pgtype"
)

// srv is the cluster the engine's connection-level tests dial.
var srv *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m, pgtest.Options{}, &srv)) }

// testCtx is a ctx that ends with the test, or after 30 s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialSession opens a session to srv as the root's connect does, without
// TLS: Init, StartReading, Startup, Started. It is closed when the test
// ends.
func dialSession(t *testing.T) *Session {
	t.Helper()
	ctx := testCtx(t)
	var d net.Dialer
	netConn, err := d.DialContext(ctx, "tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	s := new(Session)
	s.Init(netConn, SessionOpts{
		DialCancel: func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", srv.Addr()) },
		Types:      pgtype.NewMap(),
		CacheMode:  CachePrepare,
		ShareSyncs: true,
	})
	s.StartReading(0, 0)
	netConn.SetDeadline(time.Now().Add(10 * time.Second))
	err = s.Startup(StartupConfig{
		Params: []string{"user", srv.User, "database", srv.Database, "client_encoding", "UTF8"},
		User:   srv.User,
	})
	if err != nil {
		netConn.Close()
		t.Fatalf("startup: %v", err)
	}
	s.Started(netConn)
	t.Cleanup(func() { s.Close() })
	return s
}
