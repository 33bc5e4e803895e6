package main

import (
	"context"

	"github.com/pgline/pgline/pgtest"
)

// scramUser is the user the connect workload logs in as on pgtest.
var scramUser = pgtest.User{Name: "bench_scram", Password: "bench-scram-secret", Method: "scram-sha-256"}

// connectCases: open and close a connection over TCP, authenticating with
// SCRAM-SHA-256 on pgtest (with -dsn: as the DSN says), sequentially.
func connectCases(sizes) []*benchCase {
	return []*benchCase{{
		workload: "connect", name: "connect/scram", unit: "connect",
		open: func(ctx context.Context, e *env, d *driver, _ string) (*task, error) {
			dsn := e.connectDSN
			return &task{run: seq(func(ctx context.Context, i int) error {
				c, err := d.connect(ctx, dsn)
				if err != nil {
					return err
				}
				return c.Close()
			})}, nil
		},
	}}
}
