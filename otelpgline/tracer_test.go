package otelpgline_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/otelpgline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// statementAttrs are the attributes every statement span of h's
// connection c has; op "" for none.
func (h *harness) statementAttrs(c *pgline.Conn, op string) map[string]string {
	m := map[string]string{
		"db.system.name":    "postgresql",
		"db.namespace":      h.cfg.Database,
		"db.operation.name": op,
		"server.address":    h.addr,
		"server.port":       strconv.Itoa(h.port),
		"pgline.pid":        strconv.Itoa(int(c.PID())),
	}
	if op == "" {
		delete(m, "db.operation.name")
	}
	return m
}

// metricAttrs are the attributes of db.client.operation.duration for op.
func (h *harness) metricAttrs(op string) map[string]string {
	return map[string]string{
		"db.system.name":    "postgresql",
		"db.namespace":      h.cfg.Database,
		"db.operation.name": op,
		"server.address":    h.addr,
		"server.port":       strconv.Itoa(h.port),
	}
}

// checkChild fails unless s is a child of parent.
func checkChild(t *testing.T, s sdktrace.ReadOnlySpan, parent trace.Span) {
	t.Helper()
	p := parent.SpanContext()
	if s.Parent().SpanID() != p.SpanID() || s.SpanContext().TraceID() != p.TraceID() {
		t.Errorf("span %q: parent %v in trace %v, want %v in %v", s.Name(),
			s.Parent().SpanID(), s.SpanContext().TraceID(), p.SpanID(), p.TraceID())
	}
}

// checkOK fails unless s ended without error, lasting as long as the
// event did.
func checkOK(t *testing.T, s sdktrace.ReadOnlySpan, kind trace.SpanKind) {
	t.Helper()
	if s.Status().Code != codes.Unset || len(s.Events()) != 0 {
		t.Errorf("span %q: status %v, events %v", s.Name(), s.Status(), s.Events())
	}
	if s.SpanKind() != kind {
		t.Errorf("span %q: kind %v, want %v", s.Name(), s.SpanKind(), kind)
	}
	if d := s.EndTime().Sub(s.StartTime()); d <= 0 || d > 10*time.Second {
		t.Errorf("span %q lasted %v", s.Name(), d)
	}
}

func TestStatementSpan(t *testing.T) {
	h := newHarness(t, nil)
	ctx := testCtx(t)
	c := h.connect(t)
	h.reset(t)
	ctx, parent := h.tp.Tracer("test").Start(ctx, "parent")
	const sql = "SELECT generate_series(1, $1::int)"
	rows, err := c.Query(ctx, sql, 3)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n != 3 {
		t.Fatalf("%d rows, %v", n, err)
	}
	parent.End()

	s := h.span(t, "SELECT "+h.cfg.Database)
	checkOK(t, s, trace.SpanKindClient)
	checkChild(t, s, parent)
	checkAttrs(t, s.Name(), s.Attributes(), with(h.statementAttrs(c, "SELECT"),
		"db.query.text", sql, "db.response.returned_rows", "3"))

	rm := h.collect(t)
	dps := histogram(t, rm, "db.client.operation.duration")
	if len(dps) != 1 || dps[0].Count != 1 {
		t.Fatalf("duration points %+v", dps)
	}
	checkAttrs(t, "duration", dps[0].Attributes.ToSlice(), h.metricAttrs("SELECT"))
	if want := s.EndTime().Sub(s.StartTime()).Seconds(); dps[0].Sum != want {
		t.Errorf("duration %v, span lasted %v", dps[0].Sum, want)
	}
	m, ok := findMetric(rm, "db.client.response.returned_rows")
	if !ok {
		t.Fatal("no db.client.response.returned_rows")
	}
	if rp := m.Data.(metricdata.Histogram[int64]).DataPoints; len(rp) != 1 || rp[0].Sum != 3 || rp[0].Count != 1 {
		t.Errorf("returned_rows points %+v", rp)
	}
}

