package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
)

// writeReport writes results.json, the charts and index.html into dir.
func writeReport(dir string, rep *report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	charts, err := writeCharts(dir, rep)
	if err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "index.html"))
	if err != nil {
		return fmt.Errorf("index.html: %w", err)
	}
	type section struct {
		Workload string
		Rows     [][]string
	}
	var secs []section
	for _, cr := range rep.Cases {
		if len(secs) == 0 || secs[len(secs)-1].Workload != cr.Workload {
			secs = append(secs, section{Workload: cr.Workload})
		}
		s := &secs[len(secs)-1]
		s.Rows = append(s.Rows, tableRows(cr)...)
	}
	err = pageTmpl.Execute(f, map[string]any{
		"Meta": rep.Meta, "Header": tableHeader, "Sections": secs, "Charts": charts,
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("index.html: %w", err)
	}
	return nil
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pgline benchmark</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5em; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; white-space: nowrap; }
th:nth-child(-n+2), td:nth-child(-n+2), td:last-child { text-align: left; }
td:last-child { white-space: normal; color: #666; }
img { max-width: 100%; margin: 1em 0; border: 1px solid #eee; }
dt { font-weight: bold; float: left; width: 9em; } dd { margin-left: 10em; }
</style></head><body>
<h1>pgline benchmark</h1>
<dl>
<dt>started</dt><dd>{{.Meta.Started.Format "2006-01-02 15:04:05 MST"}} ({{printf "%.0f" .Meta.DurationS}} s)</dd>
<dt>machine</dt><dd>{{.Meta.OS}}/{{.Meta.Arch}}, {{.Meta.CPUs}} CPUs{{if .Meta.CPUModel}}, {{.Meta.CPUModel}}{{end}}</dd>
<dt>Go</dt><dd>{{.Meta.GoVersion}}</dd>
<dt>server</dt><dd>PostgreSQL {{.Meta.ServerVersion}} ({{.Meta.Server}})</dd>
<dt>rounds</dt><dd>{{.Meta.Rounds}}{{if .Meta.Quick}} (-quick){{end}}; RTT of the rtt workload {{.Meta.RTT}}</dd>
<dt>command</dt><dd><code>{{.Meta.Command}}</code></dd>
</dl>
<p>Each figure is the median over rounds; each round is split into turns (about ten;
one burst each in a case of a fixed request count) that the drivers take in turn,
and ratios are computed round by round before taking their median.
allocs/op and B/op come from runtime.MemStats around each measured loop; p50/p99 are
per-operation latencies; "—" means the driver does not offer that variant.</p>
<h2>Charts</h2>
{{range .Charts}}<figure><img src="{{.File}}" alt="{{.Title}}"><figcaption>{{.Title}}</figcaption></figure>
{{end}}
<h2>Results</h2>
{{range .Sections}}<h3>{{.Workload}}</h3>
<table><tr>{{range $.Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}
<p>Raw figures, every round and every request latency: <a href="results.json">results.json</a>.</p>
</body></html>
`))
