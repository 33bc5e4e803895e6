package pgline

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

// TestCancelNoVictimDescribe: a statement whose ctx ends is cancelled
// (pg_sleep(5) with a 100 ms deadline) and at once another statement of a
// SQL text new to the connection is run, so that it is described first.
// PostgreSQL signals a cancelled backend twice (its pid and its process
// group); the second signal can land on that describe. The describe ran
// nothing: it must be sent again, never fail its caller, whose ctx is
// alive, with the 57014. The race needs a late second signal: the server
// is pinned to one CPU (taskset, when there is one), where it failed
// within a few rounds before the fix.
func TestCancelNoVictimDescribe(t *testing.T) {
	t.Parallel() // its own clusters (see ownClusters)
	if testing.Short() {
		t.Skip("starts a server of its own")
	}
	s, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	pinErr := s.PinCPU("0")
	if pinErr != nil {
		t.Logf("the server is not pinned, and the race is rarer: %v", pinErr)
	}
	pinned := pinErr == nil
	const rounds = 20
	for i := range rounds {
		c := connect(t, s.DSN())
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		var n int
		err := c.QueryRow(ctx, "SELECT 0 FROM pg_sleep(5)").Scan(&n)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: pg_sleep(5) with a 100 ms deadline: %v", i, err)
		}
		sql := fmt.Sprintf("SELECT %d + count(*)::int FROM information_schema.columns WHERE false", i)
		if err := c.QueryRow(testCtx(t), sql).Scan(&n); err != nil {
			t.Fatalf("round %d (server pinned: %v): the statement after a cancelled one failed: %v", i, pinned, err)
		}
		if n != i {
			t.Fatalf("round %d: got %d", i, n)
		}
		c.Close()
	}
}
