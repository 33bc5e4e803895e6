//go:build !unix

package delayproxy

import "time"

// spinBelow is how close to its due time a chunk is waited for by
// yielding instead of sleeping: the runtime's timers can overshoot a short
// sleep by up to a millisecond, which would double a 1 ms RTT.
const spinBelow = 1500 * time.Microsecond

func preciseSleep(d time.Duration) { time.Sleep(d) }
