package main

import "time"

// report is everything one run measured; it is written as results.json.
type report struct {
	Meta  meta          `json:"meta"`
	Cases []*caseResult `json:"cases"`
}

// meta describes the run and the machine.
type meta struct {
	Started       time.Time `json:"started"`
	DurationS     float64   `json:"duration_s"`
	GoVersion     string    `json:"go_version"`
	OS            string    `json:"os"`
	Arch          string    `json:"arch"`
	CPUs          int       `json:"cpus"`
	CPUModel      string    `json:"cpu_model,omitempty"`
	Server        string    `json:"server"` // "pgtest" or "-dsn"
	ServerVersion string    `json:"server_version"`
	Rounds        int       `json:"rounds"`
	Quick         bool      `json:"quick"`
	RTT           string    `json:"rtt"`
	Drivers       []string  `json:"drivers"`
	Command       string    `json:"command"`
}

// caseResult is one workload variant across drivers.
type caseResult struct {
	Workload string          `json:"workload"`
	Name     string          `json:"name"`
	Unit     string          `json:"unit"`
	RTT      bool            `json:"through_rtt_proxy"`
	Drivers  []*driverResult `json:"drivers"`
}

// Driver status in a case.
const (
	statusOK          = "ok"
	statusUnsupported = "unsupported"
	statusError       = "error"
)

// driverResult is one driver's figures in one case: medians over rounds,
// and ratios computed round by round, then their median.
type driverResult struct {
	Driver      string  `json:"driver"`
	Status      string  `json:"status"`
	Note        string  `json:"note,omitempty"`
	Error       string  `json:"error,omitempty"`
	OpsPerRound int     `json:"ops_per_round,omitempty"`
	OpsPerSec   float64 `json:"ops_per_sec,omitempty"`
	AllocsPerOp float64 `json:"allocs_per_op,omitempty"`
	BytesPerOp  float64 `json:"bytes_per_op,omitempty"`
	P50NS       int64   `json:"p50_ns,omitempty"`
	P99NS       int64   `json:"p99_ns,omitempty"`
	CPUNSPerOp  float64 `json:"client_cpu_ns_per_op,omitempty"`
	// FaultsPerOp is this process's minor page faults per operation:
	// fresh memory mapped and zeroed by the kernel on first touch.
	FaultsPerOp   float64  `json:"client_page_faults_per_op,omitempty"`
	PeakHeapBytes int64    `json:"peak_heap_bytes,omitempty"`
	VsPgx         *float64 `json:"ratio_to_pgx,omitempty"`
	VsFloor       *float64 `json:"ratio_to_floor,omitempty"`
	Rounds        []round  `json:"rounds,omitempty"`
	// Requests and LatenciesNS (per request, in request order) are from
	// the median round of the pool cases.
	Requests    *requestSummary `json:"requests,omitempty"`
	LatenciesNS []int64         `json:"latencies_ns,omitempty"`

	lats [][]time.Duration // per round, for perRequest cases
}

// round is one measured loop.
type round struct {
	Ops           int     `json:"ops"`
	ElapsedNS     int64   `json:"elapsed_ns"`
	OpsPerSec     float64 `json:"ops_per_sec"`
	AllocsPerOp   float64 `json:"allocs_per_op"`
	BytesPerOp    float64 `json:"bytes_per_op"`
	P50NS         int64   `json:"p50_ns,omitempty"`
	P99NS         int64   `json:"p99_ns,omitempty"`
	PeakHeapBytes int64   `json:"peak_heap_bytes,omitempty"`
	// CPUNSPerOp is this process's CPU time (user and system) per
	// operation: the client's share, apart from the server's.
	CPUNSPerOp float64 `json:"client_cpu_ns_per_op,omitempty"`
	// FaultsPerOp is this process's minor page faults per operation:
	// fresh memory mapped and zeroed by the kernel on first touch.
	FaultsPerOp float64 `json:"client_page_faults_per_op,omitempty"`
}

func (d *driverResult) ok() bool { return d.Status == statusOK && len(d.Rounds) > 0 }

// find returns the result of driver name, or nil.
func (c *caseResult) find(name string) *driverResult {
	for _, d := range c.Drivers {
		if d.Driver == name {
			return d
		}
	}
	return nil
}