func TestFailingStatement(t *testing.T) {
	h := newHarness(t, nil)
	c := h.connect(t)
	h.reset(t)
	_, err := c.Exec(testCtx(t), "SELECT 1/0")
	var pe *pgline.PgError
	if !errors.As(err, &pe) || pe.Code != "22012" {
		t.Fatalf("err %v", err)
	}
	s := h.span(t, "SELECT "+h.cfg.Database)
	if s.Status().Code != codes.Error || s.Status().Description != err.Error() {
		t.Errorf("status %+v, want Error %q", s.Status(), err)
	}
	checkAttrs(t, s.Name(), s.Attributes(), with(h.statementAttrs(c, "SELECT"),
		"db.query.text", "SELECT ?/?", // literals replaced: no arguments
		"db.response.status_code", "22012", "error.type", "22012"))
	ev := s.Events()
	if len(ev) != 1 || ev[0].Name != "exception" {
		t.Fatalf("events %+v", ev)
	}
	checkAttrs(t, "exception", ev[0].Attributes, map[string]string{
		"exception.type": "*pgline.PgError", "exception.message": err.Error(),
	})
	dps := histogram(t, h.collect(t), "db.client.operation.duration")
	if len(dps) != 1 || dps[0].Count != 1 {
		t.Fatalf("duration points %+v", dps)
	}
	checkAttrs(t, "duration", dps[0].Attributes.ToSlice(), with(h.metricAttrs("SELECT"),
		"db.response.status_code", "22012", "error.type", "22012"))
}

func TestQueryTextOptions(t *testing.T) {
	const sql = "SELECT 'abc' || $$def$$, 42 -- n"
	for _, tc := range []struct {
		name string
		opts []otelpgline.Option
		want string // "" for none
	}{
		{"default", nil, "SELECT ? || ?, ? -- n"},
		{"raw", []otelpgline.Option{otelpgline.WithRawQueryText(true)}, sql},
		{"off", []otelpgline.Option{otelpgline.WithQueryText(false)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, tc.opts...)
			c := h.connect(t)
			h.reset(t)
			if _, err := c.Exec(testCtx(t), sql); err != nil {
				t.Fatal(err)
			}
			s := h.span(t, "SELECT "+h.cfg.Database)
			got, ok := attrMap(s.Attributes())["db.query.text"]
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("db.query.text %q (present %v), want %q", got, ok, tc.want)
			}
		})
	}
}

func TestRowCounts(t *testing.T) {
	h := newHarness(t, nil)
	ctx := testCtx(t)
	c := h.connect(t)
	h.reset(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE otel_rows (n int4)"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql      string
		args     []any
		op       string
		returned string // db.response.returned_rows, "" for none
		affected string // pgline.rows_affected, "" for none
	}{
		{"INSERT INTO otel_rows SELECT generate_series(1, $1::int)", []any{4}, "INSERT", "", "4"},
		{"UPDATE otel_rows SET n = n + 1 WHERE n > $1 RETURNING n", []any{2}, "UPDATE", "2", ""},
		{"delete from otel_rows where n = $1", []any{5}, "delete", "", "1"},
		{"WITH d AS (SELECT 1) SELECT n FROM otel_rows, d", nil, "SELECT", "3", ""},
		{"SET search_path = public", nil, "SET", "", ""},
		{"CREATE TEMP TABLE otel_rows2 AS SELECT n FROM otel_rows", nil, "CREATE", "", "3"},
		{"SELECT n INTO TEMP otel_rows3 FROM otel_rows WHERE n > $1", []any{1}, "SELECT", "", "2"},
	} {
		if _, err := c.Exec(ctx, tc.sql, tc.args...); err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		spans := h.ended(tc.op + " " + h.cfg.Database)
		if len(spans) == 0 {
			t.Fatalf("%s: no span", tc.sql)
		}
		a := attrMap(spans[len(spans)-1].Attributes())
		if a["db.response.returned_rows"] != tc.returned || a["pgline.rows_affected"] != tc.affected {
			t.Errorf("%s: returned %q affected %q, want %q and %q", tc.sql,
				a["db.response.returned_rows"], a["pgline.rows_affected"], tc.returned, tc.affected)
		}
	}
	// Two statements in one text: no operation name, no counts.
	if _, err := c.Exec(ctx, "SELECT 1; SELECT 2"); err != nil {
		t.Fatal(err)
	}
	s := h.span(t, h.cfg.Database)
	checkAttrs(t, s.Name(), s.Attributes(), with(h.statementAttrs(c, ""), "db.query.text", "SELECT ?; SELECT ?"))
}

