package pgline

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestExecAndParameters(t *testing.T) {
	var mu sync.Mutex
	var notices []string
	cfg, err := ParseConfig(srv.DSN("user=scramuser", "password="+pwSCRAM))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(n *Notice) {
		mu.Lock()
		notices = append(notices, n.Message)
		mu.Unlock()
	}
	c, err := ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if v := c.ParameterStatus("server_version"); v == "" {
		t.Fatal("no server_version parameter")
	}
	if v := c.ParameterStatus("client_encoding"); v != "UTF8" {
		t.Fatalf("client_encoding = %q", v)
	}
	if c.PID() == 0 {
		t.Fatal("no BackendKeyData")
	}
	pid, err := c.queryScalar(testCtx(t), "SELECT pg_backend_pid()")
	if err != nil || pid == "" {
		t.Fatal(pid, err)
	}

	tag, err := c.Exec(testCtx(t), "CREATE TEMP TABLE t(x int); INSERT INTO t SELECT generate_series(1, 3)")
	if err != nil {
		t.Fatal(err)
	}
	if tag.String() != "INSERT 0 3" || tag.RowsAffected() != 3 {
		t.Fatalf("tag = %q (%d)", tag, tag.RowsAffected())
	}

	// A server error leaves the connection usable.
	_, err = c.Exec(testCtx(t), "SELECT 1/0")
	var pgErr *PgError
	if !errors.As(err, &pgErr) || pgErr.SQLState() != "22012" || pgErr.Severity != "ERROR" {
		t.Fatalf("got %v, want division_by_zero", err)
	}
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}

	// ParameterStatus follows SET; notices reach the handler.
	if _, err := c.Exec(testCtx(t), "SET application_name = 'renamed'"); err != nil {
		t.Fatal(err)
	}
	if v := c.ParameterStatus("application_name"); v != "renamed" {
		t.Fatalf("application_name = %q after SET", v)
	}
	if _, err := c.Exec(testCtx(t), "DO $$ BEGIN RAISE NOTICE 'hello %', 42; END $$"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := strings.Join(notices, "|")
	mu.Unlock()
	if got != "hello 42" {
		t.Fatalf("notices = %q", got)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := c.Ping(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping after Close: %v", err)
	}
}

func TestPgErrorFields(t *testing.T) {
	c := connect(t, srv.DSN())
	if _, err := c.Exec(testCtx(t), "CREATE TEMP TABLE u(id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(testCtx(t), "INSERT INTO u VALUES (1), (1)")
	var pgErr *PgError
	if !errors.As(err, &pgErr) {
		t.Fatalf("got %v", err)
	}
	if pgErr.Code != "23505" || pgErr.TableName != "u" || pgErr.ConstraintName != "u_pkey" || pgErr.Detail == "" ||
		pgErr.SchemaName == "" || pgErr.File == "" || pgErr.Line == 0 || pgErr.Routine == "" || pgErr.SeverityUnlocalized != "ERROR" {
		t.Fatalf("fields missing: %+v", pgErr)
	}
	_, err = c.Exec(testCtx(t), "SELECT nosuchcolumn FROM u")
	if !errors.As(err, &pgErr) || pgErr.Code != "42703" || pgErr.Position != 8 {
		t.Fatalf("got %+v", err)
	}
}

// TestTerminatedBackend: the server ends the session; the caller gets an
// error, later calls get ErrClosed, nothing hangs.
func TestTerminatedBackend(t *testing.T) {
	c := connect(t, srv.DSN())
	admin := connect(t, srv.DSN())
	if _, err := admin.Exec(testCtx(t), "SELECT pg_terminate_backend("+strconv.FormatUint(uint64(c.PID()), 10)+")"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(testCtx(t), "SELECT 1"); err == nil {
		t.Fatal("Exec on a terminated session succeeded")
	}
	if _, err := c.Exec(testCtx(t), "SELECT 1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Exec: %v, want ErrClosed", err)
	}
}
