//go:build unix

package main

import (
	"syscall"
	"time"
)

// processUsage returns the CPU time this process has used, user and
// system, and the minor page faults it took (memory the kernel had to
// map and zero on first touch), from getrusage; 0 when it cannot be read.
func processUsage() (cpu time.Duration, faults int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Minflt)
}
