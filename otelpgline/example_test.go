package otelpgline_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/otelpgline"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func Example() {
	ctx := context.Background()

	// An application passes its own providers, or none to use the global
	// ones; these keep what they get in memory, to show it below.
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	cfg, err := pgline.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	cfg.Pool.MaxConns = 8
	// One name for the pool, in the spans and in every metric.
	poolName := otelpgline.WithPoolName("main")
	cfg.Tracer = otelpgline.NewTracer(otelpgline.WithTracerProvider(tp), otelpgline.WithMeterProvider(mp), poolName)
	pool, err := pgline.NewPoolConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	unregister, err := otelpgline.RegisterPoolMetrics(pool, otelpgline.WithMeterProvider(mp), poolName)
	if err != nil {
		log.Fatal(err)
	}
	defer unregister()

	var tables int
	err = pool.QueryRow(ctx, "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1",
		"pg_catalog").Scan(&tables)
	if err != nil {
		log.Fatal(err)
	}

	last := spans.Ended()[len(spans.Ended())-1]
	fmt.Println(last.Name())
	for _, a := range last.Attributes() {
		if a.Key == "db.query.text" || a.Key == "db.response.returned_rows" {
			fmt.Println(a.Key, "=", a.Value.Emit())
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "db.client.connection.max" {
			dp := m.Data.(metricdata.Sum[int64]).DataPoints[0]
			name, _ := dp.Attributes.Value("db.client.connection.pool.name")
			fmt.Println(m.Name, "=", dp.Value, "pool", name.Emit())
		}
	}
	// Output:
	// SELECT postgres
	// db.query.text = SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1
	// db.response.returned_rows = 1
	// db.client.connection.max = 8 pool main
}

// TestREADMESnippet keeps README.md's snippet the code of Example.
func TestREADMESnippet(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(src), "func Example() {")
	end := strings.Index(string(src[start:]), "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("no Example in example_test.go")
	}
	if example := string(src[start : start+end+3]); !strings.Contains(string(readme), "```go\n"+example+"```") {
		t.Errorf("README.md does not hold the Example's code:\n%s", example)
	}
}
