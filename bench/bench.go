package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgline/pgline/bench/internal/delayproxy"
	"github.com/pgline/pgline/pgtest"
)

// bench runs the whole benchmark and writes its report.
func bench(ctx context.Context, o *options, stdout io.Writer) error {
	started := time.Now()
	prog := newProgress(stdout)
	sz := defaultSizes(o.quick)
	if o.roundTime > 0 {
		sz.target = o.roundTime
	}
	cases := buildCases(o.only, sz)
	if o.match != nil {
		kept := cases[:0]
		for _, c := range cases {
			if o.match.MatchString(c.name) {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			return fmt.Errorf("-match %q selects no case", o.match)
		}
		cases = kept
	}
	var drivers []*driver
	for _, d := range allDrivers() {
		if o.drivers == nil || o.drivers[d.name] {
			drivers = append(drivers, d)
		}
	}
	if len(drivers) == 0 {
		return errors.New("-drivers selects no driver that is built")
	}

	dsn, serverKind := o.dsn, "-dsn"
	connectDSN := o.dsn // the connect workload: a SCRAM user on pgtest
	if dsn == "" {
		prog.note("starting a throwaway PostgreSQL (pgtest)…")
		// Room for the sweep's pools of 100: every driver's pool of a
		// case is open while the rounds interleave.
		srv, err := pgtest.Start(pgtest.Options{Users: []pgtest.User{scramUser}, Settings: map[string]string{"max_connections": "700"}})
		if err != nil {
			return err
		}
		defer srv.Stop()
		dsn, serverKind = srv.DSN(), "pgtest"
		connectDSN = srv.DSN("user="+scramUser.Name, "password="+scramUser.Password)
		if srv.External {
			serverKind = "pgtest (" + pgtest.DSNEnv + ")"
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	admin, err := pgx.Connect(cctx, dsn)
	cancel()
	if err != nil {
		return fmt.Errorf("cannot connect to the server: %w", err)
	}
	defer admin.Close(context.Background())

	e := &env{dsn: dsn, connectDSN: connectDSN, admin: admin, sz: sz}
	prog.note("loading data…")
	if err := load(ctx, e); err != nil {
		return err
	}
	if o.dsn != "" {
		defer admin.Exec(context.Background(), dropSchema)
	}
	for _, c := range cases {
		if c.rtt {
			proxy, rttDSN, err := startProxy(dsn, o.rtt)
			if err != nil {
				return err
			}
			defer proxy.Close()
			e.rttDSN = rttDSN
			host, port, _ := net.SplitHostPort(proxy.Addr())
			e.rttConnectDSN = withHostPort(connectDSN, host, port)
			break
		}
	}

	rep := &report{Meta: meta{
		Started: started, GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs: runtime.NumCPU(), CPUModel: cpuModel(), Server: serverKind,
		ServerVersion: admin.PgConn().ParameterStatus("server_version"),
		Rounds:        o.rounds, Quick: o.quick, RTT: o.rtt.String(),
		Command: strings.TrimSpace("go -C bench run . " + strings.Join(o.args, " ")),
	}}
	for _, d := range drivers {
		rep.Meta.Drivers = append(rep.Meta.Drivers, d.name)
	}
	r := &runner{env: e, drivers: drivers, rounds: o.rounds, prog: prog}
	failed := 0
	for i, c := range cases {
		cr, err := r.runCase(ctx, i+1, len(cases), c)
		if err != nil {
			prog.clear()
			return err
		}
		for _, d := range cr.Drivers {
			if d.Status == statusError {
				failed++
			}
		}
		rep.Cases = append(rep.Cases, cr)
	}
	prog.clear()
	rep.Meta.DurationS = time.Since(started).Seconds()
	if err := writeTable(stdout, rep); err != nil {
		return err
	}
	if err := writeReport(o.out, rep); err != nil {
		return err
	}
	abs, _ := filepath.Abs(filepath.Join(o.out, "index.html"))
	fmt.Fprintf(stdout, "\nreport: %s (%.0f s)\n", abs, rep.Meta.DurationS)
	if failed > 0 {
		return fmt.Errorf("%d driver runs failed (ERROR in the table)", failed)
	}
	return nil
}

// startProxy starts the delay proxy in front of the server dsn names and
// returns a DSN that goes through it.
func startProxy(dsn string, rtt time.Duration) (*delayproxy.Proxy, string, error) {
	pc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, "", err
	}
	if strings.HasPrefix(pc.Host, "/") {
		return nil, "", errors.New("the rtt workload needs a TCP server address, not a Unix socket")
	}
	p, err := delayproxy.Start(net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port))), rtt)
	if err != nil {
		return nil, "", err
	}
	host, port, _ := net.SplitHostPort(p.Addr())
	return p, withHostPort(dsn, host, port), nil
}

// withHostPort returns dsn pointed at host:port.
func withHostPort(dsn, host, port string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			u.Host = net.JoinHostPort(host, port)
			q := u.Query()
			q.Del("host")
			q.Del("port")
			q.Del("hostaddr")
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " host=" + host + " port=" + port
}

// cpuModel reads the CPU's name from /proc/cpuinfo where there is one.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
