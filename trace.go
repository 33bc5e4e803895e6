package pgline

import (
	"context"
	"strconv"
	"time"
)

// Tracer receives the start and end of connection attempts, statements,
// batches, COPY and pool acquisitions, so that logging, metrics or tracing
// (SlogTracer; OpenTelemetry in the otelpgline module) can be attached
// without pgline depending on them. Set it in Config.Tracer. Its methods
// are called on the goroutine making the call, from many goroutines at
// once: they must be safe for concurrent use and quick.
type Tracer interface {
	// TraceStart is called when an operation starts. The context it returns
	// is passed to TraceEnd for the same event.
	TraceStart(ctx context.Context, ev *TraceEvent) context.Context
	// TraceEnd is called when the operation ends, with Duration, Err and,
	// for statements, Tag set.
	TraceEnd(ctx context.Context, ev *TraceEvent)
}

// TraceKind says what a TraceEvent is about.
type TraceKind uint8

// Kinds of trace events.
const (
	TraceConnect   TraceKind = iota + 1 // ConnectConfig (every host tried)
	TraceStatement                      // Query, QueryRow or Exec (and Begin, Commit, Rollback), until the rows are closed
	TraceBatch                          // SendBatch, until its results are closed
	TraceAcquire                        // Pool.Acquire, Begin or BeginTx taking a connection
	// TracePooler: a connection found that it goes through a transaction
	// pooler and switched to describe mode (Reason says how). It has no
	// duration: TraceEnd follows TraceStart at once. Found by the
	// connect's check, it is reported from the goroutine that reads the
	// check's answer, shortly after Connect returned.
	TracePooler
	// TraceCopy: CopyFrom or CopyTo (SQL is the COPY statement; Tag
	// counts the rows). A COPY sent with Exec is a TraceStatement.
	TraceCopy
)

// String names the kind: "connect", "statement", "batch", "acquire",
// "pooler", "copy".
func (k TraceKind) String() string {
	switch k {
	case TraceConnect:
		return "connect"
	case TraceStatement:
		return "statement"
	case TraceBatch:
		return "batch"
	case TraceAcquire:
		return "acquire"
	case TracePooler:
		return "pooler"
	case TraceCopy:
		return "copy"
	}
	return "TraceKind(" + strconv.Itoa(int(k)) + ")"
}

// TraceEvent describes one traced operation. A Tracer must not keep it, or
// Args, after TraceEnd returns.
type TraceEvent struct {
	Kind TraceKind
	SQL  string // statements and COPY
	Args []any  // statements
	// Conn is the connection the operation runs on; for connects and
	// acquisitions, the one made or taken (at TraceEnd, on success).
	// Its Host, PID and TypeMap may be read; a Tracer must not run
	// statements on it.
	Conn *Conn
	// Host is the host of Conn as host:port (or the socket's path), or
	// for a failed connect the first host tried.
	Host string
	// Database is the database name the connection asked for.
	Database string
	// BatchLen is the number of statements of a batch, and Batch their
	// SQL, in order (TraceBatch). At TraceEnd of a batch whose Err is
	// set by one of its statements, BatchFailed is that statement's index
	// in Batch (the first that failed); it is -1 otherwise.
	BatchLen    int
	Batch       []string
	BatchFailed int
	// Reason says what showed a pooler (TracePooler).
	Reason string

	Start    time.Time
	Duration time.Duration // at TraceEnd
	Err      error         // at TraceEnd
	Tag      CommandTag    // at TraceEnd, statements
}

// traceStart starts an event when cfg has a Tracer; it returns nil
// otherwise, and the context to pass to traceEnd.
func traceStart(ctx context.Context, cfg *Config, ev TraceEvent) (context.Context, *TraceEvent) {
	if cfg.Tracer == nil {
		return ctx, nil
	}
	e := &ev
	e.Start = time.Now()
	return cfg.Tracer.TraceStart(ctx, e), e
}

// traceStart starts an event on c (see the function traceStart).
func (c *Conn) traceStart(ctx context.Context, ev TraceEvent) (context.Context, *TraceEvent) {
	if c.cfg.Tracer == nil {
		return ctx, nil
	}
	ev.setConn(c)
	return traceStart(ctx, c.cfg, ev)
}

// setConn records c as the event's connection.
func (ev *TraceEvent) setConn(c *Conn) {
	ev.Conn, ev.Host, ev.Database = c, c.label, c.cfg.Database
}

// traceEnd ends an event started by traceStart (nothing when ev is nil).
func traceEnd(ctx context.Context, cfg *Config, ev *TraceEvent, tag CommandTag, err error) {
	if ev == nil {
		return
	}
	ev.Duration = time.Since(ev.Start)
	ev.Tag, ev.Err = tag, err
	cfg.Tracer.TraceEnd(ctx, ev)
}

// MultiTracer returns a Tracer that passes every event to each of tracers
// in turn (nil ones are left out): a log and OpenTelemetry together, say.
// TraceStart calls them in order, each with the context the one before
// returned, so that what one puts in the context (a span) is seen by the
// next; TraceEnd calls them in the reverse order, each with the context
// its own TraceStart returned. It is pgx's multitracer.
func MultiTracer(tracers ...Tracer) Tracer {
	m := &multiTracer{}
	for _, t := range tracers {
		if t != nil {
			m.tracers = append(m.tracers, t)
		}
	}
	return m
}

// multiTracer is MultiTracer's Tracer. Its own pointer keys, in the
// context its TraceStart returns, the contexts its tracers' TraceStart
// returned ([]context.Context), so that nested MultiTracers keep theirs
// apart.
type multiTracer struct{ tracers []Tracer }

// TraceStart calls each tracer's TraceStart in order (see MultiTracer).
func (m *multiTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context {
	ctxs := make([]context.Context, len(m.tracers))
	for i, t := range m.tracers {
		ctx = t.TraceStart(ctx, ev)
		ctxs[i] = ctx
	}
	return context.WithValue(ctx, m, ctxs)
}

// TraceEnd calls each tracer's TraceEnd in the reverse order, with the
// context its TraceStart returned.
func (m *multiTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {
	ctxs, _ := ctx.Value(m).([]context.Context)
	for i := len(m.tracers) - 1; i >= 0; i-- {
		c := ctx
		if i < len(ctxs) {
			c = ctxs[i]
		}
		m.tracers[i].TraceEnd(c, ev)
	}
}
