package pgline

// A statement with more parameters than the protocol can carry (Parse,
// Bind and ParameterDescription count them in 16 bits) is refused before
// anything of it is sent, and the connection stays usable; a protocol
// error is never SafeToRetry, so a Pool does not spread it.
//
// pgx refuses such a statement before sending it ("extended protocol
// limited to 65535 parameters") and keeps its connection.

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
)

// manyParamsCase is a statement over the parameter limit.
type manyParamsCase struct {
	name string
	sql  string
	args []any
}

// manyParamsCases: 70000 arguments for a text numbering 70000 parameters
// (each used, so that the server can type them), the same arguments for
// a text naming only $70000, and a text naming $70000 given one argument.
func manyParamsCases() []manyParamsCase {
	const n = 70000
	args := make([]any, n)
	var b strings.Builder
	b.WriteString("SELECT array_length(ARRAY[")
	for i := range args {
		args[i] = int32(i)
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("$" + strconv.Itoa(i+1) + "::int")
	}
	b.WriteString("], 1)")
	return []manyParamsCase{
		{"all-used", b.String(), args},
		{"highest-only", "SELECT $70000::int", args},
		{"text-only", "SELECT $70000::int", []any{int32(1)}},
	}
}

// checkManyParamsErr fails the test unless err is the refusal of a
// statement over the limit: naming the limit, not SafeToRetry.
func checkManyParamsErr(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "65535") || !strings.Contains(err.Error(), "70000") {
		t.Errorf("%s: got %v, want a refusal naming 70000 and the limit 65535", what, err)
		return
	}
	if session.SafeToRetry(err) {
		t.Errorf("%s: %v is SafeToRetry: the same call would fail again", what, err)
	}
	if isProtocolError(err) {
		t.Errorf("%s: %v: sent, answered with a protocol error", what, err)
	}
}

func TestTooManyParamsRefusedBeforeSending(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	pid := c.PID()
	for _, tc := range manyParamsCases() {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Exec(ctx, tc.sql, tc.args...)
			checkManyParamsErr(t, "Exec", err)
			rows, err := c.Query(ctx, tc.sql, tc.args...)
			if err == nil {
				rows.Close()
			}
			checkManyParamsErr(t, "Query", err)
			var v int
			checkManyParamsErr(t, "QueryRow", c.QueryRow(ctx, tc.sql, tc.args...).Scan(&v))
			b := &Batch{}
			b.Queue(tc.sql, tc.args...)
			checkManyParamsErr(t, "SendBatch", c.SendBatch(ctx, b).Close())
			if c.IsClosed() {
				t.Fatal("the connection closed")
			}
			if err := c.QueryRow(ctx, "SELECT 1").Scan(&v); err != nil || v != 1 {
				t.Fatalf("next query on the same Conn: %v, %d", err, v)
			}
		})
	}
	_, err := c.Prepare(ctx, "SELECT $70000::int")
	checkManyParamsErr(t, "Prepare", err)
	if c.PID() != pid || c.IsClosed() {
		t.Fatal("the connection was replaced or closed")
	}

	// In a transaction, the refusal leaves it usable: nothing was sent.
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, tc := range manyParamsCases() {
		_, err := tx.Exec(ctx, tc.sql, tc.args...)
		checkManyParamsErr(t, "Tx.Exec "+tc.name, err)
	}
	var v int
	if err := tx.QueryRow(ctx, "SELECT 2").Scan(&v); err != nil || v != 2 {
		t.Fatalf("next query in the Tx: %v, %d", err, v)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit after the refusals: %v", err)
	}
}

// countingTracer counts the statements traced with one SQL text.
type countingTracer struct {
	sql string
	n   atomic.Int64
}

func (ct *countingTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context {
	if ev.Kind == TraceStatement && ev.SQL == ct.sql {
		ct.n.Add(1)
	}
	return ctx
}

func (ct *countingTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {}

func TestPoolTooManyParamsKeepsConnection(t *testing.T) {
	ctx := testCtx(t)
	for _, tc := range manyParamsCases() {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(srv.DSN("pool_max_conns=4"))
			if err != nil {
				t.Fatal(err)
			}
			tr := &countingTracer{sql: tc.sql}
			cfg.Tracer = tr
			p, err := NewPoolConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var pid uint32
			if err := p.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			if st := p.Stat(); st.TotalConns != 1 {
				t.Fatalf("after one query: %d connections, want 1", st.TotalConns)
			}

			_, err = p.Exec(ctx, tc.sql, tc.args...)
			checkManyParamsErr(t, "Pool.Exec", err)
			rows, err := p.Query(ctx, tc.sql, tc.args...)
			if err == nil {
				rows.Close()
			}
			checkManyParamsErr(t, "Pool.Query", err)
			var v int
			checkManyParamsErr(t, "Pool.QueryRow", p.QueryRow(ctx, tc.sql, tc.args...).Scan(&v))

			// Each call was made once (traced at most once: the
			// arguments' count is refused before the trace starts).
			if n := tr.n.Load(); n > 3 {
				t.Errorf("the statement was traced %d times for 3 calls: sent again", n)
			}
			st := p.Stat()
			if st.TotalConns != 1 || st.OpeningConns != 0 {
				t.Errorf("after the refusals: %d connections (%d opening), want the 1 kept", st.TotalConns, st.OpeningConns)
			}
			var again uint32
			if err := p.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&again); err != nil {
				t.Fatal(err)
			}
			if again != pid {
				t.Errorf("the next query ran on backend %d, want the kept connection's %d", again, pid)
			}
		})
	}
}

