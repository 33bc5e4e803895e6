package pgline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
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
	if testing.Short() {
		t.Skip("starts a server of its own")
	}
	s, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	pinned := pinServer(t, s)
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

// pinServer pins s's postmaster, and with it the backends and cancel
// request handlers it forks, to CPU 0, and reports whether it could.
func pinServer(t *testing.T, s *pgtest.Server) bool {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Log("no taskset: the server is not pinned, and the race is rarer")
		return false
	}
	b, err := os.ReadFile(s.DataDir + "/postmaster.pid")
	if err != nil {
		t.Logf("postmaster.pid: %v", err)
		return false
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	if out, err := exec.Command(taskset, "-p", "-c", "0", strings.TrimSpace(pid)).CombinedOutput(); err != nil {
		t.Logf("taskset: %v: %s", err, out)
		return false
	}
	return true
}
