package pgline

// The protocol version (min_protocol_version, max_protocol_version) and
// the cancel key it brings, against real servers: protocol 3.2 on
// PostgreSQL 18 (32-byte keys), 3.0 on 15 (NegotiateProtocolVersion) and
// through PgBouncer. A recording proxy checks the bytes: the version the
// StartupMessage asks, the key BackendKeyData gives and the CancelRequest
// that carries it. Hostile answers are in TestProtocolVersion_HostileServer.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtest"
)

// wireConn is one connection a recording proxy carried, read back.
type wireConn struct {
	startup uint32 // the version the StartupMessage asked; 0 when there was none
	cancel  []byte // the CancelRequest, whole, when the connection carried one
	server  []wireMsg
}

// wireMsg is one message from the server.
type wireMsg struct {
	typ  byte
	body []byte
}

// readWire reads what r carried, over a connection without TLS.
func readWire(t *testing.T, r *proxyRecord) wireConn {
	t.Helper()
	up, down := r.bytes()
	var w wireConn
	if len(up) >= 8 {
		n, code := binary.BigEndian.Uint32(up), binary.BigEndian.Uint32(up[4:])
		switch {
		case code == wire.CancelRequestCode && int(n) <= len(up):
			w.cancel = up[:n]
		case code>>16 == 3:
			w.startup = code
		}
	}
	for len(down) >= 5 {
		n := int(binary.BigEndian.Uint32(down[1:]))
		if n < 4 || 1+n > len(down) {
			break
		}
		w.server = append(w.server, wireMsg{down[0], down[5 : 1+n]})
		down = down[1+n:]
	}
	return w
}

// keyLen is the length of the secret key of the connection's
// BackendKeyData, or -1.
func (w wireConn) keyLen() int {
	for _, m := range w.server {
		if m.typ == wire.MsgBackendKeyData {
			return len(m.body) - 4
		}
	}
	return -1
}

// sent reports whether the server sent a message of type typ, and the
// first one's body.
func (w wireConn) sent(typ byte) ([]byte, bool) {
	for _, m := range w.server {
		if m.typ == typ {
			return m.body, true
		}
	}
	return nil, false
}

// wireConns reads back every connection px carried.
func wireConns(t *testing.T, px *testProxy) []wireConn {
	t.Helper()
	var ws []wireConn
	for _, r := range px.records() {
		ws = append(ws, readWire(t, r))
	}
	return ws
}

// sessionsAsked returns the connections px carried whose StartupMessage
// asked a version, in the order they were accepted.
func sessionsAsked(t *testing.T, px *testProxy) []wireConn {
	var ws []wireConn
	for _, w := range wireConns(t, px) {
		if w.startup != 0 {
			ws = append(ws, w)
		}
	}
	return ws
}

// cancelsSent waits up to 5 s for px to have carried a CancelRequest and
// returns those it carried.
func cancelsSent(t *testing.T, px *testProxy) [][]byte {
	t.Helper()
	var cancels [][]byte
	waitFor(t, 5*time.Second, func() (bool, error) {
		cancels = cancels[:0]
		for _, w := range wireConns(t, px) {
			if w.cancel != nil {
				cancels = append(cancels, w.cancel)
			}
		}
		return len(cancels) > 0, nil
	})
	return cancels
}

// execer runs a statement: a *Conn or a *Pool.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (CommandTag, error)
}

// cancelSleep runs SELECT pg_sleep(10), marked with marker, through q
// with a ctx deadline of 300 ms: the call ends at once with ctx's error
// (or the server's 57014), and the sleep is gone from s within 3 s, so
// the server took the CancelRequest pgline sent for it (one with a wrong
// key is ignored, and the sleep would run on for 10 s).
func cancelSleep(t *testing.T, s *pgtest.Server, q execer, marker string) {
	t.Helper()
	mon := connect(t, s.DSN())
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := q.Exec(ctx, "SELECT pg_sleep(10) /* "+marker+" */")
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the statement took %v after its ctx deadline of 300 ms", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) && pgCode(err) != "57014" {
		t.Fatalf("err %v, want ctx's deadline or 57014", err)
	}
	if !waitFor(t, 3*time.Second, func() (bool, error) {
		var n int
		err := mon.QueryRow(testCtx(t), "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()", marker).Scan(&n)
		return n == 0, err
	}) {
		t.Fatal("the sleep still runs 3 s after its ctx deadline: the CancelRequest did not cancel it")
	}
}

