//go:build !unix

package main

import "time"

// processCPU cannot read the process's CPU time on this system: the
// column shows a dash.
func processCPU() time.Duration { return 0 }
