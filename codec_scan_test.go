package pgline

// What a Scan destination holds after Scan returns.

import (
	"database/sql"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCodecRowScanRawBytesStable: Row.Scan into *sql.RawBytes (a
// destination pgtype supports) hands out a slice of the connection's read
// buffer, but Row.Scan closes the rows and hands the turn on before
// returning: the next turn holder reads its reply into the same buffer
// while the caller still holds the slice. (database/sql refuses RawBytes
// in Row.Scan for this reason; Rows.Scan's documentation says nothing
// refers to the connection's buffers after Scan returns.)
func TestCodecRowScanRawBytesStable(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	want := strings.Repeat("a", 60)
	var raw sql.RawBytes
	if err := c.QueryRow(ctx, "SELECT repeat('a', 60)").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var s string
				c.QueryRow(ctx, "SELECT repeat('b', 60)").Scan(&s)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	got := string(raw)
	close(stop)
	wg.Wait()
	if got != want {
		t.Fatalf("RawBytes from Row.Scan changed after Scan returned: %q", got)
	}
}
