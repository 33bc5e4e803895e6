package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
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
			if strings.HasPrefix(cr.Name, "pool/") && len(d.LatenciesNS) != 50 {
				t.Errorf("%s/%s: %d request latencies, want 50", cr.Name, d.Driver, len(d.LatenciesNS))
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

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"}, {"-only", "nope"}, {"-rtt", "-1ms"}, {"-match", "("}, {"-bogus"}, {"extra"},
		{"-drivers", "odbc"}, {"-rtt", "soon"},
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
