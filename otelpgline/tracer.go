package otelpgline

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/pgline/pgline"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Attributes of pgline's own, beside the semantic conventions' ones.
const (
	// PIDKey is the backend process ID of the connection (pg_backend_pid(),
	// pg_stat_activity.pid), on every span whose connection is known.
	PIDKey = attribute.Key("pgline.pid")
	// RowsAffectedKey is the row count of a command that wrote rows and
	// returned none: INSERT, UPDATE, DELETE and MERGE without RETURNING,
	// COPY FROM, CREATE TABLE … AS, SELECT … INTO.
	RowsAffectedKey = attribute.Key("pgline.rows_affected")
	// PoolerReasonKey says what showed a transaction pooler (the "pooler"
	// span).
	PoolerReasonKey = attribute.Key("pgline.pooler.reason")
)

// NewTracer returns a pgline.Tracer, for Config.Tracer, that makes
// OpenTelemetry spans and metrics of pgline's events following the
// database semantic conventions; the package documentation lists them.
// Its options are WithTracerProvider, WithMeterProvider, WithQueryText,
// WithRawQueryText, WithPoolName, WithAttributes and WithoutSpans.
// Statement arguments are never recorded.
//
// The Tracer is safe for concurrent use, and may serve several Configs.
func NewTracer(opts ...Option) pgline.Tracer {
	c := newConfig(opts)
	t := &tracer{
		cfg: c,
		tr:  c.tp.Tracer(scope, trace.WithSchemaURL(semconv.SchemaURL)),
	}
	m := c.mp.Meter(scope, metric.WithSchemaURL(semconv.SchemaURL))
	t.duration = float64Histogram(m, "db.client.operation.duration", "s",
		"Duration of database client operations.",
		0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10)
	t.returned = int64Histogram(m, "db.client.response.returned_rows", "{row}",
		"The actual number of records returned by the database operation.",
		1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
	t.createTime = float64Histogram(m, "db.client.connection.create_time", "s",
		"The time it took to create a new connection.",
		0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10)
	t.waitTime = float64Histogram(m, "db.client.connection.wait_time", "s",
		"The time it took to obtain an open connection from the pool.",
		0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10)
	t.timeouts = int64Counter(m, "db.client.connection.timeouts", "{timeout}",
		"The number of connection timeouts that have occurred trying to obtain a connection from the pool.")
	return t
}

// tracer is the Tracer of NewTracer.
type tracer struct {
	cfg        config
	tr         trace.Tracer
	duration   metric.Float64Histogram // statements, batches, COPY
	returned   metric.Int64Histogram   // rows returned, where known
	createTime metric.Float64Histogram // connects that succeeded
	waitTime   metric.Float64Histogram // acquisitions that succeeded
	timeouts   metric.Int64Counter     // acquisitions past their ctx's deadline
}

// eventKey is the context key of the *event TraceStart began.
type eventKey struct{}

// event is what TraceStart keeps for TraceEnd.
type event struct {
	ev   *pgline.TraceEvent // the event this is for
	span trace.Span         // nil when spans of the kind are off
	info sqlInfo            // statements and COPY
	op   string             // db.operation.name, or ""
}

// newEvent reads ev's operation name.
func newEvent(ev *pgline.TraceEvent) *event {
	e := &event{ev: ev}
	switch ev.Kind {
	case pgline.TraceStatement, pgline.TraceCopy:
		e.info = analyze(ev.SQL)
		e.op = e.info.op
	case pgline.TraceBatch:
		e.op = "BATCH"
	}
	return e
}

// TraceStart implements pgline.Tracer: it starts the event's span as a
// child of ctx's and returns ctx with it.
func (t *tracer) TraceStart(ctx context.Context, ev *pgline.TraceEvent) context.Context {
	e := newEvent(ev)
	if t.cfg.noSpans&(1<<ev.Kind) == 0 {
		kind := trace.SpanKindClient
		if ev.Kind == pgline.TraceAcquire || ev.Kind == pgline.TracePooler {
			kind = trace.SpanKindInternal // no round trip of its own
		}
		attrs := make([]attribute.KeyValue, 0, 10+len(t.cfg.attrs))
		attrs = t.commonAttrs(attrs, ev, e.op)
		switch ev.Kind {
		case pgline.TraceStatement, pgline.TraceCopy:
			if t.cfg.queryText {
				text := ev.SQL
				if len(ev.Args) == 0 && !t.cfg.rawQueryText {
					text = sanitize(text)
				}
				attrs = append(attrs, semconv.DBQueryText(text))
			}
		case pgline.TraceBatch:
			if ev.BatchLen != 1 {
				attrs = append(attrs, semconv.DBOperationBatchSize(ev.BatchLen))
			}
		case pgline.TracePooler:
			attrs = append(attrs, PoolerReasonKey.String(ev.Reason))
		}
		if ev.Conn != nil {
			attrs = append(attrs, PIDKey.Int64(int64(ev.Conn.PID())))
		}
		ctx, e.span = t.tr.Start(ctx, spanName(ev, e.op),
			trace.WithSpanKind(kind), trace.WithTimestamp(ev.Start), trace.WithAttributes(attrs...))
	}
	return context.WithValue(ctx, eventKey{}, e)
}

// TraceEnd implements pgline.Tracer: it records the event's metrics and
// ends its span.
func (t *tracer) TraceEnd(ctx context.Context, ev *pgline.TraceEvent) {
	e, _ := ctx.Value(eventKey{}).(*event)
	if e == nil || e.ev != ev {
		e = newEvent(ev) // ctx is not TraceStart's: metrics only
	}
	end := ev.Start.Add(ev.Duration)
	var code, errType string
	if ev.Err != nil {
		code, errType = sqlState(ev.Err), errorType(ev.Err)
	}
	rows, returned, affected := rowCounts(ev, e.info)
	t.record(ctx, ev, e.op, code, errType, rows, returned)

	span := e.span
	if span == nil {
		return
	}
	if !span.IsRecording() { // sampled out
		span.End()
		return
	}
	var attrs []attribute.KeyValue
	if ev.Kind == pgline.TraceConnect || ev.Kind == pgline.TraceAcquire {
		if ev.Conn != nil { // known now
			attrs = append(attrs, PIDKey.Int64(int64(ev.Conn.PID())))
			attrs = appendServer(attrs, serverOf(ev))
			if ev.Database != "" {
				attrs = append(attrs, semconv.DBNamespace(ev.Database))
			}
		}
	}
	switch {
	case returned:
		attrs = append(attrs, semconv.DBResponseReturnedRows(int(rows)))
	case affected:
		attrs = append(attrs, RowsAffectedKey.Int64(rows))
	}
	if ev.Err != nil {
		if code != "" {
			attrs = append(attrs, semconv.DBResponseStatusCode(code))
		}
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		msg := ev.Err.Error()
		if len(ev.Args) > 0 {
			msg = scrub(msg, ev.Args)
		}
		span.AddEvent("exception", trace.WithTimestamp(end), trace.WithAttributes(
			semconv.ExceptionType(exceptionType(ev.Err)), semconv.ExceptionMessage(msg)))
		span.SetStatus(codes.Error, msg)
	}
	span.SetAttributes(attrs...)
	span.End(trace.WithTimestamp(end))
}

// record records the event's measurements.
func (t *tracer) record(ctx context.Context, ev *pgline.TraceEvent, op, code, errType string, rows int64, returned bool) {
	seconds := ev.Duration.Seconds()
	switch ev.Kind {
	case pgline.TraceStatement, pgline.TraceBatch, pgline.TraceCopy:
		attrs := make([]attribute.KeyValue, 0, 8+len(t.cfg.attrs))
		attrs = t.commonAttrs(attrs, ev, op)
		if code != "" {
			attrs = append(attrs, semconv.DBResponseStatusCode(code))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		set := metric.WithAttributeSet(attribute.NewSet(attrs...))
		t.duration.Record(ctx, seconds, set)
		if returned {
			t.returned.Record(ctx, rows, set)
		}
	case pgline.TraceConnect:
		if ev.Err == nil {
			t.createTime.Record(ctx, seconds, t.poolAttrs(ev))
		}
	case pgline.TraceAcquire:
		switch {
		case ev.Err == nil:
			t.waitTime.Record(ctx, seconds, t.poolAttrs(ev))
		case errors.Is(ev.Err, context.DeadlineExceeded):
			t.timeouts.Add(ctx, 1, t.poolAttrs(ev))
		}
	}
}

// commonAttrs appends the attributes of spans and operation metrics:
// db.system.name, db.namespace, db.operation.name, server.address,
// server.port and the WithAttributes ones.
func (t *tracer) commonAttrs(attrs []attribute.KeyValue, ev *pgline.TraceEvent, op string) []attribute.KeyValue {
	attrs = append(attrs, semconv.DBSystemNamePostgreSQL)
	if ev.Database != "" {
		attrs = append(attrs, semconv.DBNamespace(ev.Database))
	}
	if op != "" {
		attrs = append(attrs, semconv.DBOperationName(op))
	}
	attrs = appendServer(attrs, serverOf(ev))
	if ev.Kind == pgline.TraceAcquire && t.cfg.poolName != "" {
		attrs = append(attrs, semconv.DBClientConnectionPoolName(t.cfg.poolName))
	}
	return append(attrs, t.cfg.attrs...)
}

// poolAttrs are the attributes of the connection metrics: the pool's name
// and the WithAttributes ones.
func (t *tracer) poolAttrs(ev *pgline.TraceEvent) metric.MeasurementOption {
	name := t.cfg.poolName
	if name == "" {
		name = serverOf(ev).poolName(ev.Database)
	}
	attrs := make([]attribute.KeyValue, 0, 1+len(t.cfg.attrs))
	if name != "" {
		attrs = append(attrs, semconv.DBClientConnectionPoolName(name))
	}
	return metric.WithAttributeSet(attribute.NewSet(append(attrs, t.cfg.attrs...)...))
}

// rowCounts reads the count of the event's command tag: returned when the
// rows went to the client (SELECT, FETCH, COPY TO, a RETURNING clause),
// affected when they were written (INSERT, UPDATE, DELETE, MERGE, COPY
// FROM, CREATE TABLE … AS, SELECT … INTO); neither when the tag has no
// count or the text held several statements.
func rowCounts(ev *pgline.TraceEvent, info sqlInfo) (rows int64, returned, affected bool) {
	tag := ev.Tag.String()
	if ev.Err != nil || tag == "" || info.multi {
		return 0, false, false
	}
	cmd := tag
	for i := 0; i < len(tag); i++ {
		if tag[i] == ' ' {
			cmd = tag[:i]
			break
		}
	}
	rows = ev.Tag.RowsAffected()
	switch cmd {
	case "SELECT": // also the tag of CREATE TABLE … AS and SELECT … INTO
		into := info.into || strings.EqualFold(info.op, "CREATE")
		return rows, !into, into
	case "FETCH":
		return rows, true, false
	case "COPY":
		return rows, info.copyTo, !info.copyTo
	case "INSERT", "UPDATE", "DELETE", "MERGE":
		return rows, info.returning, !info.returning
	}
	return 0, false, false
}

// spanName follows the conventions: "{db.operation.name} {target}", the
// target being db.namespace (or server.address:server.port), for
// statements, batches and COPY; "connect", "acquire" and "pooler" for the
// others.
func spanName(ev *pgline.TraceEvent, op string) string {
	switch ev.Kind {
	case pgline.TraceStatement, pgline.TraceBatch, pgline.TraceCopy:
		target := ev.Database
		if target == "" {
			target = serverOf(ev).target()
		}
		switch {
		case op != "" && target != "":
			return op + " " + target
		case op != "":
			return op
		case target != "":
			return target
		}
		return "postgresql"
	case pgline.TraceConnect:
		return "connect"
	case pgline.TraceAcquire:
		return "acquire"
	case pgline.TracePooler:
		return "pooler"
	}
	return ev.Kind.String()
}

// server is where an event's connection goes.
type server struct {
	address string // host name, IP address or Unix socket path
	port    int    // 0 for a Unix socket
}

// serverOf returns the server of the event's connection, or else of its
// Host label (a failed connect's first host); the zero server when neither
// is known.
func serverOf(ev *pgline.TraceEvent) server {
	if ev.Conn != nil {
		return serverOfHost(ev.Conn.Host())
	}
	return serverOfLabel(ev.Host)
}

// serverOfHost returns h's server: the Unix socket's path, or the host
// name (its address when it has none) and port.
func serverOfHost(h pgline.HostConfig) server {
	port := int(h.Port)
	if h.IsUnixSocket() {
		return server{address: h.Host + "/.s.PGSQL." + strconv.Itoa(port)}
	}
	if h.Host != "" {
		return server{address: h.Host, port: port}
	}
	return server{address: h.HostAddr, port: port}
}

// serverOfLabel parses pgline's host label: "host:port", "[::1]:port",
// "name (addr):port" or a socket path.
func serverOfLabel(label string) server {
	if label == "" || label[0] == '/' {
		return server{address: label}
	}
	i := len(label) - 1
	for i >= 0 && isDigit(label[i]) {
		i--
	}
	if i <= 0 || label[i] != ':' {
		return server{address: label}
	}
	port, _ := strconv.Atoi(label[i+1:])
	host := label[:i]
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	for j := 0; j+1 < len(host); j++ {
		if host[j] == ' ' && host[j+1] == '(' { // "name (addr)": the name
			host = host[:j]
			break
		}
	}
	return server{address: host, port: port}
}

// target is "address:port", or the socket path.
func (s server) target() string {
	if s.port == 0 {
		return s.address
	}
	return s.address + ":" + strconv.Itoa(s.port)
}

// poolName is the conventions' default db.client.connection.pool.name,
// "address:port/database", or "" when the address is unknown.
func (s server) poolName(database string) string {
	if s.address == "" {
		return ""
	}
	return s.target() + "/" + database
}

// appendServer appends server.address and server.port, as far as known.
func appendServer(attrs []attribute.KeyValue, s server) []attribute.KeyValue {
	if s.address != "" {
		attrs = append(attrs, semconv.ServerAddress(s.address))
	}
	if s.port != 0 {
		attrs = append(attrs, semconv.ServerPort(s.port))
	}
	return attrs
}

// float64Histogram makes a histogram, or a no-op one (after reporting
// why to otel.Handle) when the provider refuses; so do int64Histogram and
// int64Counter.
func float64Histogram(m metric.Meter, name, unit, desc string, bounds ...float64) metric.Float64Histogram {
	h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(bounds...))
	if err != nil {
		otel.Handle(err)
		return noop.Float64Histogram{}
	}
	return h
}

func int64Histogram(m metric.Meter, name, unit, desc string, bounds ...float64) metric.Int64Histogram {
	h, err := m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(bounds...))
	if err != nil {
		otel.Handle(err)
		return noop.Int64Histogram{}
	}
	return h
}

func int64Counter(m metric.Meter, name, unit, desc string) metric.Int64Counter {
	c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		otel.Handle(err)
		return noop.Int64Counter{}
	}
	return c
}