func TestBatchSpan(t *testing.T) {
	h := newHarness(t, nil)
	ctx := testCtx(t)
	c := h.connect(t)
	h.reset(t)
	ctx, parent := h.tp.Tracer("test").Start(ctx, "parent")
	b := &pgline.Batch{}
	b.Queue("SELECT $1::int", 1)
	b.Queue("SELECT $1::text", "x")
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	parent.End()
	s := h.span(t, "BATCH "+h.cfg.Database)
	checkOK(t, s, trace.SpanKindClient)
	checkChild(t, s, parent)
	checkAttrs(t, s.Name(), s.Attributes(), with(h.statementAttrs(c, "BATCH"), "db.operation.batch.size", "2"))
	dps := histogram(t, h.collect(t), "db.client.operation.duration")
	if len(dps) != 1 || dps[0].Count != 1 {
		t.Fatalf("duration points %+v", dps)
	}
	checkAttrs(t, "duration", dps[0].Attributes.ToSlice(), h.metricAttrs("BATCH"))
}

func TestCopySpans(t *testing.T) {
	h := newHarness(t, nil)
	ctx := testCtx(t)
	c := h.connect(t)
	h.reset(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE otel_copy (n int4)"); err != nil {
		t.Fatal(err)
	}
	ctx, parent := h.tp.Tracer("test").Start(ctx, "parent")
	n, err := c.CopyFrom(ctx, pgline.Identifier{"otel_copy"}, []string{"n"},
		pgline.CopyFromRows([][]any{{1}, {2}, {3}}))
	if err != nil || n != 3 {
		t.Fatalf("CopyFrom: %d, %v", n, err)
	}
	var out strings.Builder
	if _, err := c.CopyTo(ctx, &out, "COPY otel_copy TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	parent.End()
	if out.String() != "1\n2\n3\n" {
		t.Fatalf("CopyTo wrote %q", out.String())
	}
	spans := h.ended("COPY " + h.cfg.Database)
	if len(spans) != 2 {
		t.Fatalf("%d COPY spans", len(spans))
	}
	for _, s := range spans {
		checkOK(t, s, trace.SpanKindClient)
		checkChild(t, s, parent)
	}
	checkAttrs(t, "CopyFrom", spans[0].Attributes(), with(h.statementAttrs(c, "COPY"),
		"db.query.text", `COPY "otel_copy" ("n") FROM STDIN (FORMAT binary)`, "pgline.rows_affected", "3"))
	checkAttrs(t, "CopyTo", spans[1].Attributes(), with(h.statementAttrs(c, "COPY"),
		"db.query.text", "COPY otel_copy TO STDOUT", "db.response.returned_rows", "3"))
	dps := histogram(t, h.collect(t), "db.client.operation.duration")
	var copies uint64
	for _, dp := range dps {
		if v, _ := dp.Attributes.Value("db.operation.name"); v.AsString() == "COPY" {
			copies += dp.Count
		}
	}
	if copies != 2 {
		t.Errorf("%d COPY durations recorded, want 2", copies)
	}
}

func TestConnectSpan(t *testing.T) {
	h := newHarness(t, nil)
	c := h.connect(t)
	s := h.span(t, "connect")
	checkOK(t, s, trace.SpanKindClient)
	checkAttrs(t, s.Name(), s.Attributes(), map[string]string{
		"db.system.name": "postgresql", "db.namespace": h.cfg.Database,
		"server.address": h.addr, "server.port": strconv.Itoa(h.port),
		"pgline.pid": strconv.Itoa(int(c.PID())),
	})
	pool := h.addr + ":" + strconv.Itoa(h.port) + "/" + h.cfg.Database
	dps := histogram(t, h.collect(t), "db.client.connection.create_time")
	if len(dps) != 1 || dps[0].Count != 1 || dps[0].Sum <= 0 {
		t.Fatalf("create_time points %+v", dps)
	}
	checkAttrs(t, "create_time", dps[0].Attributes.ToSlice(), map[string]string{"db.client.connection.pool.name": pool})

	// A database that does not exist: the server says 3D000.
	bad := newHarness(t, []string{"dbname=otel_no_such_db"})
	_, err := pgline.ConnectConfig(testCtx(t), bad.cfg)
	var pe *pgline.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" {
		t.Fatalf("err %v", err)
	}
	s = bad.span(t, "connect")
	if s.Status().Code != codes.Error || len(s.Events()) != 1 {
		t.Errorf("status %+v, events %+v", s.Status(), s.Events())
	}
	checkAttrs(t, s.Name(), s.Attributes(), map[string]string{
		"db.system.name": "postgresql", "db.namespace": "otel_no_such_db",
		"server.address": bad.addr, "server.port": strconv.Itoa(bad.port),
		"db.response.status_code": "3D000", "error.type": "3D000",
	})
	if _, ok := findMetric(bad.collect(t), "db.client.connection.create_time"); ok {
		t.Error("create_time recorded for a failed connect")
	}
}

