package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestQuickRunWritesReport(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-quick", "-only", "point,pool,sweep", "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	js, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) == 0 || rep.Cases[0].Name != "point" {
		t.Fatalf("results.json cases: %+v", rep.Cases)
	}
	want := map[string]bool{namePgx: true, namePgxSQL: true, nameLibPQ: true, nameFloor: true, namePgline: true}
	for _, cr := range rep.Cases {
		for _, d := range cr.Drivers {
			if !d.ok() || d.OpsPerSec <= 0 {
				t.Errorf("%s/%s: status %s, %v ops/s, error %q", cr.Name, d.Driver, d.Status, d.OpsPerSec, d.Error)
			}
			if cr.Name == "point" {
				delete(want, d.Driver)
				if d.Driver == nameFloor && (d.VsFloor == nil || *d.VsFloor != 1) {
					t.Errorf("floor's ratio to itself is %v", fmtRatio(d.VsFloor))
				}
			}
			// pool/<shape>/<mode>/<requests>[/rows10]: one fixed burst.
			if f := strings.Split(cr.Name, "/"); f[0] == "pool" {
				if n, _ := strconv.Atoi(f[3]); len(d.LatenciesNS) != n {
					t.Errorf("%s/%s: %d request latencies, want %d", cr.Name, d.Driver, len(d.LatenciesNS), n)
				}
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("drivers missing from point: %v", want)
	}
	for _, f := range []string{"index.html", "throughput-point.svg", "throughput-pool.svg", "latency-pool-pool5-all-50.svg", "sweep-throughput.svg", "sweep-p99.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !bytes.Contains(html, []byte(`src="throughput-point.svg"`)) {
		t.Error("index.html does not embed the point chart")
	}
	if !strings.Contains(stdout.String(), "vs floor") || !strings.Contains(stdout.String(), "point  ") {
		t.Errorf("no table on stdout:\n%s", stdout.String())
	}
}

// readmeFigures maps each row of the README's figures table (its first
// cell) to the case it reports.
var readmeFigures = map[string]string{
	"connect (TCP, SCRAM-SHA-256)":              "connect/scram",
	"point select by primary key":               "point",
	"1,000 rows × 6 columns":                    "rows/1000",
	"10,000 rows × 6 columns":                   "rows/10000",
	"insert, LARGE document (280 words, jsonb)": "insert/large",
	"bytea 5 MiB into `[]byte`":                 "large/bytea_5MiB",
	"bytea 50 MiB into `[]byte`":                "large/bytea_50MiB",
	"bytea 50 MiB through `StreamTo`":           "large/bytea_50MiB/stream",
	"COPY FROM, 1,000,000 rows":                 "copy/1000000",
	"batch of 10 `SELECT $1::int` (pgx Batch)":  "pipeline/param/batch10",
	"20 goroutines, one connection":             "pipeline/param/conc20",
	"40 goroutines, one connection, 1 ms RTT":   "rtt/pipeline/cached/conc40",
	"1000 point queries, 1 ms RTT: 1000 goroutines on one Conn (pgline) vs a Batch of 1000 (pgx)": "rtt/pipeline/cached/own1000",
	"500 requests at once, one connection, 1 ms RTT":                                              "rtt/pool/conn1/all/500",
	"500 × 10-row queries at once, pool of 5, 1 ms RTT":                                           "rtt/pool/pool5/all/500/rows10",
	"500 × 10-row queries at once, pool of 5, no added RTT":                                       "pool/pool5/all/500/rows10",
}

// readmeProseCases are cases the text under the table quotes (the two
// sides of own1000 as separate cases).
var readmeProseCases = []string{"rtt/pipeline/cached/batch1000", "rtt/pipeline/cached/conc1000"}

// TestQuickCoversREADMEFigures: every row of the README's figures table
// has a case, and -quick runs a small version of it under the same name as
// the full run, so that a first run checks each claim and can be compared
// with docs/bench/results.txt. No server: it reads the case lists.
func TestQuickCoversREADMEFigures(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(md), "\n## Figures\n")
	if !ok {
		t.Fatal("README.md has no \"## Figures\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var rows []string
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if cell == "case" || strings.Trim(cell, "-:") == "" {
			continue // header and separator
		}
		rows = append(rows, cell)
	}
	if len(rows) == 0 {
		t.Fatal("no rows in the README's figures table")
	}
	names := func(quick bool) map[string]bool {
		m := map[string]bool{}
		for _, c := range buildCases(nil, defaultSizes(quick)) {
			if m[c.name] {
				t.Errorf("quick=%v: case %s twice", quick, c.name)
			}
			m[c.name] = true
		}
		return m
	}
	quick, full := names(true), names(false)
	want := append([]string(nil), readmeProseCases...)
	seen := map[string]bool{}
	for _, row := range rows {
		name, ok := readmeFigures[row]
		if !ok {
			t.Errorf("README figures row %q has no case in readmeFigures", row)
			continue
		}
		seen[row] = true
		want = append(want, name)
	}
	for row := range readmeFigures {
		if !seen[row] {
			t.Errorf("readmeFigures row %q is not in the README's figures table", row)
		}
	}
	for _, name := range want {
		if !full[name] {
			t.Errorf("case %s is not in the full run", name)
		}
		if !quick[name] {
			t.Errorf("case %s is not in -quick", name)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"}, {"-only", "nope"}, {"-rtt", "-1ms"}, {"-match", "("}, {"-bogus"}, {"extra"},
		{"-drivers", "odbc"}, {"-rtt", "soon"}, {"-round-time", "-1s"}, {"-round-time", "2m"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.HasPrefix(s, "bench: ") {
			t.Errorf("%v: stderr %q, want one line", args, s)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "-quick") {
		t.Errorf("-h: exit %d, output %q", code, stdout.String())
	}
}

func TestUnreachableDSN(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	var stdout, stderr bytes.Buffer
	dsn := "host=127.0.0.1 port=" + port + " user=u password=sekret-pw sslmode=disable connect_timeout=5"
	if code := run([]string{"-dsn", dsn, "-out", t.TempDir()}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, stderr.String())
	}
	s := stderr.String()
	if strings.Count(s, "\n") != 1 || !strings.Contains(s, "cannot connect") {
		t.Errorf("stderr %q, want one line saying it cannot connect", s)
	}
	if strings.Contains(s, "sekret-pw") || strings.Contains(stdout.String(), "sekret-pw") {
		t.Error("the password leaked into the output")
	}
}

func TestWithHostPort(t *testing.T) {
	if got := withHostPort("host=db port=5432 user=u", "127.0.0.1", "9"); got != "host=db port=5432 user=u host=127.0.0.1 port=9" {
		t.Errorf("key=value: %q", got)
	}
	if got := withHostPort("postgres://u:p@db:5432/x?sslmode=disable", "127.0.0.1", "9"); got != "postgres://u:p@127.0.0.1:9/x?sslmode=disable" {
		t.Errorf("URL: %q", got)
	}
}

func TestAppendTextArray(t *testing.T) {
	got := string(appendTextArray(nil, []string{"a", `b"c`, `d\e`, ""}))
	if want := `{"a","b\"c","d\\e",""}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
