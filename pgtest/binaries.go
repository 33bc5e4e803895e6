package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// binaries are the PostgreSQL programs pgtest runs.
type binaries struct {
	initdb, pgctl, psql string
	basebackup          string // pg_basebackup beside initdb, for standbys; "" if missing
}

// errNoPostgres explains what to install when no server binaries are found.
var errNoPostgres = errors.New("pgtest: no PostgreSQL server binaries (initdb, pg_ctl, postgres) on PATH " +
	"or under /usr/lib/postgresql/*/bin; install postgresql, e.g. apt-get install -y postgresql")

// binariesFor returns the binaries in dir, or in the directory
// PGLINE_PG_BINDIR names when dir is empty, or else findBinaries'.
func binariesFor(dir string) (binaries, error) {
	from := "Options.BinDir"
	if dir == "" {
		dir, from = os.Getenv(BinDirEnv), BinDirEnv
	}
	if dir == "" {
		return findBinaries()
	}
	b, ok := binDir(dir)
	if !ok {
		return binaries{}, fmt.Errorf("pgtest: %s is %s, which does not hold initdb, pg_ctl and postgres", from, dir)
	}
	return b, nil
}

// BinDirOf returns the directory of the server binaries of major version
// major under PGLINE_PG_VERSIONS (see VersionsEnv), or "" when that is not
// set or has no such version.
func BinDirOf(major int) string {
	root := os.Getenv(VersionsEnv)
	if root == "" {
		return ""
	}
	dir := filepath.Join(root, strconv.Itoa(major))
	if _, ok := binDir(dir); !ok {
		return ""
	}
	return dir
}

// findBinaries looks for initdb on PATH (following symlinks to the directory
// that also holds pg_ctl and postgres), else takes the highest version under
// /usr/lib/postgresql/*/bin.
func findBinaries() (binaries, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if b, ok := binDir(filepath.Dir(real)); ok {
				return b, nil
			}
		}
		if b, ok := binDir(filepath.Dir(p)); ok {
			return b, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		return versionLess(filepath.Base(filepath.Dir(dirs[j])), filepath.Base(filepath.Dir(dirs[i])))
	})
	for _, d := range dirs {
		if b, ok := binDir(d); ok {
			return b, nil
		}
	}
	return binaries{}, errNoPostgres
}

// binDir returns the programs in dir when initdb, pg_ctl and postgres are
// all there; psql comes from dir or else from PATH, pg_basebackup from dir
// only (it must be of the server's version).
func binDir(dir string) (binaries, bool) {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if !isExecutable(filepath.Join(dir, name)) {
			return binaries{}, false
		}
	}
	b := binaries{initdb: filepath.Join(dir, "initdb"), pgctl: filepath.Join(dir, "pg_ctl")}
	if p := filepath.Join(dir, "psql"); isExecutable(p) {
		b.psql = p
	} else if p, err := exec.LookPath("psql"); err == nil {
		b.psql = p
	}
	if p := filepath.Join(dir, "pg_basebackup"); isExecutable(p) {
		b.basebackup = p
	}
	return b, true
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// versionLess orders directory names like "9.6", "15" and "16" numerically;
// names that are not versions sort first.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		na, nb := -1, -1
		if i < len(pa) {
			if n, err := strconv.Atoi(pa[i]); err == nil {
				na = n
			}
		}
		if i < len(pb) {
			if n, err := strconv.Atoi(pb[i]); err == nil {
				nb = n
			}
		}
		if na != nb {
			return na < nb
		}
	}
	return false
}

// psqlPath finds psql for an external server: on PATH, else beside the
// server binaries.
func psqlPath() (string, error) {
	if p, err := exec.LookPath("psql"); err == nil {
		return p, nil
	}
	if b, err := findBinaries(); err == nil && b.psql != "" {
		return b.psql, nil
	}
	return "", errors.New("pgtest: psql not found on PATH or under /usr/lib/postgresql/*/bin; " +
		"install the PostgreSQL client, e.g. apt-get install -y postgresql-client")
}