func TestAcquireSpan(t *testing.T) {
	h := newHarness(t, []string{"pool_max_conns=1"})
	p := h.pool(t)
	ctx, parent := h.tp.Tracer("test").Start(testCtx(t), "parent")
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parent.End()
	s := h.span(t, "acquire")
	checkOK(t, s, trace.SpanKindInternal)
	checkChild(t, s, parent)
	checkAttrs(t, s.Name(), s.Attributes(), map[string]string{
		"db.system.name": "postgresql", "db.namespace": h.cfg.Database,
		"server.address": h.addr, "server.port": strconv.Itoa(h.port),
		"pgline.pid": strconv.Itoa(int(pc.PID())),
	})
	pool := h.addr + ":" + strconv.Itoa(h.port) + "/" + h.cfg.Database
	dps := histogram(t, h.collect(t), "db.client.connection.wait_time")
	if len(dps) != 1 || dps[0].Count != 1 {
		t.Fatalf("wait_time points %+v", dps)
	}
	checkAttrs(t, "wait_time", dps[0].Attributes.ToSlice(), map[string]string{"db.client.connection.pool.name": pool})

	// The only connection is held: an Acquire with a deadline times out.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a full pool: %v", err)
	}
	pc.Release()
	failed := h.ended("acquire")
	if len(failed) != 2 {
		t.Fatalf("%d acquire spans", len(failed))
	}
	s = failed[1]
	if s.Status().Code != codes.Error {
		t.Errorf("status %+v", s.Status())
	}
	if et := attrMap(s.Attributes())["error.type"]; et != "context.DeadlineExceeded" {
		t.Errorf("error.type %q", et)
	}
	m, ok := findMetric(h.collect(t), "db.client.connection.timeouts")
	if !ok {
		t.Fatal("no db.client.connection.timeouts")
	}
	if dp := m.Data.(metricdata.Sum[int64]).DataPoints; len(dp) != 1 || dp[0].Value != 1 {
		t.Errorf("timeouts %+v", dp)
	}
}

