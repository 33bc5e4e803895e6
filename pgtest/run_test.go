package pgtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRunFailure runs this test binary with options that cannot start: Run
// must say why and exit 1, never skip.
func TestRunFailure(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestVersion$", "-test.count=1")
	cmd.Env = append(os.Environ(), runFailEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit = %v, want exit status 1; output:\n%s", err, stderr.String())
	}
	out := stderr.String()
	if !strings.Contains(out, "pgtest: cannot start PostgreSQL") || !strings.Contains(out, "Users[0].Name is empty") {
		t.Errorf("output does not explain the failure:\n%s", out)
	}
	if strings.Contains(out, "PASS") || strings.Contains(out, "--- ") {
		t.Errorf("tests ran without a server:\n%s", out)
	}
}

func TestRunNilServer(t *testing.T) {
	if code := Run(nil, Options{}, nil); code != 1 {
		t.Errorf("Run with a nil **Server = %d, want 1", code)
	}
}
