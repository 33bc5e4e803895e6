package pgline

import (
	"context"
	"errors"
	"log/slog"
)

// SlogTracerOptions configures SlogTracer. The zero value logs every
// event at slog.LevelInfo without arguments.
type SlogTracerOptions struct {
	// Level is the level of events that succeed; failed ones are logged
	// at slog.LevelError.
	Level slog.Level
	// Args logs statement arguments. It is off by default: arguments
	// often hold personal data or credentials.
	Args bool
	// MaxSQL, when positive, cuts SQL text longer than MaxSQL bytes
	// (marking the cut with "…").
	MaxSQL int
}

// SlogTracer returns a Tracer that logs each event to l when it ends, as
// one record: the message names the kind ("pgline statement", "pgline
// connect", "pgline acquire", "pgline batch", "pgline copy", "pgline
// pooler") and the attributes are what applies of sql, args, duration,
// rows (the command tag's count), tag, batch_len, host, db, pid, err,
// sqlstate (of a server error) and reason. A nil opts is the zero
// SlogTracerOptions.
func SlogTracer(l *slog.Logger, opts *SlogTracerOptions) Tracer {
	t := &slogTracer{l: l}
	if opts != nil {
		t.opts = *opts
	}
	return t
}

type slogTracer struct {
	l    *slog.Logger
	opts SlogTracerOptions
}

// TraceStart implements Tracer; slogTracer logs at the end only.
func (t *slogTracer) TraceStart(ctx context.Context, ev *TraceEvent) context.Context { return ctx }

// TraceEnd implements Tracer.
func (t *slogTracer) TraceEnd(ctx context.Context, ev *TraceEvent) {
	level := t.opts.Level
	if ev.Err != nil {
		level = slog.LevelError
	}
	if !t.l.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 12)
	if ev.SQL != "" {
		sql := ev.SQL
		if t.opts.MaxSQL > 0 && len(sql) > t.opts.MaxSQL {
			sql = sql[:t.opts.MaxSQL] + "…"
		}
		attrs = append(attrs, slog.String("sql", sql))
	}
	if t.opts.Args && ev.Kind == TraceStatement {
		attrs = append(attrs, slog.Any("args", ev.Args))
	}
	attrs = append(attrs, slog.Duration("duration", ev.Duration))
	if tag := ev.Tag.String(); tag != "" {
		attrs = append(attrs, slog.Int64("rows", ev.Tag.RowsAffected()), slog.String("tag", tag))
	}
	if ev.Kind == TraceBatch {
		attrs = append(attrs, slog.Int("batch_len", ev.BatchLen))
		if i := ev.BatchFailed; ev.Err != nil && i >= 0 && i < len(ev.Batch) {
			sql := ev.Batch[i]
			if t.opts.MaxSQL > 0 && len(sql) > t.opts.MaxSQL {
				sql = sql[:t.opts.MaxSQL] + "…"
			}
			attrs = append(attrs, slog.Int("failed_statement", i), slog.String("sql", sql))
		}
	}
	if ev.Host != "" {
		attrs = append(attrs, slog.String("host", ev.Host))
	}
	if ev.Database != "" {
		attrs = append(attrs, slog.String("db", ev.Database))
	}
	if ev.Conn != nil {
		attrs = append(attrs, slog.Uint64("pid", uint64(ev.Conn.PID())))
	}
	if ev.Reason != "" {
		attrs = append(attrs, slog.String("reason", ev.Reason))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.String("err", ev.Err.Error()))
		var pe *PgError
		if errors.As(ev.Err, &pe) {
			attrs = append(attrs, slog.String("sqlstate", pe.Code))
		}
	}
	t.l.LogAttrs(ctx, level, "pgline "+ev.Kind.String(), attrs...)
}
