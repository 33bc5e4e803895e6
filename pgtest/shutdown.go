package pgtest

import (
	"fmt"
	"time"
)

// Shutdown stops the postmaster with pg_ctl stop -m mode ("smart", "fast"
// or "immediate") and waits until it is gone, keeping the cluster's files
// for Restart. "immediate" is a crash as far as the cluster knows: the
// next start runs crash recovery. Shutdown of a server that is not running
// does nothing. Stop may follow at any time; it then only removes the
// files.
func (s *Server) Shutdown(mode string) error {
	switch mode {
	case "smart", "fast", "immediate":
	default:
		return fmt.Errorf("pgtest: Shutdown: invalid mode %q (want smart, fast or immediate)", mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOwn("Shutdown"); err != nil {
		return err
	}
	return s.shutdown(mode)
}

// shutdown stops a running postmaster in mode. s.mu must be held.
func (s *Server) shutdown(mode string) error {
	pid := postmasterPID(s.DataDir)
	if pid == 0 || !postmasterRunning(pid, s.DataDir) {
		return nil
	}
	if err := s.run(s.bins.pgctl, "stop", "-D", s.DataDir, "-m", mode, "-w", "-t", "60", "-s"); err != nil {
		return err
	}
	if !waitGone(pid, s.DataDir, 10*time.Second) {
		return fmt.Errorf("pgtest: postmaster %d of %s still running after pg_ctl stop -m %s", pid, s.DataDir, mode)
	}
	return nil
}

// Restart starts the server again on the same port, after Shutdown or a
// crash, and returns once it accepts connections; a server still running
// is first shut down in "fast" mode. A standby comes back as a standby and
// reconnects to its primary by itself. Restart fails if another process
// took the port meanwhile.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOwn("Restart"); err != nil {
		return err
	}
	if err := s.shutdown("fast"); err != nil {
		return err
	}
	_, err := s.startOn(s.Port)
	return err
}
