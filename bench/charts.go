package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// chart is one written chart file.
type chart struct {
	File  string `json:"file"`
	Title string `json:"title"`
	Kind  string `json:"kind"` // "throughput" or "latency"
}

// writeCharts writes, into dir, one bar chart per workload (throughput
// relative to pgx, a bar per driver for each case) and one per-request
// latency chart per pool case.
func writeCharts(dir string, rep *report) ([]chart, error) {
	var out []chart
	var order []string
	byWorkload := map[string][]*caseResult{}
	for _, cr := range rep.Cases {
		if byWorkload[cr.Workload] == nil {
			order = append(order, cr.Workload)
		}
		byWorkload[cr.Workload] = append(byWorkload[cr.Workload], cr)
	}
	for _, w := range order {
		file := "throughput-" + w + ".svg"
		title := fmt.Sprintf("%s: throughput relative to pgx (median of per-round ratios)", w)
		if err := barChart(filepath.Join(dir, file), title, "× pgx (higher is faster)", rep.Meta.Drivers, byWorkload[w], vsPgx); err != nil {
			return nil, err
		}
		out = append(out, chart{File: file, Title: title, Kind: "throughput"})
	}
	// The concurrency sweep: absolute throughput and p99 as G grows, with
	// no added RTT and through the delay proxy.
	var rttSweep []*caseResult
	for _, cr := range byWorkload["rtt"] {
		if strings.HasPrefix(cr.Name, "rtt/sweep/") {
			rttSweep = append(rttSweep, cr)
		}
	}
	for _, sw := range []struct {
		prefix, what string
		cases        []*caseResult
	}{
		{"sweep", "sweep", byWorkload["sweep"]},
		{"sweep-rtt", "sweep at " + rep.Meta.RTT + " RTT", rttSweep},
	} {
		if len(sw.cases) == 0 {
			continue
		}
		for _, c := range []struct {
			file, title, label string
			value              func(*driverResult) *float64
		}{
			{sw.prefix + "-throughput.svg", sw.what + ": point lookups per second, G goroutines through a pool", "lookups/s (higher is better)", opsPerSec},
			{sw.prefix + "-p99.svg", sw.what + ": 99th percentile latency, G goroutines through a pool", "p99 ms (lower is better)", p99ms},
		} {
			if err := barChart(filepath.Join(dir, c.file), c.title, c.label, rep.Meta.Drivers, sw.cases, c.value); err != nil {
				return nil, err
			}
			out = append(out, chart{File: c.file, Title: c.title, Kind: "throughput"})
		}
	}
	for _, cr := range rep.Cases {
		has := false
		for _, d := range cr.Drivers {
			has = has || len(d.LatenciesNS) > 0
		}
		if !has {
			continue
		}
		file := "latency-" + strings.NewReplacer("/", "-").Replace(cr.Name) + ".svg"
		title := fmt.Sprintf("%s: latency of each request, in request order", cr.Name)
		if err := latencyChart(filepath.Join(dir, file), title, cr); err != nil {
			return nil, err
		}
		out = append(out, chart{File: file, Title: title, Kind: "latency"})
	}
	return out, nil
}

// Values for barChart: nil leaves the bar out.
func vsPgx(d *driverResult) *float64 { return d.VsPgx }

func opsPerSec(d *driverResult) *float64 {
	if d.Status != statusOK {
		return nil
	}
	return &d.OpsPerSec
}

func p99ms(d *driverResult) *float64 {
	if d.Status != statusOK {
		return nil
	}
	v := float64(d.P99NS) / 1e6
	return &v
}

// barChart draws, for each case, one bar per driver: value of its result.
func barChart(path, title, label string, drivers []string, cases []*caseResult, value func(*driverResult) *float64) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = label
	p.Y.Min = 0
	names := make([]string, len(cases))
	for i, cr := range cases {
		names[i] = strings.TrimPrefix(cr.Name, cr.Workload+"/")
	}
	const barWidth = 9
	for k, name := range drivers {
		vals := make(plotter.Values, len(cases))
		for i, cr := range cases {
			if d := cr.find(name); d != nil {
				if v := value(d); v != nil {
					vals[i] = *v
				}
			}
		}
		b, err := plotter.NewBarChart(vals, vg.Points(barWidth))
		if err != nil {
			return err
		}
		b.Color = plotutil.Color(k)
		b.LineStyle.Width = 0
		b.Offset = vg.Points(barWidth * (float64(k) - float64(len(drivers)-1)/2))
		p.Add(b)
		p.Legend.Add(name, b)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.6
	p.X.Tick.Label.XAlign = -1
	width := max(8*vg.Inch, vg.Length(len(cases)*len(drivers))*vg.Points(barWidth+2))
	return p.Save(width, 5*vg.Inch, path)
}

func latencyChart(path, title string, cr *caseResult) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "request (in order)"
	p.Y.Label.Text = "latency (ms, includes queueing)"
	p.Y.Min = 0
	for k, d := range cr.Drivers {
		if len(d.LatenciesNS) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(d.LatenciesNS))
		for i, ns := range d.LatenciesNS {
			xys[i] = plotter.XY{X: float64(i), Y: float64(ns) / 1e6}
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(k)
		s.Color = plotutil.Color(k)
		s.Radius = vg.Points(1.5)
		p.Add(l, s)
		p.Legend.Add(d.Driver, l, s)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(9*vg.Inch, 4.5*vg.Inch, path)
}
