//go:build unix

package delayproxy

import (
	"syscall"
	"time"
)

// spinBelow is how close to its due time a chunk is waited for by
// yielding instead of sleeping. nanosleep overshoots by about 0.1 ms
// (timer slack), far less than the runtime's timers, which round a short
// sleep up to a millisecond and would double a 1 ms RTT. Spinning for the
// whole wait instead would take a CPU from the server and the drivers
// measured next to the proxy.
const spinBelow = 200 * time.Microsecond

// preciseSleep sleeps for d in the nanosleep system call.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