// TestTraceStartContext calls the Tracer as pgline does: TraceStart's
// ctx carries the new span, a child of the caller's, and TraceEnd ends it
// and no other.
func TestTraceStartContext(t *testing.T) {
	h := newHarness(t, nil, otelpgline.WithAttributes(attribute.String("app.tier", "web")))
	tr := h.cfg.Tracer
	ctx, parent := h.tp.Tracer("test").Start(context.Background(), "parent")
	ev := &pgline.TraceEvent{Kind: pgline.TraceStatement, SQL: "VALUES ($1)", Args: []any{1},
		Database: "app", Host: "db.example:6543", Start: time.Now()}
	sctx := tr.TraceStart(ctx, ev)
	span := trace.SpanFromContext(sctx)
	if !span.IsRecording() || span.SpanContext().SpanID() == parent.SpanContext().SpanID() {
		t.Fatal("TraceStart's ctx does not carry a new span")
	}
	ev.Duration = 5 * time.Millisecond
	tr.TraceEnd(ctx, ev) // not TraceStart's ctx: the parent must not end
	if !parent.IsRecording() || !span.IsRecording() {
		t.Fatal("TraceEnd with a foreign ctx ended a span")
	}
	tr.TraceEnd(sctx, ev)
	if span.IsRecording() {
		t.Fatal("TraceEnd did not end the span")
	}
	s := h.span(t, "VALUES app")
	checkChild(t, s, parent)
	if d := s.EndTime().Sub(s.StartTime()); d != 5*time.Millisecond {
		t.Errorf("span lasted %v, the event 5ms", d)
	}
	checkAttrs(t, s.Name(), s.Attributes(), map[string]string{
		"db.system.name": "postgresql", "db.namespace": "app", "db.operation.name": "VALUES",
		"db.query.text": "VALUES ($1)", "server.address": "db.example", "server.port": "6543",
		"app.tier": "web",
	})
	// Both TraceEnd calls recorded the duration.
	dps := histogram(t, h.collect(t), "db.client.operation.duration")
	if len(dps) != 1 || dps[0].Count != 2 {
		t.Fatalf("duration points %+v", dps)
	}
	checkAttrs(t, "duration", dps[0].Attributes.ToSlice(), map[string]string{
		"db.system.name": "postgresql", "db.namespace": "app", "db.operation.name": "VALUES",
		"server.address": "db.example", "server.port": "6543", "app.tier": "web",
	})
}

func TestWithoutSpans(t *testing.T) {
	h := newHarness(t, []string{"pool_max_conns=1"},
		otelpgline.WithoutSpans(pgline.TraceAcquire, pgline.TraceConnect), otelpgline.WithPoolName("main"))
	p := h.pool(t)
	pc, err := p.Acquire(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(testCtx(t), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	pc.Release()
	for _, name := range []string{"connect", "acquire"} {
		if n := len(h.ended(name)); n != 0 {
			t.Errorf("%d %s spans", n, name)
		}
	}
	if s := h.ended("SELECT " + h.cfg.Database); len(s) == 0 || attrMap(s[len(s)-1].Attributes())["db.query.text"] != "SELECT ?" {
		t.Errorf("no span of the statement: %v", spanNames(h.spans.Ended()))
	}
	rm := h.collect(t)
	for _, name := range []string{"db.client.connection.create_time", "db.client.connection.wait_time"} {
		dps := histogram(t, rm, name)
		if len(dps) != 1 || dps[0].Count != 1 {
			t.Fatalf("%s points %+v", name, dps)
		}
		checkAttrs(t, name, dps[0].Attributes.ToSlice(), map[string]string{"db.client.connection.pool.name": "main"})
	}
}

// TestArgsNeverRecorded runs statements whose arguments hold secrets, some
// failing with messages that quote them, and looks for the secrets in
// every span and data point.
func TestArgsNeverRecorded(t *testing.T) {
	h := newHarness(t, nil)
	ctx := testCtx(t)
	c := h.connect(t)
	h.reset(t)
	secrets := []string{"s3cr3t-alpha", "s3cr3t-beta", "s3cr3t-gamma", "s3cr3t-delta", "98765432198765"}
	var s string
	if err := c.QueryRow(ctx, "SELECT $1::text", secrets[0]).Scan(&s); err != nil || s != secrets[0] {
		t.Fatalf("%q, %v", s, err)
	}
	// invalid input syntax for type integer: "s3cr3t-beta"
	if _, err := c.Exec(ctx, "SELECT $1::int", secrets[1]); err == nil || !strings.Contains(err.Error(), secrets[1]) {
		t.Fatalf("the server's message does not quote the argument: %v", err)
	}
	b := &pgline.Batch{}
	b.Queue("SELECT $1::text", secrets[2])
	b.Queue("SELECT $1::text", secrets[2])
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT @v::text", pgline.NamedArgs{"v": secrets[3]}); err != nil {
		t.Fatal(err)
	}
	// value "98765432198765" is out of range for type integer
	if _, err := c.Exec(ctx, "SELECT $1::text::int4", int64(98765432198765)); err == nil {
		t.Fatal("no error")
	}

	var texts []string
	for _, sp := range h.spans.Ended() {
		texts = append(texts, sp.Name(), sp.Status().Description)
		for _, a := range sp.Attributes() {
			texts = append(texts, string(a.Key)+"="+a.Value.Emit())
		}
		for _, e := range sp.Events() {
			for _, a := range e.Attributes {
				texts = append(texts, string(a.Key)+"="+a.Value.Emit())
			}
		}
	}
	rm := h.collect(t)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					texts = append(texts, dp.Attributes.Encoded(attribute.DefaultEncoder()))
				}
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					texts = append(texts, dp.Attributes.Encoded(attribute.DefaultEncoder()))
				}
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, secret := range secrets {
		if strings.Contains(all, secret) {
			t.Errorf("argument %q recorded:\n%s", secret, all)
		}
	}
	// The failures are still told: the message, without the value.
	want := []string{`invalid input syntax for type integer: "?"`, `value "?" is out of range for type integer`}
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no %q in:\n%s", w, all)
		}
	}
}

