package stdlib_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/stdlib"
)

// A connection closed under database/sql is reported as driver.ErrBadConn
// (nothing reached the server), and the DB replaces it.
func TestClosedConnIsBad(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	conn := pinConn(t, db)
	var native *pgline.Conn
	if err := conn.Raw(func(dc any) error {
		native = dc.(*stdlib.Conn).Conn()
		return native.Close()
	}); err != nil {
		t.Fatal(err)
	}
	_, err := conn.ExecContext(ctx, "SELECT 1")
	if !errors.Is(err, driver.ErrBadConn) {
		t.Errorf("exec on a closed conn: %v, want driver.ErrBadConn", err)
	}
	conn.Close()
	// The DB discards the bad connection and opens another.
	var pid int
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatalf("query after the close: %v", err)
	}
	if uint32(pid) == native.PID() {
		t.Error("the closed connection was reused")
	}
}

// A connection the server ended fails the statement that finds out (it
// was sent: not ErrBadConn, it may have run), and is then discarded.
func TestTerminatedBackend(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 2)
	conn := pinConn(t, db)
	var pid int
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	_, err := conn.ExecContext(ctx, "SELECT 1")
	if err == nil {
		t.Fatal("exec on a terminated backend succeeded")
	}
	conn.Close()
	var n int
	for range 3 { // every pooled connection works
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
			t.Fatalf("query after the terminate: %v", err)
		}
	}
}

// A connection whose transaction was left open by native use is not
// returned to the pool as is.
func TestResetSessionInTransaction(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	conn := pinConn(t, db)
	if err := conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().Exec(context.Background(), "BEGIN; SET LOCAL application_name = 'left_in_tx'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	var app string
	if err := db.QueryRowContext(ctx, "SELECT current_setting('application_name')").Scan(&app); err != nil {
		t.Fatal(err)
	}
	if app == "left_in_tx" {
		t.Error("a connection left in a transaction was reused")
	}
}

func TestConnectorErrors(t *testing.T) {
	if _, err := sql.Open("pgline", "host=localhost port=notaport"); err == nil {
		t.Error("sql.Open with a bad DSN succeeded")
	}
	var cn stdlib.Connector
	if _, err := cn.Connect(context.Background()); err == nil {
		t.Error("zero Connector connected")
	}
	db, err := sql.Open("pgline", srv.DSN("user=nobody_here"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.PingContext(testCtx(t)); err == nil {
		t.Error("ping as an unknown user succeeded")
	}
	drv := db.Driver()
	c, err := drv.Open(srv.DSN())
	if err != nil {
		t.Fatalf("Driver.Open: %v", err)
	}
	c.Close()
}
