package otelpgline_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/otelpgline"
	"github.com/pgline/pgline/pgtest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

var srv *pgtest.Server

// TestMain starts one server for the tests, and names it in DATABASE_URL
// for the Example.
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	s, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: cannot start PostgreSQL: %v\n", err)
		return 1
	}
	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	srv = s
	os.Setenv("DATABASE_URL", s.DSN())
	return m.Run()
}

// harness is a Config whose Tracer records into memory.
type harness struct {
	cfg    *pgline.Config
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	// addr and port are the server's, as the spans should name it.
	addr string
	port int
	from int // spans before this index of spans.Ended() are left out
}

// newHarness parses the test server's DSN (plus extra pairs) and sets
// the Config's Tracer to NewTracer(opts) with in-memory providers.
func newHarness(t *testing.T, extra []string, opts ...otelpgline.Option) *harness {
	t.Helper()
	cfg, err := pgline.ParseConfig(srv.DSN(extra...))
	if err != nil {
		t.Fatal(err)
	}
	// Delta for histograms and counters, so that reset can drop what came
	// before; the pool's up-down counters report their current values.
	temporality := func(k sdkmetric.InstrumentKind) metricdata.Temporality {
		switch k {
		case sdkmetric.InstrumentKindHistogram, sdkmetric.InstrumentKindCounter:
			return metricdata.DeltaTemporality
		}
		return metricdata.CumulativeTemporality
	}
	h := &harness{cfg: cfg, spans: tracetest.NewSpanRecorder(),
		reader: sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(temporality))}
	h.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.spans))
	h.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	opts = append([]otelpgline.Option{otelpgline.WithTracerProvider(h.tp), otelpgline.WithMeterProvider(h.mp)}, opts...)
	cfg.Tracer = otelpgline.NewTracer(opts...)
	h.addr, h.port = cfg.Hosts[0].Host, int(cfg.Hosts[0].Port)
	return h
}

// connect opens a connection, closed at the end of the test.
func (h *harness) connect(t *testing.T) *pgline.Conn {
	t.Helper()
	c, err := pgline.ConnectConfig(testCtx(t), h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// pool opens a pool, closed at the end of the test.
func (h *harness) pool(t *testing.T) *pgline.Pool {
	t.Helper()
	p, err := pgline.NewPoolConfig(testCtx(t), h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// reset leaves out the spans and measurements made so far (as those of the
// statement pgline runs when it connects).
func (h *harness) reset(t *testing.T) {
	h.from = len(h.spans.Ended())
	h.collect(t)
}

// ended returns the spans named name that ended since the last reset.
func (h *harness) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range h.spans.Ended()[h.from:] {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// span returns the one ended span named name.
func (h *harness) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	s := h.ended(name)
	if len(s) != 1 {
		t.Fatalf("%d spans named %q; all: %v", len(s), name, spanNames(h.spans.Ended()[h.from:]))
	}
	return s[0]
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	return names
}

// collect reads the metrics recorded since the last collect (histograms
// and counters) or now (pool metrics).
func (h *harness) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// findMetric returns the metric named name, or false.
func findMetric(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// histogram returns the data points of the float64 histogram named name.
func histogram(t *testing.T, rm metricdata.ResourceMetrics, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	m, ok := findMetric(rm, name)
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is a %T", name, m.Data)
	}
	if m.Unit != "s" {
		t.Fatalf("%s: unit %q", name, m.Unit)
	}
	return h.DataPoints
}

// attrMap returns attrs as a map of their values' text.
func attrMap(attrs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(attrs))
	for _, a := range attrs {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}

// checkAttrs fails unless got holds exactly want.
func checkAttrs(t *testing.T, what string, got []attribute.KeyValue, want map[string]string) {
	t.Helper()
	g := attrMap(got)
	var diff []string
	for k, v := range want {
		if g[k] != v {
			diff = append(diff, fmt.Sprintf("%s = %q, want %q", k, g[k], v))
		}
	}
	for k, v := range g {
		if _, ok := want[k]; !ok {
			diff = append(diff, fmt.Sprintf("unexpected %s = %q", k, v))
		}
	}
	if len(diff) > 0 {
		slices.Sort(diff)
		t.Errorf("%s attributes:\n\t%s", what, strings.Join(diff, "\n\t"))
	}
}

// with returns a copy of m with the pairs kv (key, value, key, value…)
// set, or removed when the value is "-".
func with(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "-" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// testCtx is a context that ends with the test, or after 30 seconds.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