// TestProtocolVersion_32OnPostgres18: on PostgreSQL 18 with
// max_protocol_version=3.2 (or latest) the StartupMessage asks 3.2, the
// server's BackendKeyData holds a 32-byte key, and a ctx deadline's
// CancelRequest carries it whole (8+4+32 bytes), for a Conn and a Pool,
// and over TLS; by default (as in libpq) the startup asks 3.0 and the key
// is 4 bytes.
func TestProtocolVersion_32OnPostgres18(t *testing.T) {
	s := serverAtLeast(t, 18)
	for _, tc := range []struct {
		name, dsn string
		asked     uint32
		keyLen    int
	}{
		{"max 3.2", "max_protocol_version=3.2", wire.ProtocolVersion32, 32},
		{"max latest", "max_protocol_version=latest", wire.ProtocolVersion32, 32},
		{"min 3.2", "min_protocol_version=3.2", wire.ProtocolVersion32, 32},
		{"default", "", wire.ProtocolVersion30, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			px := newRecordingProxy(t, s.Addr)
			c := connect(t, s.DSN("host=127.0.0.1", "port="+px.port(), tc.dsn))
			ws := sessionsAsked(t, px)
			if len(ws) != 1 || ws[0].startup != tc.asked {
				t.Fatalf("startups %+v, want one asking %#x", ws, tc.asked)
			}
			if _, ok := ws[0].sent(wire.MsgNegotiateProtocolVersion); ok {
				t.Error("PostgreSQL 18 sent NegotiateProtocolVersion")
			}
			if n := ws[0].keyLen(); n != tc.keyLen {
				t.Fatalf("BackendKeyData's key is %d bytes, want %d", n, tc.keyLen)
			}
			cancelSleep(t, s, c, "proto18-"+strings.ReplaceAll(tc.name, " ", ""))
			cancels := cancelsSent(t, px)
			if len(cancels) != 1 || len(cancels[0]) != 8+4+tc.keyLen {
				t.Fatalf("CancelRequests %x, want one of %d bytes", cancels, 8+4+tc.keyLen)
			}
			k, _ := ws[0].sent(wire.MsgBackendKeyData)
			if !bytes.Equal(cancels[0][8:], k) {
				t.Fatalf("the CancelRequest carries %x, want BackendKeyData's process ID and key %x", cancels[0][8:], k)
			}
			var one int
			if err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("after the cancel: %d, %v", one, err)
			}
		})
	}
	t.Run("pool", func(t *testing.T) {
		px := newRecordingProxy(t, s.Addr)
		p, err := NewPool(testCtx(t), s.DSN("host=127.0.0.1", "port="+px.port(), "max_protocol_version=3.2", "pool_max_conns=2"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		cancelSleep(t, s, p, "proto18-pool")
		for _, c := range cancelsSent(t, px) {
			if len(c) != 8+4+32 {
				t.Fatalf("the Pool's CancelRequest is %d bytes, want %d", len(c), 8+4+32)
			}
		}
		for _, w := range sessionsAsked(t, px) {
			if w.startup != wire.ProtocolVersion32 || w.keyLen() != 32 {
				t.Fatalf("a Pool connection asked %#x and got a key of %d bytes, want 3.2 and 32", w.startup, w.keyLen())
			}
		}
	})
	t.Run("TLS", func(t *testing.T) {
		c := connect(t, s.DSN("sslmode=require", "max_protocol_version=3.2"))
		if len(c.s.SecretKey) != 32 || !c.s.TLS {
			t.Fatalf("key of %d bytes, TLS %v: want 32 over TLS", len(c.s.SecretKey), c.s.TLS)
		}
		cancelSleep(t, s, c, "proto18-tls")
	})
}

// TestProtocolVersion_NegotiatedDownOnPostgres15: PostgreSQL 15 answers a
// StartupMessage asking 3.2 with NegotiateProtocolVersion naming 3.0, and
// the session goes on at 3.0: a 4-byte key, which its CancelRequest
// carries; with min_protocol_version=3.2 the connect fails, naming it and
// both versions (and is not tried again without TLS).
func TestProtocolVersion_NegotiatedDownOnPostgres15(t *testing.T) {
	if v := srv.Version() / 10000; v >= 18 {
		t.Skipf("the shared cluster is PostgreSQL %d, which speaks 3.2", v)
	}
	px := newRecordingProxy(t, srv.Addr)
	c := connect(t, srv.DSN("host=127.0.0.1", "port="+px.port(), "max_protocol_version=3.2"))
	ws := sessionsAsked(t, px)
	if len(ws) != 1 || ws[0].startup != wire.ProtocolVersion32 {
		t.Fatalf("startups %+v, want one asking 3.2", ws)
	}
	v, ok := ws[0].sent(wire.MsgNegotiateProtocolVersion)
	if !ok || binary.BigEndian.Uint32(v) != wire.ProtocolVersion30 {
		t.Fatalf("NegotiateProtocolVersion %x (sent %v), want one naming 3.0", v, ok)
	}
	if n := ws[0].keyLen(); n != 4 {
		t.Fatalf("key of %d bytes, want 4", n)
	}
	cancelSleep(t, srv, c, "proto15-negotiated")
	if cancels := cancelsSent(t, px); len(cancels) != 1 || len(cancels[0]) != 16 {
		t.Fatalf("CancelRequests %x, want one of 16 bytes", cancels)
	}

	t.Run("min 3.2", func(t *testing.T) {
		for _, dsn := range []string{srv.DSN("min_protocol_version=3.2", "sslmode=prefer"), srv.DSN("min_protocol_version=latest")} {
			c, err := Connect(testCtx(t), dsn)
			if err == nil {
				c.Close()
				t.Fatalf("%s: connected to PostgreSQL %d", dsn, srv.Version())
			}
			msg := err.Error()
			if !strings.Contains(msg, "min_protocol_version is 3.2") || !strings.Contains(msg, "protocol version 3.0") {
				t.Errorf("%s: %v, want an error naming min_protocol_version and the versions", dsn, err)
			}
			if strings.Contains(msg, "then without TLS") {
				t.Errorf("%s: %v: tried again without TLS", dsn, err)
			}
		}
	})
}

// TestProtocolVersion_ThroughPgBouncer: with max_protocol_version=3.2 a
// connection through PgBouncer works at 3.0: PgBouncer before 1.22 (as
// Debian's 1.18) refuses the StartupMessage asking 3.2 ("bad packet
// header"), and pgline asks 3.0 again on a new connection; a newer one
// answers NegotiateProtocolVersion. The cancel goes through PgBouncer
// with its 4-byte key. With min_protocol_version=3.2 the connect fails
// naming it.
func TestProtocolVersion_ThroughPgBouncer(t *testing.T) {
	b := startTestPgBouncer(t, "transaction")
	px := newRecordingProxy(t, b.Addr)
	c := connect(t, b.DSN("host=127.0.0.1", "port="+px.port(), "max_protocol_version=3.2"))
	ws := sessionsAsked(t, px)
	if len(ws) == 0 || ws[0].startup != wire.ProtocolVersion32 {
		t.Fatalf("startups %+v, want the first asking 3.2", ws)
	}
	last := ws[len(ws)-1]
	if n := last.keyLen(); n != 4 {
		t.Fatalf("the session's key is %d bytes, want 4 (protocol 3.0)", n)
	}
	if len(ws) == 2 {
		// PgBouncer refused 3.2; the second connection asked 3.0.
		if _, refused := ws[0].sent(wire.MsgErrorResponse); !refused || ws[1].startup != wire.ProtocolVersion30 {
			t.Fatalf("startups %+v: want a refusal of 3.2, then 3.0", ws)
		}
		t.Log("PgBouncer refused the StartupMessage asking 3.2; the second connection asked 3.0")
	} else if _, ok := last.sent(wire.MsgNegotiateProtocolVersion); len(ws) != 1 || !ok {
		t.Fatalf("startups %+v: want one answered with NegotiateProtocolVersion, or a refusal and a second asking 3.0", ws)
	} else {
		t.Log("PgBouncer answered NegotiateProtocolVersion")
	}
	var n int
	if err := c.QueryRow(testCtx(t), "SELECT $1::int + 1", 41).Scan(&n); err != nil || n != 42 {
		t.Fatalf("through PgBouncer: %d, %v", n, err)
	}
	cancelSleep(t, srv, c, "proto-pgbouncer")
	for _, cr := range cancelsSent(t, px) {
		if len(cr) != 16 {
			t.Fatalf("CancelRequest of %d bytes, want 16", len(cr))
		}
	}

	t.Run("min 3.2", func(t *testing.T) {
		c, err := Connect(testCtx(t), b.DSN("min_protocol_version=3.2"))
		if err == nil {
			c.Close()
			t.Fatal("connected through PgBouncer with min_protocol_version=3.2")
		}
		if !strings.Contains(err.Error(), "min_protocol_version is 3.2") {
			t.Fatalf("%v, want an error naming min_protocol_version", err)
		}
	})
}

// TestProtocolVersion_ConfigByHand: a Config filled in by hand takes the
// same values as the DSN keys (empty: the defaults), and a bad one fails
// the connect before any host is dialed, naming the field.
func TestProtocolVersion_ConfigByHand(t *testing.T) {
	cfg, err := ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	var dialed atomic.Bool
	port, _ := fakeListen(t, func(*testing.T, net.Conn) { dialed.Store(true) })
	for _, tc := range []struct{ min, max, want string }{
		{"3.1", "", `invalid Config.MinProtocolVersion "3.1"`},
		{"", "3", `invalid Config.MaxProtocolVersion "3"`},
		{"3.2", "3.0", "not below MinProtocolVersion"},
	} {
		cc := *cfg
		cc.MinProtocolVersion, cc.MaxProtocolVersion = tc.min, tc.max
		cc.Hosts = []HostConfig{{Host: "127.0.0.1", Port: uint16(port)}}
		c, err := ConnectConfig(testCtx(t), &cc)
		if err == nil {
			c.Close()
			t.Fatalf("%+v: connected", tc)
		}
		if !strings.Contains(err.Error(), tc.want) || dialed.Load() {
			t.Errorf("min %q max %q: %v (dialed %v), want an error naming %s before any dial", tc.min, tc.max, err, dialed.Load(), tc.want)
		}
	}
	for _, v := range [][2]string{{"", ""}, {"", "3.2"}, {"3.0", "latest"}} {
		cfg.MinProtocolVersion, cfg.MaxProtocolVersion = v[0], v[1]
		c, err := ConnectConfig(testCtx(t), cfg)
		if err != nil {
			t.Fatalf("min %q max %q: %v", v[0], v[1], err)
		}
		c.Close()
	}
}

// TestProtocolVersion_HostileServer: what a server must not answer about
// the protocol version or the cancel key (libpq 18 refuses the same) fails
// the connect with a ProtocolError; a NegotiateProtocolVersion repeated
// identically (PgBouncer 1.22 to 1.25 may) is taken once.
func TestProtocolVersion_HostileServer(t *testing.T) {
	npv := func(version uint32, options ...string) []byte {
		b, _ := wire.AppendNegotiateProtocolVersion(nil, wire.NegotiateProtocolVersion{Version: version, Unrecognized: options})
		return b
	}
	authOK, _ := wire.AppendAuthentication(nil, wire.Authentication{Type: wire.AuthOK})
	key := func(n int) []byte {
		return wire.AppendBackendKeyData(nil, wire.BackendKeyData{ProcessID: 42, SecretKey: bytes.Repeat([]byte{7}, n)})
	}
	ready := wire.AppendReadyForQuery(nil, 'I')
	join := func(msgs ...[]byte) []byte { return bytes.Join(msgs, nil) }
	const v30, v32 = wire.ProtocolVersion30, wire.ProtocolVersion32
	for _, tc := range []struct {
		name, max string
		answer    []byte
		ok        bool // the connect succeeds, with a key of keyLen bytes
		keyLen    int
	}{
		{"version above the one asked", "3.2", npv(3<<16 | 3), false, 0},
		{"version 3.1", "3.2", npv(3<<16 | 1), false, 0},
		{"version 2.0", "3.2", npv(2 << 16), false, 0},
		{"major 4", "3.2", npv(4 << 16), false, 0},
		{"no change", "3.2", npv(v32), false, 0},
		{"options pgline did not ask for", "3.2", npv(v30, "_pq_.x"), false, 0},
		{"negotiation when 3.0 was asked", "3.0", npv(v30), false, 0},
		{"second, different negotiation", "3.2", join(npv(v30), npv(v30, "_pq_.x")), false, 0},
		{"negotiation after BackendKeyData", "3.2", join(authOK, key(32), npv(v30)), false, 0},
		{"key of 3 bytes", "3.2", join(authOK, key(3)), false, 0},
		{"key of 257 bytes", "3.2", join(authOK, key(257)), false, 0},
		{"key of 32 bytes after 3.0 was negotiated", "3.2", join(npv(v30), authOK, key(32)), false, 0},
		{"key of 32 bytes when 3.0 was asked", "3.0", join(authOK, key(32)), false, 0},
		{"key of 8 bytes when 3.0 was asked", "3.0", join(authOK, key(8)), false, 0},
		{"3.0 negotiated", "3.2", join(npv(v30), authOK, key(4), ready), true, 4},
		{"negotiation repeated identically", "3.2", join(npv(v30), authOK, npv(v30), key(4), ready), true, 4},
		{"key of 256 bytes", "3.2", join(authOK, key(256), ready), true, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
				if readStartup(c) != nil {
					return
				}
				c.Write(tc.answer)
				waitClosed(c)
			})
			c, err := Connect(testCtx(t), dsn+" max_protocol_version="+tc.max)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if len(c.s.SecretKey) != tc.keyLen || c.PID() != 42 {
					t.Fatalf("PID %d, key of %d bytes; want 42 and %d", c.PID(), len(c.s.SecretKey), tc.keyLen)
				}
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("%v, want a ProtocolError", err)
			}
		})
	}
}
