package pgtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stop shuts the cluster down (pg_ctl stop -m immediate), makes sure no
// server process is left, and removes its temporary directory. A stopped
// standby leaves its primary's synchronous standbys. Stop is idempotent:
// later calls return nil. After Shutdown it only removes the files. For an
// external server it does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.External {
		s.stopped = true
		return nil
	}
	s.stopped = true
	var errs []error
	if s.baseDir != "" {
		if s.DataDir != "" {
			errs = append(errs, stopCluster(s.bins, s.owner, s.baseDir, s.DataDir))
		}
		if s.lock != nil {
			s.lock.Close()
		}
		if err := os.RemoveAll(s.baseDir); err != nil {
			errs = append(errs, fmt.Errorf("pgtest: remove %s: %w", s.baseDir, err))
		}
	}
	if s.upstream != nil {
		errs = append(errs, s.upstream.dropStandby(s.appName))
	}
	return errors.Join(errs...)
}

// checkOwn returns an error unless s is a cluster pgtest started and has
// not stopped; op names the method. s.mu must be held.
func (s *Server) checkOwn(op string) error {
	if s.External {
		return fmt.Errorf("pgtest: %s: the server is the external one named by %s; only clusters pgtest starts can do this", op, DSNEnv)
	}
	if s.stopped {
		return fmt.Errorf("pgtest: %s: the server was stopped", op)
	}
	return nil
}

// stopCluster stops the postmaster of dataDir, if one runs, and waits until
// it is gone, killing it if pg_ctl could not.
func stopCluster(bins binaries, owner *account, dir, dataDir string) error {
	pid := postmasterPID(dataDir)
	if pid == 0 || !postmasterRunning(pid, dataDir) {
		return nil
	}
	s := &Server{bins: bins, owner: owner, baseDir: dir}
	stopErr := s.run(bins.pgctl, "stop", "-D", dataDir, "-m", "immediate", "-w", "-t", "30", "-s")
	if waitGone(pid, dataDir, 10*time.Second) {
		return nil
	}
	killProcess(pid)
	if waitGone(pid, dataDir, 5*time.Second) {
		return nil
	}
	if stopErr == nil {
		stopErr = errors.New("pg_ctl stop reported success")
	}
	return fmt.Errorf("pgtest: postmaster %d of %s still running after stop and SIGKILL: %w", pid, dataDir, stopErr)
}

// postmasterPID returns the pid in dataDir/postmaster.pid, or 0.
func postmasterPID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// waitGone waits up to d for the postmaster pid of dataDir to exit.
func waitGone(pid int, dataDir string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for postmasterRunning(pid, dataDir) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
