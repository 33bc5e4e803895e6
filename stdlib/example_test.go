package stdlib_test

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/stdlib"
)

// A program written against database/sql only: the driver name is the
// one thing that says pgline. (The DSN here is the test server's, as
// "postgres://user@host:port/db" would be in an application.)
func Example() {
	db, err := sql.Open("pgline", srv.DSN())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	var (
		n    int
		word string
		at   sql.NullTime
	)
	err = db.QueryRow("SELECT $1::int4 * 2, upper($2), NULL::timestamptz", 21, "pgline").Scan(&n, &word, &at)
	fmt.Println(n, word, at.Valid, err)
	// Output: 42 PGLINE false <nil>
}

// OpenDB takes a pgline.Config, for settings made in code.
func ExampleOpenDB() {
	cfg, err := pgline.ParseConfig(srv.DSN())
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.ApplicationName = "example"
	db := stdlib.OpenDB(cfg)
	defer db.Close()

	var name string
	err = db.QueryRow("SELECT current_setting('application_name')").Scan(&name)
	fmt.Println(name, err)
	// Output: example <nil>
}

// Raw reaches the native *pgline.Conn under a *sql.Conn, for what
// database/sql cannot express (here: the server's process ID).
func ExampleConn_Conn() {
	db, err := sql.Open("pgline", srv.DSN())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	var pid uint32
	err = conn.Raw(func(dc any) error {
		native := dc.(*stdlib.Conn).Conn()
		pid = native.PID()
		return nil
	})
	var serverPID uint32
	if err == nil {
		err = conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&serverPID)
	}
	fmt.Println(pid == serverPID && pid != 0, err)
	// Output: true <nil>
}
