package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// PinCPU pins the server's postmaster, and with it the processes it forks
// from then on (the backends of new connections, the handlers of cancel
// requests), to the CPUs of list, in taskset's form ("0", "0-1"). Tests
// of timing races use it to make a rare interleaving likely. It fails
// when taskset is not installed or the server is not one pgtest started.
func (s *Server) PinCPU(list string) error {
	if s.External {
		return errors.New("pgtest: PinCPU: the server was not started by pgtest")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return fmt.Errorf("pgtest: PinCPU: %w (Debian: apt-get install util-linux)", err)
	}
	b, err := os.ReadFile(s.DataDir + "/postmaster.pid")
	if err != nil {
		return fmt.Errorf("pgtest: PinCPU: %w", err)
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	if out, err := exec.Command(taskset, "-p", "-c", list, strings.TrimSpace(pid)).CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: PinCPU: taskset: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
