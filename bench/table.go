package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// tableHeader names the columns of the results table.
var tableHeader = []string{"case", "driver", "ops/s", "allocs/op", "B/op", "cpu/op", "p50", "p99", "peak heap", "vs pgx", "vs floor", "note"}

// tableRows returns one row of cells per (case, driver).
func tableRows(cr *caseResult) [][]string {
	var out [][]string
	for _, d := range cr.Drivers {
		row := []string{cr.Name, d.Driver}
		switch {
		case d.Status == statusUnsupported:
			row = append(row, dash, dash, dash, dash, dash, dash, dash, dash, dash, "not supported")
		case d.Status == statusError:
			row = append(row, "ERROR", dash, dash, dash, dash, dash, dash, dash, dash, oneLine(d.Error))
		case !d.ok():
			row = append(row, dash, dash, dash, dash, dash, dash, dash, dash, dash, "")
		default:
			peak := dash
			if d.PeakHeapBytes > 0 {
				peak = fmtBytes(float64(d.PeakHeapBytes))
			}
			row = append(row, fmtRate(d.OpsPerSec), fmtCount(d.AllocsPerOp), fmtBytes(d.BytesPerOp),
				fmtNS(int64(d.CPUNSPerOp)), fmtNS(d.P50NS), fmtNS(d.P99NS), peak, fmtRatio(d.VsPgx), fmtRatio(d.VsFloor), d.Note)
		}
		out = append(out, row)
	}
	return out
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// writeTable prints the results table, a blank line between cases, and
// the per-request summary of the pool cases.
func writeTable(w io.Writer, rep *report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(tableHeader, "\t"))
	for i, cr := range rep.Cases {
		if i > 0 && cr.Workload != rep.Cases[i-1].Workload {
			fmt.Fprintln(tw)
		}
		for _, row := range tableRows(cr) {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var pools []*caseResult
	for _, cr := range rep.Cases {
		for _, d := range cr.Drivers {
			if d.Requests != nil {
				pools = append(pools, cr)
				break
			}
		}
	}
	if len(pools) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nRequests (the median burst of the median round; latency includes queueing):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tdriver\tsum\taverage\tfastest (#)\tslowest (#)")
	for _, cr := range pools {
		for _, d := range cr.Drivers {
			if s := d.Requests; s != nil {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s (#%d)\t%s (#%d)\n", cr.Name, d.Driver, fmtNS(s.SumNS), fmtNS(s.AvgNS),
					fmtNS(s.FastestNS), s.FastestIdx, fmtNS(s.SlowestNS), s.SlowestIdx)
			}
		}
	}
	return tw.Flush()
}
