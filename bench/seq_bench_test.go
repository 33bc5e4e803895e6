package main

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSeq runs the bench command's sequential cases point, rows/1000
// and rows/10000 for pgline, pgx, both through database/sql, and the
// floor, in one process, so that their ratios are measured under the same
// conditions (with -count, in turn). Besides time per query it reports
// the client's CPU per query (cpu-ns/op), which the server's share of the
// machine's two cores does not blur, and allocations:
//
//	go -C bench test -run '^$' -bench Seq -count 6 .
func BenchmarkSeq(b *testing.B) {
	dsn := benchServer(b)
	var cases []*benchCase
	for _, c := range append(pointCases(sizes{}), rowsCases(sizes{rowCounts: []int{1000, 10000}})...) {
		if c.name != "rows/struct100" {
			cases = append(cases, c)
		}
	}
	drivers := []*driver{pglineDriver(), pgxDriver(), pglineSQLDriver(), pgxSQLDriver(), floorClientDriver()}
	for _, bc := range cases {
		for _, d := range drivers {
			b.Run(fmt.Sprintf("%s/%s", bc.name, d.name), func(b *testing.B) {
				ctx := context.Background()
				t, err := bc.open(ctx, &env{dsn: dsn}, d, dsn)
				if err == errUnsupported {
					b.Skip(err)
				}
				if err != nil {
					b.Fatal(err)
				}
				defer t.close()
				if err := t.run(ctx, 20, nil); err != nil {
					b.Fatal(err)
				}
				c0, _ := processUsage()
				b.ReportAllocs()
				b.ResetTimer()
				if err := t.run(ctx, b.N, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c1, _ := processUsage()
				b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
