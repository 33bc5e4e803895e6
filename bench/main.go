// Command bench runs pgline, pgx (native), pgx through database/sql,
// lib/pq and a raw protocol floor side by side on one PostgreSQL server,
// on workloads taken from published driver benchmarks, and writes a
// report: a table on the terminal, results.json, charts and index.html.
//
// Run it from the repository root:
//
//	go -C bench run .          # every workload, 5 interleaved rounds
//	go -C bench run . -quick   # one short round, about a minute (CI)
//
// See -h for the flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command; it returns the exit code: 0, 1 when the run failed
// (server unreachable, a driver failed a case), 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %s\n", oneLine(err.Error()))
		return 2
	}
	if opts.cpuprof != "" {
		f, err := os.Create(opts.cpuprof)
		if err != nil {
			fmt.Fprintf(stderr, "bench: -cpuprofile: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "bench: -cpuprofile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, opts, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %s\n", oneLine(err.Error()))
		return 1
	}
	return 0
}