// TestPoolerSpan calls the Tracer as a connection that found a transaction
// pooler does.
func TestPoolerSpan(t *testing.T) {
	h := newHarness(t, nil)
	ev := &pgline.TraceEvent{Kind: pgline.TracePooler, Reason: "the server process ID differs",
		Host: "bouncer:6432", Database: "app", Start: time.Now()}
	h.cfg.Tracer.TraceEnd(h.cfg.Tracer.TraceStart(context.Background(), ev), ev)
	s := h.span(t, "pooler")
	if s.SpanKind() != trace.SpanKindInternal || s.Parent().IsValid() || s.Status().Code != codes.Unset {
		t.Errorf("kind %v, parent %v, status %v", s.SpanKind(), s.Parent(), s.Status())
	}
	checkAttrs(t, s.Name(), s.Attributes(), map[string]string{
		"db.system.name": "postgresql", "db.namespace": "app",
		"server.address": "bouncer", "server.port": "6432",
		"pgline.pooler.reason": "the server process ID differs",
	})
	if rm := h.collect(t); len(rm.ScopeMetrics) != 0 && len(rm.ScopeMetrics[0].Metrics) != 0 {
		t.Errorf("metrics recorded: %+v", rm.ScopeMetrics[0].Metrics)
	}
}

// TestSampledOut: a sampler that drops every span leaves the metrics.
func TestSampledOut(t *testing.T) {
	h := newHarness(t, nil)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(h.spans))
	h.cfg.Tracer = otelpgline.NewTracer(otelpgline.WithTracerProvider(tp), otelpgline.WithMeterProvider(h.mp))
	c := h.connect(t)
	if _, err := c.Exec(testCtx(t), "SELECT 1/0"); err == nil {
		t.Fatal("no error")
	}
	if n := len(h.spans.Ended()); n != 0 {
		t.Errorf("%d spans recorded", n)
	}
	var failed uint64
	for _, dp := range histogram(t, h.collect(t), "db.client.operation.duration") {
		if v, _ := dp.Attributes.Value("error.type"); v.AsString() == "22012" {
			failed += dp.Count
		}
	}
	if failed != 1 {
		t.Errorf("%d failed statements measured, want 1", failed)
	}
}
