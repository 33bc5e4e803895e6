//go:build unix

package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// account is the unprivileged user the server runs as when the test process
// is root. A nil *account means "the current user".
type account struct {
	name   string
	uid    int
	gid    int
	groups []uint32
}

// serverAccount returns nil when not running as root, else the "postgres"
// user if it exists, else "nobody".
func serverAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses root: "+
			"need a user \"postgres\" or \"nobody\" to run the server as: %w", err)
	}
	a := &account{name: u.Username}
	if a.uid, err = strconv.Atoi(u.Uid); err != nil {
		return nil, fmt.Errorf("pgtest: user %s: uid %q: %w", u.Username, u.Uid, err)
	}
	if a.gid, err = strconv.Atoi(u.Gid); err != nil {
		return nil, fmt.Errorf("pgtest: user %s: gid %q: %w", u.Username, u.Gid, err)
	}
	gids, _ := u.GroupIds()
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			a.groups = append(a.groups, uint32(n))
		}
	}
	if len(a.groups) == 0 {
		a.groups = []uint32{uint32(a.gid)}
	}
	return a, nil
}

// accountOwning returns the account owning path when running as root (nil
// when not root or when root owns it).
func accountOwning(path string) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return nil, nil
	}
	return &account{uid: int(st.Uid), gid: int(st.Gid), groups: []uint32{st.Gid}}, nil
}

// sameOwner gives dst the owner and group of src when running as root
// (nothing otherwise).
func sameOwner(src, dst string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := os.Chown(dst, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// runAs makes cmd run as a (nothing when a is nil).
func (a *account) runAs(cmd *exec.Cmd) {
	if a == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
		Uid: uint32(a.uid), Gid: uint32(a.gid), Groups: a.groups,
	}}
}

// chown gives path to a (nothing when a is nil).
func (a *account) chown(path string) error {
	if a == nil {
		return nil
	}
	if err := os.Chown(path, a.uid, a.gid); err != nil {
		return fmt.Errorf("pgtest: chown %s to %s: %w", path, a.name, err)
	}
	return nil
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// Format: pid (comm) state ...; comm may contain spaces and parens.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
			return s[i+2] != 'Z' && s[i+2] != 'X'
		}
		return true
	} else if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
			return false // /proc works and pid is not there
		}
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// killProcess sends SIGKILL to pid.
func killProcess(pid int) error {
	return syscall.Kill(pid, syscall.SIGKILL)
}

// tryLock takes an exclusive, non-blocking advisory lock on f. The lock
// lasts until f is closed or the process exits.
func tryLock(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// lockOwner locks f, which the caller has just created, for the life of the
// process (or until f is closed).
func lockOwner(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// canReach returns an error naming the first directory from dir up to the
// root that a may not search (enter), since the server could not then reach
// its data directory.
func (a *account) canReach(dir string) error {
	if a == nil {
		return nil
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		ok = !ok || mode&0o001 != 0 ||
			(int(st.Uid) == a.uid && mode&0o100 != 0) ||
			(int(st.Gid) == a.gid && mode&0o010 != 0)
		if !ok {
			return fmt.Errorf("pgtest: the server runs as user %s (PostgreSQL refuses root), who cannot enter %s (mode %v); "+
				"point TMPDIR at a directory it can reach, such as /tmp", a.name, d, mode)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// postmasterRunning reports whether pid is alive and, where /proc shows
// command lines, is a server started on dataDir: a pid left in a stale
// postmaster.pid may belong to an unrelated process by now.
func postmasterRunning(pid int, dataDir string) bool {
	if !processAlive(pid) {
		return false
	}
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		return true // no /proc: trust the pid
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	for arg := range strings.SplitSeq(string(b), "\x00") {
		if filepath.Clean(arg) == filepath.Clean(dataDir) {
			return true
		}
	}
	return false
}
