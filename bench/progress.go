package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress shows where the run is: on a terminal one line rewritten with
// \r, otherwise one plain line per case round.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	width int // of the last terminal line, to blank it
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) elapsed() string {
	return time.Since(p.start).Truncate(time.Second).String()
}

// update shows the driver being run (terminal only).
func (p *progress) update(idx, total int, name, driver, phase string) {
	if p == nil || !p.tty {
		return
	}
	line := fmt.Sprintf("[%d/%d] %-32s %-10s %-11s elapsed %s", idx, total, name, driver, phase, p.elapsed())
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", pad))
}

// roundDone prints a plain line when the output is not a terminal.
func (p *progress) roundDone(idx, total int, name string, k, rounds int) {
	if p == nil || p.tty {
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s: round %d/%d done, elapsed %s\n", idx, total, name, k, rounds, p.elapsed())
}

// note prints a message on its own line.
func (p *progress) note(format string, args ...any) {
	if p == nil {
		return
	}
	p.clear()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// clear blanks the terminal line.
func (p *progress) clear() {
	if p.tty && p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
}
