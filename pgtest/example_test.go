package pgtest_test

import (
	"fmt"

	"github.com/pgline/pgline/pgtest"
)

// A cluster of one's own, with a password user; DSN gives the connection
// string for the driver under test, Query checks the result through psql.
func ExampleStart() {
	srv, err := pgtest.Start(pgtest.Options{
		Users: []pgtest.User{{Name: "alice", Password: "secret", Method: "scram-sha-256"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop()

	_ = srv.DSN("user=alice", "password=secret") // for the driver under test
	if err := srv.Exec("CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2)"); err != nil {
		fmt.Println(err)
		return
	}
	out, err := srv.Query("SELECT sum(n), current_user FROM t")
	fmt.Println(out, err)
	// Output: 3|postgres <nil>
}
