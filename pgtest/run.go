package pgtest

import (
	"fmt"
	"os"
	"testing"
)

// Run is for TestMain. It starts a cluster with opts (or uses
// PGLINE_TEST_DSN when set), stores it in *srv, runs the tests, stops the
// cluster and returns the exit code:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Run(m, opts, &srv)) }
//
// When the cluster cannot start, Run prints why and returns 1: tests that
// need a server never skip silently. A failing Stop also makes the result 1.
func Run(m *testing.M, opts Options, srv **Server) int {
	if srv == nil {
		fmt.Fprintln(os.Stderr, "pgtest: Run needs a non-nil **Server to store the server in")
		return 1
	}
	s, err := Start(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: cannot start PostgreSQL: %v\n", err)
		return 1
	}
	*srv = s
	return runAndStop(m, s)
}

// runAndStop runs the tests and stops s even if m.Run panics.
func runAndStop(m *testing.M, s *Server) (code int) {
	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return m.Run()
}
