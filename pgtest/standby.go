package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgline/pgline/internal/dsn"
)

// StandbyOptions configure a standby made by Server.StartStandby. The zero
// value makes an asynchronous standby with a default name.
type StandbyOptions struct {
	// Name is the standby's application_name, which names it in the
	// primary's pg_stat_replication and synchronous_standby_names: letters,
	// digits, '_', '-' and '.', at most 63 bytes, unique (ignoring case)
	// among the live standbys of the same server. Empty means "standbyN",
	// N counting this server's standbys from 1.
	Name string

	// Synchronous makes the standby synchronous: the primary's
	// synchronous_standby_names becomes ANY 1 of its synchronous standbys
	// and its synchronous_commit remote_apply, so that a commit on the
	// primary returns only once one of them has applied it (pgtest's
	// default synchronous_commit = off does not wait). The setting wins
	// over Options.Settings. Only the primary can have synchronous
	// standbys, not a standby.
	Synchronous bool
}

// standbyName is what StandbyOptions.Name may hold.
var standbyName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,63}$`)

// waitTimeout bounds each wait for a standby to stream, become synchronous
// or leave recovery.
const waitTimeout = 60 * time.Second

// StartStandby makes a hot standby of s that streams from it: a base
// backup in a new temporary directory (pg_basebackup -X stream, or, when
// the server's binary directory has no pg_basebackup, a copy of s's data
// directory taken between pg_backup_start and pg_backup_stop on one
// session, whose WAL the standby streams from s), with its own port and
// socket directory, started with standby.signal, hot_standby
// on and primary_conninfo pointing at s over TCP with application_name
// opts.Name. It has the same superuser, database, roles, settings and
// pg_hba.conf as s, and copies of s's TLS files. StartStandby returns once
// the standby accepts connections, is in recovery and streams WAL from s;
// with opts.Synchronous, once s also lists it as synchronous in
// pg_stat_replication.
//
// The returned Server is used like any other and must be stopped; Stop of
// s does not stop it. s may itself be a standby (cascading replication)
// when full_page_writes is on (Options.Settings; pgtest turns it off),
// without which PostgreSQL refuses a backup of a standby.
// StartStandby needs PostgreSQL 12 or later and fails for an external
// server.
func (s *Server) StartStandby(opts StandbyOptions) (*Server, error) {
	if s.External {
		return nil, fmt.Errorf("pgtest: StartStandby: the server is the external one named by %s; "+
			"only clusters pgtest starts can have standbys", DSNEnv)
	}
	if opts.Name != "" && !standbyName.MatchString(opts.Name) {
		return nil, fmt.Errorf("pgtest: StartStandby: invalid Name %q (want 1 to 63 letters, digits, '_', '-' or '.')", opts.Name)
	}
	if s.version < 120000 {
		return nil, fmt.Errorf("pgtest: StartStandby needs PostgreSQL 12 or later, the server is %d", s.version)
	}
	if opts.Synchronous {
		out, err := s.Query("SELECT pg_is_in_recovery()")
		if err != nil {
			return nil, err
		}
		if out == "t" {
			return nil, fmt.Errorf("pgtest: StartStandby: the server is a standby, whose standbys cannot be synchronous")
		}
	}
	name, err := s.addStandby(opts.Name)
	if err != nil {
		return nil, err
	}
	st := &Server{Host: s.Host, User: s.User, Database: s.Database, IPv6: s.IPv6,
		bins: s.bins, owner: s.owner, upstream: s, appName: name}
	if err := st.initStandby(opts.Synchronous); err != nil {
		st.Stop()
		return nil, err
	}
	return st, nil
}

// addStandby reserves the application_name of a new standby of s: name,
// or "standbyN" when name is empty.
func (s *Server) addStandby(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOwn("StartStandby"); err != nil {
		return "", err
	}
	if !s.running() {
		return "", fmt.Errorf("pgtest: StartStandby: the server is shut down; Restart it first")
	}
	if s.standbys == nil {
		s.standbys = map[string]bool{}
	}
	if name == "" {
		for name == "" || s.standbys[strings.ToLower(name)] {
			s.nextStandby++
			name = "standby" + strconv.Itoa(s.nextStandby)
		}
	} else if s.standbys[strings.ToLower(name)] {
		return "", fmt.Errorf("pgtest: StartStandby: the server already has a standby named %q", name)
	}
	s.standbys[strings.ToLower(name)] = true
	return name, nil
}

// dropStandby releases the name of a standby of s that was stopped and
// takes it out of the synchronous standbys.
func (s *Server) dropStandby(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.standbys, strings.ToLower(name))
	i := slices.Index(s.syncNames, name)
	if i < 0 || s.stopped {
		return nil
	}
	s.syncNames = slices.Delete(s.syncNames, i, i+1)
	return s.writeSyncConf()
}

// addSync makes the standby name synchronous.
func (s *Server) addSync(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOwn("StartStandby"); err != nil {
		return err
	}
	s.syncNames = append(s.syncNames, name)
	return s.writeSyncConf()
}

// writeSyncConf writes syncNames to syncConfName and reloads the
// configuration if the server runs. s.mu must be held.
func (s *Server) writeSyncConf() error {
	if err := s.writeOwned(filepath.Join(s.DataDir, syncConfName), syncConf(s.syncNames)); err != nil {
		return err
	}
	if !s.running() {
		return nil
	}
	return s.run(s.bins.pgctl, "reload", "-D", s.DataDir, "-s")
}

// initStandby makes and starts the standby st of st.upstream; on error the
// caller runs Stop, which removes whatever was made.
func (st *Server) initStandby(sync bool) error {
	up := st.upstream
	if err := st.makeDirs(); err != nil {
		return err
	}
	conninfo := dsn.Render([]dsn.Pair{
		{Key: "host", Value: up.Host}, {Key: "port", Value: strconv.Itoa(up.Port)}, {Key: "user", Value: up.User},
		{Key: "application_name", Value: st.appName}, {Key: "sslmode", Value: "disable"},
	})
	if err := st.baseBackup(conninfo); err != nil {
		return err
	}
	if err := st.writeOwned(filepath.Join(st.DataDir, "standby.signal"), ""); err != nil {
		return err
	}
	if err := appendFile(filepath.Join(st.DataDir, "postgresql.auto.conf"),
		"primary_conninfo = "+confValue(conninfo)+"\n"); err != nil {
		return err
	}
	// The copy of the primary's log would only mislead, and the standby has
	// no synchronous standbys of its own (were it promoted, commits would
	// wait for them).
	if err := os.Remove(st.LogFile); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := st.writeOwned(filepath.Join(st.DataDir, syncConfName), ""); err != nil {
		return err
	}
	var tf *tlsFiles
	if up.CACertFile != "" {
		dir := filepath.Join(st.baseDir, "tls")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		f, err := copyTLS(up.tlsFiles(), dir)
		if err != nil {
			return err
		}
		tf = &f
		st.setTLSFields(f)
		st.ClientCertUser = up.ClientCertUser
	}
	if err := appendFile(filepath.Join(st.DataDir, "postgresql.conf"), standbyConf(st.SocketDir, tf)); err != nil {
		return err
	}
	if err := st.startServer(); err != nil {
		return err
	}
	if err := st.readVersion(); err != nil {
		return err
	}
	if err := st.waitQuery("SELECT pg_is_in_recovery(), (SELECT status FROM pg_stat_wal_receiver)",
		"t|streaming", "standby "+st.appName+" streaming"); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	if err := up.addSync(st.appName); err != nil {
		return err
	}
	return up.waitQuery("SELECT EXISTS (SELECT FROM pg_stat_replication WHERE application_name = "+
		quoteLiteral(st.appName)+" AND sync_state IN ('sync', 'quorum'))",
		"t", "standby "+st.appName+" synchronous")
}

// baseBackup makes st.DataDir a base backup of st.upstream: by
// pg_basebackup when the server's directory has it, else by a copy taken
// between pg_backup_start and pg_backup_stop (copyBackup).
func (st *Server) baseBackup(conninfo string) error {
	label := "pgtest " + st.appName
	if st.bins.basebackup == "" {
		return st.upstream.copyBackup(st.DataDir, label, st.owner)
	}
	// Not -R: it would copy every libpq default into primary_conninfo,
	// among them a passfile under the test process's HOME.
	return st.run(st.bins.basebackup, "-D", st.DataDir, "-d", conninfo, "-X", "stream",
		"-c", "fast", "--no-sync", "-w", "-l", label)
}

// tlsFiles returns the paths of s's TLS files (zero without TLS).
func (s *Server) tlsFiles() tlsFiles {
	return tlsFiles{
		caCert: s.CACertFile, serverCert: s.ServerCertFile, serverKey: s.ServerKeyFile,
		clientCert: s.ClientCertFile, clientKey: s.ClientKeyFile, wrongCACert: s.WrongCACertFile,
	}
}

// Promote promotes a standby to a primary (pg_ctl promote) and returns once
// it has left recovery and accepts writes. It leaves its former primary
// alone: shut that down first for a clean failover. The promoted server
// stays in its former primary's synchronous standbys until it is stopped,
// as in a real failover.
func (s *Server) Promote() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkOwn("Promote"); err != nil {
		return err
	}
	if err := s.run(s.bins.pgctl, "promote", "-D", s.DataDir, "-w", "-t", "60", "-s"); err != nil {
		return err
	}
	return s.waitQuery("SELECT pg_is_in_recovery()", "f", "promotion")
}

// waitQuery runs sql on s until its output is want, for up to waitTimeout;
// what names the wait in the error.
func (s *Server) waitQuery(sql, want, what string) error {
	deadline := time.Now().Add(waitTimeout)
	for {
		out, err := s.Query(sql)
		if err == nil && out == want {
			return nil
		}
		if time.Now().After(deadline) {
			last := fmt.Sprintf("%q", out)
			if err != nil {
				last = err.Error()
			}
			return fmt.Errorf("pgtest: waited %v for %s: %s gives %s, want %q\nserver log (%s):\n%s",
				waitTimeout, what, sql, last, want, s.LogFile, tail(readFrom(s.LogFile, 0), 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
