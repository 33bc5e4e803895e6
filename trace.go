package pgline

import (
	"context"
	"time"
)

// Tracer receives the start and end of connection attempts, statements,
// batches and pool acquisitions, so that logging, metrics or tracing (slog,
// OpenTelemetry, ...) can be attached without pgline depending on them. Set
// it in Config.Tracer. Its methods are called on the goroutine making the
// call, from many goroutines at once: they must be safe for concurrent use
// and quick.
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
	TraceStatement                      // Query, QueryRow or Exec, until the rows are closed
	TraceBatch                          // SendBatch, until its results are closed
	TraceAcquire                        // Pool.Acquire or Pool.Begin taking a connection
	// TracePooler: a connection found that it goes through a transaction
	// pooler and switched to describe mode (Reason says how). It has no
	// duration: TraceEnd follows TraceStart at once.
	TracePooler
)

// TraceEvent describes one traced operation. A Tracer must not keep it, or
// Args, after TraceEnd returns.
type TraceEvent struct {
	Kind TraceKind
	SQL  string // statements
	Args []any  // statements
	// Host is the host connected to (on success) or the first host tried.
	Host string
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

// traceEnd ends an event started by traceStart (nothing when ev is nil).
func traceEnd(ctx context.Context, cfg *Config, ev *TraceEvent, tag CommandTag, err error) {
	if ev == nil {
		return
	}
	ev.Duration = time.Since(ev.Start)
	ev.Tag, ev.Err = tag, err
	cfg.Tracer.TraceEnd(ctx, ev)
}
