package main

import (
	"context"

	"github.com/pgline/pgline/pgtest"
)

// scramUser is the user the connect workload logs in as on pgtest.
var scramUser = pgtest.User{Name: "bench_scram", Password: "bench-scram-secret", Method: "scram-sha-256"}

// connectCases: open and close a connection over TCP, authenticating with
// SCRAM-SHA-256 on pgtest (with -dsn: as the DSN says), sequentially; with
// rtt, through the delay proxy (rtt/connect/scram), where each round trip
// of the startup costs the RTT.
func connectCases(_ sizes, rtt bool) []*benchCase {
	workload, name := "connect", "connect/scram"
	if rtt {
		workload, name = "rtt", "rtt/connect/scram"
	}
	return []*benchCase{{
		workload: workload, name: name, unit: "connect", rtt: rtt,
		open: func(ctx context.Context, e *env, d *driver, _ string) (*task, error) {
			dsn := e.connectDSN
			if rtt {
				dsn = e.rttConnectDSN
			}
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
