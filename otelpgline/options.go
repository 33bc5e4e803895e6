package otelpgline

import (
	"github.com/pgline/pgline"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every tracer and meter.
const scope = "github.com/pgline/pgline/otelpgline"

// Option configures NewTracer and RegisterPoolMetrics. Each option says
// which of the two it applies to; the other ignores it.
type Option func(*config)

// config is the options applied in order over the defaults.
type config struct {
	tp           trace.TracerProvider
	mp           metric.MeterProvider
	queryText    bool
	rawQueryText bool
	poolName     string
	attrs        []attribute.KeyValue
	noSpans      uint32 // bit k set: no spans of TraceKind k
}

func newConfig(opts []Option) config {
	c := config{queryText: true}
	for _, o := range opts {
		o(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	return c
}

// WithTracerProvider sets where spans go (NewTracer). The default is the
// global provider, otel.GetTracerProvider(), as it is when NewTracer is
// called.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where measurements go (NewTracer and
// RegisterPoolMetrics). The default is the global provider,
// otel.GetMeterProvider(), as it is when the function is called.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithQueryText says whether spans carry the statement's text as
// db.query.text (NewTracer). It does by default. Metrics never do.
func WithQueryText(on bool) Option {
	return func(c *config) { c.queryText = on }
}

// WithRawQueryText records the text of statements sent without arguments
// as written (NewTracer). By default their string and number literals are
// replaced by "?", as OpenTelemetry's conventions ask, since such text may
// hold the values themselves; text sent with arguments ($1, $2…) is
// recorded as written either way.
func WithRawQueryText(on bool) Option {
	return func(c *config) { c.rawQueryText = on }
}

// WithPoolName sets db.client.connection.pool.name (NewTracer, for the
// connection metrics of connects and acquisitions, and
// RegisterPoolMetrics). By default it is made of the server's address and
// port and the database, "host:port/database" ("/socket/path/database"
// for a Unix socket): the first host of the pool's Config for
// RegisterPoolMetrics, the connection's own host for NewTracer. Set it
// when a pool has several hosts or an application several pools to one
// database, and give NewTracer and RegisterPoolMetrics the same name.
func WithPoolName(name string) Option {
	return func(c *config) { c.poolName = name }
}

// WithAttributes adds attrs to every span and measurement (NewTracer and
// RegisterPoolMetrics). Keep them few and of few values: they multiply the
// metrics' time series.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, attrs...) }
}

// WithoutSpans turns off the spans of the given kinds (NewTracer), for
// example pgline.TraceAcquire and pgline.TraceConnect in an application
// that only wants statements traced. Their metrics are still recorded.
func WithoutSpans(kinds ...pgline.TraceKind) Option {
	return func(c *config) {
		for _, k := range kinds {
			if k < 32 {
				c.noSpans |= 1 << k
			}
		}
	}
}
