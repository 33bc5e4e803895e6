package pgline_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/pgline/pgline"
)

// BeginFunc commits when the function returns nil and rolls back when it
// returns an error (or panics).
func ExampleBeginFunc() {
	ctx := context.Background()
	pool, err := pgline.NewPool(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	// A temporary table belongs to one session: run everything on one
	// connection.
	err = pool.AcquireFunc(ctx, func(c *pgline.PoolConn) error {
		if _, err := c.Exec(ctx, "CREATE TEMP TABLE ledger (n int)"); err != nil {
			return err
		}
		err := pgline.BeginFunc(ctx, c.Conn, func(tx *pgline.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO ledger VALUES (1)")
			return err
		})
		if err != nil {
			return err
		}
		errOverdrawn := errors.New("overdrawn")
		err = pgline.BeginFunc(ctx, c.Conn, func(tx *pgline.Tx) error {
			tx.Exec(ctx, "INSERT INTO ledger VALUES (2)")
			return errOverdrawn // rolled back
		})
		fmt.Println(err)
		var sum int
		if err := c.QueryRow(ctx, "SELECT sum(n) FROM ledger").Scan(&sum); err != nil {
			return err
		}
		fmt.Println(sum)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// overdrawn
	// 1
}

// AfterConnect prepares every new connection, here a Pool's: session
// settings, or types to register.
func ExampleConfig_afterConnect() {
	ctx := context.Background()
	cfg, err := pgline.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgline.Conn) error {
		_, err := c.Exec(ctx, "SET TIME ZONE 'Europe/Paris'")
		return err
	}
	pool, err := pgline.NewPoolConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	var tz string
	if err := pool.QueryRow(ctx, "SELECT current_setting('TimeZone')").Scan(&tz); err != nil {
		log.Fatal(err)
	}
	fmt.Println(tz)
	// Output: Europe/Paris
}
