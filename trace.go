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
	// duration: TraceEnd follows TraceStart at once.
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
	// BatchLen is the number of statements of a batch.
	BatchLen int
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
