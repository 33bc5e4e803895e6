package otelpgline

import (
	"context"
	"errors"

	"github.com/pgline/pgline"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// RequestKindKey tells the two kinds of db.client.connection.pending_requests
// apart: "acquire" (Acquire, Begin and BeginTx waiting for a connection of
// their own) and "statement" (statements waiting for room on a shared
// connection).
const RequestKindKey = attribute.Key("pgline.request.kind")

// RegisterPoolMetrics makes observable instruments that report p.Stat()
// each time the MeterProvider collects; the package documentation lists
// them. Its options are WithMeterProvider, WithPoolName and
// WithAttributes.
//
// Call unregister when the pool is closed: it stops the reports (the
// instruments stay, without values). RegisterPoolMetrics fails only when
// the MeterProvider refuses an instrument or the callback.
func RegisterPoolMetrics(p *pgline.Pool, opts ...Option) (unregister func() error, err error) {
	c := newConfig(opts)
	name := c.poolName
	if name == "" {
		cfg := p.Config()
		if len(cfg.Hosts) > 0 {
			name = serverOfHost(cfg.Hosts[0]).poolName(cfg.Database)
		}
	}
	m := c.mp.Meter(scope, metric.WithSchemaURL(semconv.SchemaURL))

	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		i, err := m.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return i
	}
	count := counter("db.client.connection.count", "{connection}",
		"The number of connections that are currently in state described by the state attribute.")
	maxConns := counter("db.client.connection.max", "{connection}",
		"The maximum number of open connections allowed.")
	pending := counter("db.client.connection.pending_requests", "{request}",
		"The number of current pending requests for an open connection.")
	opening := counter("pgline.pool.connection.opening", "{connection}",
		"The number of connections being opened.")
	acquired := counter("pgline.pool.connection.acquired", "{connection}",
		"The number of connections held by Acquire, Begin or BeginTx.")
	inFlight := counter("pgline.pool.statement.in_flight", "{statement}",
		"The number of statements sent on the pool's shared connections and not finished.")
	poolerHosts := counter("pgline.pool.pooler.hosts", "{host}",
		"The number of hosts found behind a transaction pooler.")
	depth, err := m.Float64ObservableGauge("pgline.pool.pipeline.depth", metric.WithUnit("{statement}"),
		metric.WithDescription("The mean number of statements in flight on a shared connection that has any."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	base := append([]attribute.KeyValue{semconv.DBClientConnectionPoolName(name)}, c.attrs...)
	with := func(extra ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(append(extra, base...)...))
	}
	// The attribute sets do not change: made once, not at each collection.
	var (
		all       = with()
		idle      = with(semconv.DBClientConnectionStateIdle)
		used      = with(semconv.DBClientConnectionStateUsed)
		acquireRq = with(RequestKindKey.String("acquire"))
		stmtRq    = with(RequestKindKey.String("statement"))
	)
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := p.Stat()
		open := s.TotalConns - s.OpeningConns
		o.ObserveInt64(count, int64(s.IdleConns), idle)
		o.ObserveInt64(count, int64(open-s.IdleConns), used)
		o.ObserveInt64(maxConns, int64(s.MaxConns), all)
		o.ObserveInt64(pending, int64(s.AcquireWaiting), acquireRq)
		o.ObserveInt64(pending, int64(s.Waiting), stmtRq)
		o.ObserveInt64(opening, int64(s.OpeningConns), all)
		o.ObserveInt64(acquired, int64(s.AcquiredConns), all)
		o.ObserveInt64(inFlight, int64(s.InFlight), all)
		o.ObserveInt64(poolerHosts, int64(len(s.PoolerHosts)), all)
		o.ObserveFloat64(depth, pipelineDepth(s), all)
		return nil
	}, count, maxConns, pending, opening, acquired, inFlight, poolerHosts, depth)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}

// pipelineDepth is the mean number of statements in flight on the shared
// connections that have any: those open, not held and not idle.
func pipelineDepth(s pgline.PoolStat) float64 {
	busy := s.TotalConns - s.OpeningConns - s.AcquiredConns - s.IdleConns
	if busy <= 0 || s.InFlight == 0 {
		return 0
	}
	return float64(s.InFlight) / float64(busy)
}
