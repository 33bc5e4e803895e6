package pgline

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the Pool's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records decodes the JSON lines written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func slogConfig(t *testing.T, buf *syncBuffer, handlerLevel slog.Level, opts *SlogTracerOptions, extra string) *Config {
	t.Helper()
	cfg, err := ParseConfig(srv.DSN(extra))
	if err != nil {
		t.Fatal(err)
	}
	l := slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: handlerLevel}))
	cfg.Tracer = SlogTracer(l, opts)
	return cfg
}

// TestSlogTracer: each kind of event is one record with its attributes;
// a failed statement is logged at ERROR with its SQLSTATE; arguments are
// left out unless asked for.
func TestSlogTracer(t *testing.T) {
	buf := &syncBuffer{}
	cfg := slogConfig(t, buf, slog.LevelInfo, nil, "pool_max_conns=1")
	ctx := testCtx(t)
	p, err := NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const secretArg = "argument-not-to-log"
	if _, err := p.Exec(ctx, "SELECT $1::text", secretArg); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("1/0 succeeded")
	}
	pc, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := &Batch{}
	b.Queue("SELECT 1")
	b.Queue("SELECT 2")
	if err := pc.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, "CREATE TEMP TABLE slog_copy (n int4)"); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.CopyFrom(ctx, Identifier{"slog_copy"}, []string{"n"}, CopyFromRows([][]any{{1}, {2}, {3}})); err != nil {
		t.Fatal(err)
	}
	pid := pc.PID()
	pc.Release()

	recs := buf.records(t)
	find := func(msg string, match func(map[string]any) bool) map[string]any {
		t.Helper()
		for _, r := range recs {
			if r["msg"] == msg && (match == nil || match(r)) {
				return r
			}
		}
		t.Fatalf("no %q record in %v", msg, recs)
		return nil
	}
	sqlIs := func(s string) func(map[string]any) bool {
		return func(r map[string]any) bool { return r["sql"] == s }
	}
	if r := find("pgline connect", nil); r["level"] != "INFO" || r["host"] == nil || r["db"] != cfg.Database || r["pid"] == nil {
		t.Errorf("connect: %v", r)
	}
	if r := find("pgline statement", sqlIs("SELECT $1::text")); r["rows"] != 1.0 || r["tag"] != "SELECT 1" || r["duration"] == nil || r["args"] != nil {
		t.Errorf("statement: %v", r)
	}
	if r := find("pgline statement", sqlIs("SELECT 1/0")); r["level"] != "ERROR" || r["sqlstate"] != "22012" || !strings.Contains(r["err"].(string), "division by zero") {
		t.Errorf("failed statement: %v", r)
	}
	if r := find("pgline batch", nil); r["batch_len"] != 2.0 || r["level"] != "INFO" {
		t.Errorf("batch: %v", r)
	}
	if r := find("pgline copy", nil); r["rows"] != 3.0 || r["pid"] != float64(pid) {
		t.Errorf("copy: %v", r)
	}
	if r := find("pgline acquire", nil); r["host"] == nil || r["pid"] != float64(pid) {
		t.Errorf("acquire: %v", r)
	}
	buf.mu.Lock()
	all := buf.b.String()
	buf.mu.Unlock()
	if strings.Contains(all, secretArg) {
		t.Error("an argument was logged with Args off")
	}
}

// TestSlogTracerOptions: Args logs arguments, MaxSQL cuts long SQL, and
// successes below the handler's level are not logged while failures
// still are.
func TestSlogTracerOptions(t *testing.T) {
	buf := &syncBuffer{}
	cfg := slogConfig(t, buf, slog.LevelInfo, &SlogTracerOptions{Args: true, MaxSQL: 12}, "")
	ctx := testCtx(t)
	c, err := ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(ctx, "SELECT $1::int4 + 1 AS long_name", 41); err != nil {
		t.Fatal(err)
	}
	recs := buf.records(t)
	last := recs[len(recs)-1]
	if last["sql"] != "SELECT $1::i…" || last["args"] == nil || !strings.Contains(stringify(last["args"]), "41") {
		t.Errorf("got %v", last)
	}

	quiet := &syncBuffer{}
	cfg = slogConfig(t, quiet, slog.LevelInfo, &SlogTracerOptions{Level: slog.LevelDebug}, "")
	c2, err := ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	c2.Exec(ctx, "SELECT * FROM no_such_table_slog")
	recs = quiet.records(t)
	if len(recs) != 1 || recs[0]["sqlstate"] != "42P01" {
		t.Fatalf("with successes at DEBUG under an INFO handler: %v", recs)
	}
}

func stringify(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSlogTracerNoPassword: a failed connect logs the hosts and why, never
// the password of the DSN.
func TestSlogTracerNoPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	buf := &syncBuffer{}
	cfg, err := ParseConfig("host=127.0.0.1 port=" + strconv.Itoa(port) + " user=u dbname=d password=Sekr3t-pw connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = SlogTracer(slog.New(slog.NewJSONHandler(buf, nil)), &SlogTracerOptions{Args: true})
	if _, err := ConnectConfig(context.Background(), cfg); err == nil {
		t.Fatal("connected to a closed port")
	}
	recs := buf.records(t)
	if len(recs) != 1 || recs[0]["msg"] != "pgline connect" || recs[0]["level"] != "ERROR" {
		t.Fatalf("got %v", recs)
	}
	if strings.Contains(stringify(recs), "Sekr3t") {
		t.Fatalf("the password was logged: %v", recs)
	}
}
