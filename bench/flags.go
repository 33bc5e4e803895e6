package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// options are the command-line flags.
type options struct {
	dsn     string
	only    map[string]bool
	match   *regexp.Regexp // nil: every case of the selected workloads
	drivers map[string]bool
	quick   bool
	rtt     time.Duration
	rounds  int
	// roundTime, when positive, is the wall time a calibrated round aims
	// for instead of the default (250ms; -quick 20ms).
	roundTime time.Duration
	out       string
	cpuprof   string // -cpuprofile: write the run's Go CPU profile there
	args      []string
}

const usageText = `Usage: go -C bench run . [flags]

Runs pgline, pgx, pgx through database/sql, lib/pq and a raw protocol floor
side by side on the same PostgreSQL and writes a report with charts.
With no -dsn it starts a throwaway server (pgtest).

Flags:
`

func newFlagSet(o *options) (*flag.FlagSet, *string, *string, *string) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.dsn, "dsn", "", "benchmark this server (key=value or postgres:// URL) instead of a throwaway one; tables bench_* are created and dropped")
	only := fs.String("only", "", "comma list of workloads to run: "+strings.Join(workloadNames, ","))
	drivers := fs.String("drivers", "", "comma list of drivers to run (default all): pgline,pgline/stdlib,pgx,pgx/stdlib,lib/pq,floor")
	fs.BoolVar(&o.quick, "quick", false, "one round, small sizes and short loops: a small version of every case of the README's figures (CI; about a minute)")
	fs.DurationVar(&o.rtt, "rtt", time.Millisecond, "round-trip time the delay proxy adds in the rtt workload")
	fs.IntVar(&o.rounds, "rounds", 5, "measured rounds per case (the median is reported); -quick makes the default 1")
	fs.DurationVar(&o.roundTime, "round-time", 0, "wall time a calibrated round aims for (default 250ms, -quick 20ms); longer rounds average out the machine's bursts")
	fs.StringVar(&o.out, "out", "report", "directory for results.json, index.html and the charts")
	fs.StringVar(&o.cpuprof, "cpuprofile", "", "write a Go CPU profile of the whole run to this file (for go tool pprof); the server's time is not in it")
	match := fs.String("match", "", "regular expression: run only the cases whose name it matches (e.g. 'cached/(batch|conc)1000')")
	return fs, only, drivers, match
}

// usage returns the help text.
func usage() string {
	var o options
	fs, _, _, _ := newFlagSet(&o)
	var b strings.Builder
	b.WriteString(usageText)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

// parseFlags reads args; flag.ErrHelp means -h was given.
func parseFlags(args []string) (*options, error) {
	o := &options{args: args}
	fs, only, drivers, match := newFlagSet(o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%v (see -h)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see -h)", fs.Arg(0))
	}
	roundsSet := false
	fs.Visit(func(f *flag.Flag) { roundsSet = roundsSet || f.Name == "rounds" })
	if o.quick && !roundsSet {
		o.rounds = 1
	}
	if o.rounds < 1 || o.rounds > 1000 {
		return nil, fmt.Errorf("-rounds %d: want 1 to 1000", o.rounds)
	}
	if o.roundTime < 0 || o.roundTime > time.Minute {
		return nil, fmt.Errorf("-round-time %v: want 0 to 1m", o.roundTime)
	}
	if o.rtt < 0 || o.rtt > 10*time.Second {
		return nil, fmt.Errorf("-rtt %v: want 0 to 10s", o.rtt)
	}
	if strings.TrimSpace(o.out) == "" {
		return nil, errors.New("-out is empty")
	}
	var err error
	if o.only, err = parseOnly(*only); err != nil {
		return nil, err
	}
	if o.drivers, err = parseDrivers(*drivers); err != nil {
		return nil, err
	}
	if *match != "" {
		if o.match, err = regexp.Compile(*match); err != nil {
			return nil, fmt.Errorf("-match: %v", err)
		}
	}
	return o, nil
}

func parseDrivers(s string) (map[string]bool, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	known := []string{namePgline, namePglineSQL, namePgx, namePgxSQL, nameLibPQ, nameFloor}
	m := map[string]bool{}
	for _, d := range strings.Split(s, ",") {
		d = strings.TrimSpace(d)
		ok := false
		for _, k := range known {
			ok = ok || k == d
		}
		if !ok {
			return nil, fmt.Errorf("-drivers: unknown driver %q (want a comma list of %s)", d, strings.Join(known, ", "))
		}
		m[d] = true
	}
	return m, nil
}