// brokenDescribeServer is a fake server that answers every describe with
// a ParameterDescription whose count (1) disagrees with the OIDs it
// carries (2): "trailing bytes". It counts connections and Parse messages.
type brokenDescribeServer struct {
	conns, parses, queries atomic.Int64
	dsn                    string
}

func newBrokenDescribeServer(t *testing.T) *brokenDescribeServer {
	s := &brokenDescribeServer{}
	s.dsn = fakeServer(t, func(t *testing.T, c net.Conn) {
		if _, cancel, err := fakeStartup(c, nil); cancel || err != nil {
			return
		}
		s.conns.Add(1)
		c.Write(authOKReady())
		for {
			typ, _, err := wire.ReadFrontendMessage(c, false)
			if err != nil {
				return
			}
			switch typ {
			case 'P':
				s.parses.Add(1)
			case 'S':
				body := binary.BigEndian.AppendUint16(nil, 1)
				body = binary.BigEndian.AppendUint32(body, 23)
				body = binary.BigEndian.AppendUint32(body, 23)
				msg := append(rawMsg('1', 4, nil), rawMsg('t', uint32(4+len(body)), body)...)
				c.Write(msg)
			case 'Q': // a simple query (BEGIN): a CommandComplete without its NUL
				s.queries.Add(1)
				c.Write(rawMsg('C', 4+5, []byte("BEGIN")))
			case 'X':
				return
			}
		}
	})
	return s
}

func TestProtocolErrorNotSafeToRetry(t *testing.T) {
	ctx := testCtx(t)
	s := newBrokenDescribeServer(t)
	c := connect(t, s.dsn)
	_, err := c.Exec(ctx, "SELECT $1::int", 1)
	if !isProtocolError(err) || !strings.Contains(err.Error(), "ParameterDescription") {
		t.Fatalf("got %v, want a protocol error about the ParameterDescription", err)
	}
	if session.SafeToRetry(err) {
		t.Errorf("protocol error %v is SafeToRetry", err)
	}
	if !c.IsClosed() {
		t.Fatal("connection open after a protocol error")
	}
	// The connection's failure, as later calls get it, is not either.
	_, err = c.Exec(ctx, "SELECT $1::int", 1)
	if !errors.Is(err, ErrClosed) || session.SafeToRetry(err) {
		t.Errorf("call after the protocol error: %v (SafeToRetry %v), want ErrClosed, not SafeToRetry", err, session.SafeToRetry(err))
	}
}

func TestPoolDoesNotResendAfterProtocolError(t *testing.T) {
	ctx := testCtx(t)
	calls := map[string]func(p *Pool) error{
		"Exec": func(p *Pool) error {
			_, err := p.Exec(ctx, "SELECT $1::int", 1)
			return err
		},
		"Query": func(p *Pool) error {
			rows, err := p.Query(ctx, "SELECT $1::int", 1)
			if err == nil {
				rows.Close()
			}
			return err
		},
		"QueryRow": func(p *Pool) error {
			var v int
			return p.QueryRow(ctx, "SELECT $1::int", 1).Scan(&v)
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			s := newBrokenDescribeServer(t)
			p, err := NewPool(ctx, s.dsn+" pool_max_conns=4")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			err = call(p)
			if !isProtocolError(err) || session.SafeToRetry(err) {
				t.Errorf("got %v (SafeToRetry %v), want a protocol error, not SafeToRetry", err, session.SafeToRetry(err))
			}
			if n, m := s.parses.Load(), s.conns.Load(); n != 1 || m != 1 {
				t.Errorf("the server saw %d Parse messages on %d connections, want 1 on 1: the Pool sent it again", n, m)
			}
		})
	}
}

// A Pool's Begin whose BEGIN meets a protocol error is not made again on
// another connection either, although a BEGIN broken by a connection's
// end otherwise is (it has no effect that outlives its session): the next
// connection would break the same way.
func TestPoolBeginNotRetriedAfterProtocolError(t *testing.T) {
	ctx := testCtx(t)
	s := newBrokenDescribeServer(t)
	p, err := NewPool(ctx, s.dsn+" pool_max_conns=4")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tx, err := p.Begin(ctx)
	if err == nil {
		tx.Rollback(ctx)
		t.Fatal("Begin succeeded on a server whose reply to BEGIN is malformed")
	}
	if !isProtocolError(err) || session.SafeToRetry(err) {
		t.Errorf("got %v (SafeToRetry %v), want a protocol error, not SafeToRetry", err, session.SafeToRetry(err))
	}
	if n, m := s.queries.Load(), s.conns.Load(); n != 1 || m != 1 {
		t.Errorf("the server saw %d BEGINs on %d connections, want 1 on 1: the Pool began again", n, m)
	}
}

// Several statements queued on one connection when a protocol error ends
// it: those behind, never sent, get the connection's failure, which is
// not SafeToRetry either (a Pool would otherwise take them to another
// connection of the same server).
func TestProtocolErrorFailsQueuedNotSafeToRetry(t *testing.T) {
	ctx := testCtx(t)
	s := newBrokenDescribeServer(t)
	c := connect(t, s.dsn)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Exec(ctx, "SELECT $1::int + "+strconv.Itoa(i), 1)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || session.SafeToRetry(err) {
			t.Errorf("statement %d: %v (SafeToRetry %v), want an error, not SafeToRetry", i, err, session.SafeToRetry(err))
		}
	}
}
