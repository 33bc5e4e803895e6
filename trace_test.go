package pgline

import (
	"context"
	"errors"
	"io"
	"slices"
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

// orderTracer notes the order of its calls in a shared log.
type orderTracer struct {
	name string
	log  *[]string
	mu   *sync.Mutex
}

func (o orderTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context {
	o.mu.Lock()
	*o.log = append(*o.log, o.name+" start")
	o.mu.Unlock()
	return ctx
}

func (o orderTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {
	o.mu.Lock()
	*o.log = append(*o.log, o.name+" end")
	o.mu.Unlock()
}

// TestMultiTracer: every tracer of a MultiTracer sees every event, in
// order at the start and in reverse at the end, each ending with the
// context its own start returned (recordingTracer checks it), also
// when MultiTracers nest; nil tracers are left out.
func TestMultiTracer(t *testing.T) {
	a, b := &recordingTracer{}, &recordingTracer{}
	var mu sync.Mutex
	var log []string
	cfg, err := ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = MultiTracer(a, nil, MultiTracer(orderTracer{"p", &log, &mu}, orderTracer{"q", &log, &mu}, b))
	ctx := testCtx(t)
	c, err := ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, "SELECT $1::int", 1); err != nil {
		t.Fatal(err)
	}
	c.Exec(ctx, "SELECT 1/0")
	a.mu.Lock()
	b.mu.Lock()
	defer a.mu.Unlock()
	defer b.mu.Unlock()
	if len(a.ended) == 0 || len(a.ended) != len(b.ended) || a.starts != b.starts || a.bad != 0 || b.bad != 0 {
		t.Fatalf("a: %d ended, %d started, %d with another's context; b: %d, %d, %d", len(a.ended), a.starts, a.bad, len(b.ended), b.starts, b.bad)
	}
	for i := range a.ended {
		if a.ended[i].Kind != b.ended[i].Kind || a.ended[i].SQL != b.ended[i].SQL {
			t.Fatalf("event %d: a saw %v %q, b %v %q", i, a.ended[i].Kind, a.ended[i].SQL, b.ended[i].Kind, b.ended[i].SQL)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(log) != 4*len(a.ended) || !slices.Equal(log[:4], []string{"p start", "q start", "q end", "p end"}) {
		t.Fatalf("the nested tracers' calls: %q", log)
	}
}

// TestConnectTracesNoOwnStatements: the statements pgline runs itself at
// connect (the pooler check, target_session_attrs' checks) are not
// traced as the user's: a connect is one TraceConnect event.
func TestConnectTracesNoOwnStatements(t *testing.T) {
	tr := &recordingTracer{}
	cfg, err := ParseConfig(srv.DSN("target_session_attrs=read-write"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = tr
	c, err := ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, ev := range tr.ended {
		if ev.Kind != TraceConnect {
			t.Errorf("a connect traced a %v event: %q", ev.Kind, ev.SQL)
		}
	}
}

// TestBatchTraceNamesStatements: a batch's trace lists its statements and,
// when one fails, which.
func TestBatchTraceNamesStatements(t *testing.T) {
	tr := &recordingTracer{}
	cfg, err := ParseConfig(srv.DSN())
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
	sqls := []string{"SELECT 1", "SELECT 1/0", "SELECT 3"}
	for _, fail := range []bool{false, true} {
		b := &Batch{}
		for i, sql := range sqls {
			if i == 1 && !fail {
				sql = "SELECT 2"
			}
			b.Queue(sql)
		}
		c.SendBatch(ctx, b).Close()
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var batches []TraceEvent
	for _, ev := range tr.ended {
		if ev.Kind == TraceBatch {
			batches = append(batches, ev)
		}
	}
	if len(batches) != 2 {
		t.Fatalf("%d batch events, want 2", len(batches))
	}
	if ok, failed := batches[0], batches[1]; len(ok.Batch) != 3 || ok.Batch[1] != "SELECT 2" || ok.BatchFailed != -1 || ok.Err != nil ||
		!slices.Equal(failed.Batch, sqls) || failed.BatchFailed != 1 || pgCode(failed.Err) != "22012" {
		t.Fatalf("batch events: %+v / %+v", ok, failed)
	}
}
