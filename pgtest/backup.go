package pgtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A base backup without pg_basebackup (some server packages, such as the
// npm registry's, ship only initdb, pg_ctl and postgres): one psql session
// on the server runs pg_backup_start, the data directory is copied while
// that session stays open, and the same session runs pg_backup_stop,
// whose backup_label goes into the copy. The copy holds no WAL: the
// standby streams it from the server, which keeps it (wal_keep_size).
//
//	psql: SELECT pg_backup_start(label, true)   (13, 14: pg_start_backup(label, true, false))
//	copy: DataDir -> dst, without the files of copySkip, global/pg_control last
//	psql: SELECT labelfile, spcmapfile FROM pg_backup_stop(false)
//	write dst/backup_label

// backupEnd is what psql echoes once pg_backup_start has returned.
const backupEnd = "pgtest: backup started"

// copyBackup makes dst (which must not exist) a base backup of s, labelled
// label, without pg_basebackup; the copied files are given to owner. s may
// be a primary or a standby.
func (s *Server) copyBackup(dst, label string, owner *account) error {
	start := "SELECT pg_backup_start(" + quoteLiteral(label) + ", true) AS pgtest_start \\gset\n"
	stop := "SELECT labelfile, spcmapfile FROM pg_backup_stop(false);\n"
	if s.version < 150000 {
		start = "SELECT pg_start_backup(" + quoteLiteral(label) + ", true, false) AS pgtest_start \\gset\n"
		stop = "SELECT labelfile, spcmapfile FROM pg_stop_backup(false, false);\n"
	}
	// -A -t -z -0: the columns of pg_backup_stop's one row as they are,
	// each ended by a zero byte.
	cmd := exec.Command(s.bins.psql, "-X", "-q", "-A", "-t", "-z", "-0", "-v", "ON_ERROR_STOP=1",
		"-d", s.SocketDSN("connect_timeout=10"))
	cmd.Env = cleanEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: psql: %w", err)
	}
	out := bufio.NewReader(outPipe)
	failed := func(what string, err error) error {
		in.Close()
		io.Copy(io.Discard, out)
		werr := cmd.Wait()
		return fmt.Errorf("pgtest: base backup of port %d by copy: %s: %v (psql: %v: %s)",
			s.Port, what, err, werr, strings.TrimSpace(stderr.String()))
	}

	// Closing the session ends the backup if anything fails from here on.
	if _, err := io.WriteString(in, start+"\\echo '"+backupEnd+"'\n"); err != nil {
		return failed("pg_backup_start", err)
	}
	line, err := out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != backupEnd {
		if err == nil {
			err = fmt.Errorf("psql printed %q", line)
		}
		return failed("pg_backup_start", err)
	}
	if err := copyDataDir(s.DataDir, dst, owner); err != nil {
		return failed("copy", err)
	}
	if _, err := io.WriteString(in, stop); err != nil {
		return failed("pg_backup_stop", err)
	}
	in.Close()
	rest, err := io.ReadAll(out)
	if err != nil {
		return failed("pg_backup_stop", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("pgtest: base backup of port %d by copy: pg_backup_stop: psql: %v: %s",
			s.Port, err, strings.TrimSpace(stderr.String()))
	}
	cols := strings.Split(string(rest), "\x00")
	if len(cols) < 2 || !strings.Contains(cols[0], "START WAL LOCATION") {
		return fmt.Errorf("pgtest: base backup of port %d by copy: pg_backup_stop gave %q, not a backup_label", s.Port, rest)
	}
	if strings.TrimSpace(cols[1]) != "" {
		// The tablespaces' directories would be the server's own.
		return fmt.Errorf("pgtest: base backup of port %d by copy: the server has tablespaces, which a copy cannot take", s.Port)
	}
	path := filepath.Join(dst, "backup_label")
	if err := os.WriteFile(path, []byte(cols[0]), 0o600); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return owner.chown(path)
}

// copySkip are the names (relative to the data directory, with '/') that a
// base backup leaves out, as pg_basebackup does: the running server's own
// files, directories whose contents are rebuilt at startup (kept empty),
// the WAL (streamed instead), and pgtest's server log. Names under any
// directory that start with pgsql_tmp, and pg_internal.init, are left out
// too (see skipName).
var copySkip = map[string]bool{
	"postmaster.pid": true, "postmaster.opts": true, "backup_label": true, "tablespace_map": true,
	"postgresql.auto.conf.tmp": true, "current_logfiles": true, "current_logfiles.tmp": true,
	"standby.signal": true, "recovery.signal": true, "server.log": true,
}

// copyEmpty are the directories a base backup holds empty.
var copyEmpty = map[string]bool{
	"pg_wal": true, "pg_replslot": true, "pg_dynshmem": true, "pg_notify": true, "pg_serial": true,
	"pg_snapshots": true, "pg_stat_tmp": true, "pg_subtrans": true,
}

// skipName reports whether a file or directory named name is left out
// wherever it is.
func skipName(name string) bool {
	return strings.HasPrefix(name, "pgsql_tmp") || name == "pg_internal.init"
}

// controlFile is copied last: for a backup of a standby, its
// minRecoveryPoint must cover every page copied before it.
const controlFile = "global/pg_control"

// copyDataDir copies the data directory src of a running server to dst,
// with the modes of its files, leaving out what copySkip, copyEmpty and
// skipName name; files that vanish while it copies are skipped, as
// the server removes them. Everything made is given to owner.
func copyDataDir(src, dst string, owner *account) error {
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(src, path)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && rel != "." {
				return nil
			}
			return err
		}
		if copySkip[rel] || skipName(d.Name()) || rel == controlFile {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case d.IsDir():
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			} else if err != nil {
				return err
			}
			if err := makeDir(target, info.Mode().Perm(), owner); err != nil {
				return err
			}
			if copyEmpty[rel] {
				if rel == "pg_wal" {
					if err := makeDir(filepath.Join(target, "archive_status"), info.Mode().Perm(), owner); err != nil {
						return err
					}
				}
				return fs.SkipDir
			}
			return nil
		case d.Type().IsRegular():
			return copyLiveFile(path, target, owner)
		default:
			// Symbolic links are tablespaces (refused by copyBackup)
			// or a packager's pg_wal elsewhere; pgtest makes neither.
			return fmt.Errorf("%s is not a regular file or directory", path)
		}
	})
	if err != nil {
		return err
	}
	return copyLiveFile(filepath.Join(src, filepath.FromSlash(controlFile)), filepath.Join(dst, filepath.FromSlash(controlFile)), owner)
}

// makeDir makes the directory path with mode perm (past the umask),
// given to owner.
func makeDir(path string, perm fs.FileMode, owner *account) error {
	if err := os.Mkdir(path, perm); err != nil {
		return err
	}
	if err := os.Chmod(path, perm); err != nil {
		return err
	}
	return owner.chown(path)
}

// copyLiveFile copies the regular file src of a running server to dst
// with its mode, given to owner; a src that is gone already is not copied.
func copyLiveFile(src, dst string, owner *account) error {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Chmod(dst, info.Mode().Perm()); err != nil {
		return err
	}
	return owner.chown(dst)
}
