package pgline

// Helpers of the COPY tests (copyx_*_test.go): a keyed temp table, a row
// count that fails instead of hanging on a wedged Conn, and sources and
// sinks that are slow, fail or panic.

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// copyKeyedTable creates a temp table t(a int4 primary key, b text) on c.
func copyKeyedTable(t *testing.T, c *Conn, name string) {
	t.Helper()
	if _, err := c.Exec(testCtx(t), "CREATE TEMP TABLE "+name+"(a int4 PRIMARY KEY, b text)"); err != nil {
		t.Fatal(err)
	}
}

// copySlowWriter sleeps 5ms every 1000 writes.
type copySlowWriter struct{ n int }

func (w *copySlowWriter) Write(p []byte) (int, error) {
	if w.n++; w.n%1000 == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	return len(p), nil
}

// copyLines yields lines "i\tzzz...\n" for i = 1..n.
type copyLines struct{ i, n int }

func (r *copyLines) Read(p []byte) (int, error) {
	k := 0
	for r.i < r.n && k+80 < len(p) {
		r.i++
		line := strconv.Itoa(r.i) + "\t" + strings.Repeat("z", 50) + "\n"
		k += copy(p[k:], line)
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// copyFailAtWriter fails at its nth write.
type copyFailAtWriter struct{ n, at int }

func (w *copyFailAtWriter) Write(p []byte) (int, error) {
	if w.n++; w.n == w.at {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// copyPanicReader yields lines, then panics at its 20th read.
type copyPanicReader struct{ n int }

func (r *copyPanicReader) Read(p []byte) (int, error) {
	if r.n++; r.n == 20 {
		panic("reader exploded")
	}
	k := 0
	for k+20 < len(p) {
		k += copy(p[k:], fmt.Sprintf("%d\tv\n", r.n*100000+k))
	}
	return k, nil
}

// copyPanicWriter panics at its 1000th write.
type copyPanicWriter struct{ n int }

func (w *copyPanicWriter) Write(p []byte) (int, error) {
	if w.n++; w.n == 1000 {
		panic("writer exploded")
	}
	return len(p), nil
}
