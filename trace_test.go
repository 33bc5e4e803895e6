package pgline

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
)

// recordingTracer keeps every ended event, and checks that each end
// receives the context its start returned.
type recordingTracer struct {
	mu     sync.Mutex
	ended  []TraceEvent
	starts int
	bad    int
}

type traceKey struct{}

func (r *recordingTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context {
	r.mu.Lock()
	r.starts++
	r.mu.Unlock()
	return context.WithValue(ctx, traceKey{}, ev)
}

func (r *recordingTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Value(traceKey{}) != ev {
		r.bad++
	}
	r.ended = append(r.ended, *ev)
}

func TestTracer(t *testing.T) {
	tr := &recordingTracer{}
	cfg, err := ParseConfig(srv.DSN("pool_max_conns=2"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = tr
	ctx := testCtx(t)
	c, err := ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(ctx, "SELECT generate_series(1, $1::int)", 3)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	c.Exec(ctx, "SELECT 1/0")
	b := &Batch{}
	b.Queue("SELECT $1::int", 1)
	c.SendBatch(ctx, b).Close()
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE trace_copy (n int4)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyFrom(ctx, Identifier{"trace_copy"}, []string{"n"}, CopyFromRows([][]any{{1}, {2}})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyTo(ctx, io.Discard, "COPY trace_copy TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pc.Release()
	p.Close()

	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.bad != 0 || tr.starts != len(tr.ended) {
		t.Fatalf("%d starts, %d ends, %d with the wrong context", tr.starts, len(tr.ended), tr.bad)
	}
	find := func(kind TraceKind, sql string) *TraceEvent {
		for i := range tr.ended {
			if e := &tr.ended[i]; e.Kind == kind && (sql == "" || e.SQL == sql) {
				return e
			}
		}
		t.Fatalf("no %d event for %q", kind, sql)
		return nil
	}
	if e := find(TraceConnect, ""); e.Err != nil || e.Host == "" || e.Duration <= 0 || e.Conn != c || e.Database != cfg.Database {
		t.Fatalf("connect event %+v", e)
	}
	if e := find(TraceStatement, "SELECT generate_series(1, $1::int)"); e.Tag.String() != "SELECT 3" || len(e.Args) != 1 || e.Err != nil ||
		e.Conn != c || e.Host != e.Conn.label || e.Database == "" {
		t.Fatalf("query event %+v", e)
	}
	if e := find(TraceCopy, `COPY "trace_copy" ("n") FROM STDIN (FORMAT binary)`); e.Tag.RowsAffected() != 2 || e.Err != nil || e.Conn != c {
		t.Fatalf("CopyFrom event %+v", e)
	}
	if e := find(TraceCopy, "COPY trace_copy TO STDOUT"); e.Tag.RowsAffected() != 2 || e.Err != nil {
		t.Fatalf("CopyTo event %+v", e)
	}
	var pgErr *PgError
	if e := find(TraceStatement, "SELECT 1/0"); !errors.As(e.Err, &pgErr) {
		t.Fatalf("failed statement event %+v", e)
	}
	if e := find(TraceBatch, ""); e.BatchLen != 1 || e.Err != nil {
		t.Fatalf("batch event %+v", e)
	}
	if e := find(TraceAcquire, ""); e.Err != nil || e.Host == "" || e.Conn == nil {
		t.Fatalf("acquire event %+v", e)
	}
}
