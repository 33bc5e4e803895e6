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

// A synchronous standby has every commit as soon as the primary answers
// it; after the primary crashes, the promoted standby takes the writes.
// (Not run by go test: TestSynchronousFailover does the same and more.)
func ExampleServer_StartStandby() {
	primary, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer primary.Stop()
	standby, err := primary.StartStandby(pgtest.StandbyOptions{Synchronous: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer standby.Stop()

	if err := primary.Exec("CREATE TABLE t (n int); INSERT INTO t VALUES (1)"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(standby.Query("SELECT n, pg_is_in_recovery() FROM t")) // 1|t <nil>

	if err := primary.Shutdown("immediate"); err != nil {
		fmt.Println(err)
		return
	}
	if err := standby.Promote(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(standby.Query("INSERT INTO t VALUES (2) RETURNING n, pg_is_in_recovery()")) // 2|f <nil>
}
