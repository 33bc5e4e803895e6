package pgline_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/pgline/pgline"
)

// One Pool over a primary and its standbys: writes through the Pool go
// to the primary (target_session_attrs=read-write), reads through a view
// to a standby that is no more than pool_max_replica_lag behind, else to
// the primary. Here DATABASE_URL names one primary: the read falls back
// to it.
func ExamplePool_Target() {
	ctx := context.Background()
	// In production, for example:
	// host=db1,db2,db3 dbname=app target_session_attrs=read-write
	// load_balance_hosts=random pool_max_replica_lag=5s
	pool, err := pgline.NewPool(ctx, pgline.SetDSNParam(os.Getenv("DATABASE_URL"), "target_session_attrs", "read-write"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	reads := pool.Target("prefer-standby") // shares the Pool's connections and Close

	var onStandby bool
	if err := reads.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&onStandby); err != nil {
		log.Fatal(err)
	}
	fmt.Println("read on a standby:", onStandby)

	for _, h := range pool.Stat().Hosts {
		fmt.Println("host role:", h.Role)
	}
	// Output:
	// read on a standby: false
	// host role: primary
}
