//go:build unix

package pgtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCanReach(t *testing.T) {
	closed := filepath.Join(t.TempDir(), "closed")
	if err := os.Mkdir(filepath.Join(closed), 0o700); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(closed, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	other := &account{name: "someone", uid: 54321, gid: 54321}
	err := other.canReach(inner)
	if err == nil || !strings.Contains(err.Error(), closed+" ") || !strings.Contains(err.Error(), "TMPDIR") {
		t.Errorf("canReach(%s) = %v, want an error naming %s and TMPDIR", inner, err, closed)
	}
	if err := other.canReach(os.TempDir()); err != nil {
		t.Errorf("canReach(%s) = %v", os.TempDir(), err)
	}
	var self *account
	if err := self.canReach(inner); err != nil {
		t.Errorf("current user: %v", err)
	}

	// As root, Start must explain instead of failing inside initdb.
	if os.Geteuid() == 0 {
		t.Setenv("TMPDIR", inner)
		s, err := Start(Options{})
		if err == nil {
			s.Stop()
			t.Fatal("Start with an unreachable TMPDIR succeeded as root")
		}
		if !strings.Contains(err.Error(), "TMPDIR") {
			t.Errorf("error %q does not mention TMPDIR", err)
		}
		if left := tempDirsIn(t, inner); len(left) > 0 {
			t.Errorf("temp dir left behind: %v", left)
		}
	}
}
