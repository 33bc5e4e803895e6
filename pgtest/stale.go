package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// stalePrefix starts the name of every temp dir pgtest creates.
const stalePrefix = "pgtest-"

// lockName is the file in a temp dir that its owning process keeps locked.
const lockName = "owner.lock"

// staleAge is how old an unlocked temp dir must be before it is removed, so
// that a dir whose owner is between creating and locking it is left alone.
const staleAge = time.Minute

// lockBase creates and locks base/owner.lock; the lock lasts as long as the
// process (or until Stop closes the file).
func lockBase(base string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(base, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := lockOwner(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("pgtest: lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// removeStale stops the clusters and removes the temp dirs left behind by
// test processes that died without calling Stop (killed, timed out). A dir
// is stale when its owner.lock exists, is older than staleAge and can be
// locked: its owner process is gone. Failures are ignored: this is tidying.
func removeStale(tmp string, bins binaries) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, stalePrefix+"*"))
	for _, dir := range dirs {
		lockPath := filepath.Join(dir, lockName)
		fi, err := os.Stat(lockPath)
		if err != nil || time.Since(fi.ModTime()) < staleAge {
			continue
		}
		f, err := os.Open(lockPath)
		if err != nil {
			continue
		}
		if !tryLock(f) {
			f.Close()
			continue
		}
		dataDir := filepath.Join(dir, "data")
		owner, err := accountOwning(dataDir)
		if err == nil {
			err = stopCluster(bins, owner, dir, dataDir)
		}
		if err == nil || os.IsNotExist(err) {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
