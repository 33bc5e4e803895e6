package main

import (
	"math"
	"sort"
	"time"
)

// median returns the median of xs, ignoring NaNs; NaN when none is left.
func median(xs []float64) float64 {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// medianIndex returns the index in xs of the value at the median rank
// (the lower one for an even count), or -1 for an empty xs.
func medianIndex(xs []float64) int {
	if len(xs) == 0 {
		return -1
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	return idx[(len(xs)-1)/2]
}

// ratios divides a by b round by round; a round missing on either side,
// or with a zero divisor, gives NaN.
func ratios(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		if i >= len(b) || b[i] == 0 || math.IsNaN(b[i]) {
			out[i] = math.NaN()
			continue
		}
		out[i] = a[i] / b[i]
	}
	return out
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// sorted durations; 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// requestSummary is the Mapepire report of one run of requests.
type requestSummary struct {
	SumNS      int64 `json:"sum_ns"`
	AvgNS      int64 `json:"avg_ns"`
	FastestNS  int64 `json:"fastest_ns"`
	FastestIdx int   `json:"fastest_index"`
	SlowestNS  int64 `json:"slowest_ns"`
	SlowestIdx int   `json:"slowest_index"`
}

// summarize returns the sum, average and the fastest and slowest
// request with their index (the first one on ties).
func summarize(lat []time.Duration) requestSummary {
	var s requestSummary
	if len(lat) == 0 {
		return s
	}
	s.FastestNS, s.SlowestNS = int64(lat[0]), int64(lat[0])
	for i, d := range lat {
		s.SumNS += int64(d)
		if int64(d) < s.FastestNS {
			s.FastestNS, s.FastestIdx = int64(d), i
		}
		if int64(d) > s.SlowestNS {
			s.SlowestNS, s.SlowestIdx = int64(d), i
		}
	}
	s.AvgNS = s.SumNS / int64(len(lat))
	return s
}
