package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// maxSocketPath is the longest Unix socket path Linux accepts (sun_path
// holds 108 bytes including the terminating NUL).
const maxSocketPath = 107

// portAttempts bounds the retries when the chosen port is taken by the time
// the server binds it.
const portAttempts = 5

// Start starts a throwaway cluster configured by opts: initdb into a fresh
// directory under os.TempDir(), a free port on 127.0.0.1 (and ::1), a Unix
// socket, the users, hba entries and TLS files opts asks for. When
// PGLINE_TEST_DSN is set, Start starts nothing and returns a Server for that
// DSN (External is true and opts are ignored). Call Stop when done.
func Start(opts Options) (*Server, error) {
	if dsn := os.Getenv(DSNEnv); dsn != "" {
		return startExternal(dsn)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	bins, err := binariesFor(opts.BinDir)
	if err != nil {
		return nil, err
	}
	if bins.psql == "" {
		return nil, fmt.Errorf("pgtest: psql not found beside %s or on PATH; "+
			"install the PostgreSQL client, e.g. apt-get install -y postgresql-client", bins.initdb)
	}
	owner, err := serverAccount()
	if err != nil {
		return nil, err
	}
	removeStale(os.TempDir(), bins)

	s := &Server{Host: "127.0.0.1", User: superuser, Database: "postgres", bins: bins, owner: owner}
	if err := s.init(&opts); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// init creates, configures and starts the cluster; on error the caller
// runs Stop, which removes whatever was made.
func (s *Server) init(opts *Options) error {
	if err := s.makeDirs(); err != nil {
		return err
	}
	if err := s.run(s.bins.initdb, "-D", s.DataDir, "-A", "trust", "-U", superuser,
		"-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		return err
	}

	var tf *tlsFiles
	if opts.TLS {
		dir := filepath.Join(s.baseDir, "tls")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		f, err := writeTLS(dir, opts.certUser(), s.owner)
		if err != nil {
			return err
		}
		tf = &f
		s.setTLSFields(f)
		s.ClientCertUser = opts.certUser()
	}

	s.IPv6 = canListen("[::1]:0")
	conf := postgresqlConf(opts, s.SocketDir, s.IPv6, tf, dataDirMajor(s.DataDir))
	if err := appendFile(filepath.Join(s.DataDir, "postgresql.conf"), conf); err != nil {
		return err
	}
	if err := s.writeOwned(filepath.Join(s.DataDir, syncConfName), ""); err != nil {
		return err
	}
	if err := rewriteFile(filepath.Join(s.DataDir, "pg_hba.conf"), hbaConf(opts, s.IPv6)); err != nil {
		return err
	}
	if err := s.startServer(); err != nil {
		return err
	}
	if len(opts.users()) > 0 {
		if err := s.Exec(usersSQL(opts)); err != nil {
			return fmt.Errorf("pgtest: create users: %w", err)
		}
	}
	return s.readVersion()
}

// makeDirs creates the locked temp dir under os.TempDir() with its socket
// directory, both given to the server account, and sets baseDir, DataDir
// (not yet created), SocketDir and LogFile.
func (s *Server) makeDirs() error {
	base, err := os.MkdirTemp(os.TempDir(), stalePrefix)
	if err != nil {
		return fmt.Errorf("pgtest: create temp dir: %w", err)
	}
	s.baseDir = base
	if err := s.owner.canReach(filepath.Dir(base)); err != nil {
		return err
	}
	if s.lock, err = lockBase(base); err != nil {
		return err
	}
	s.DataDir = filepath.Join(base, "data")
	s.SocketDir = filepath.Join(base, "sock")
	s.LogFile = filepath.Join(s.DataDir, "server.log")
	if n := len(s.SocketDir) + len("/.s.PGSQL.65535.lock"); n > maxSocketPath {
		return fmt.Errorf("pgtest: socket path under %s is %d bytes, longer than the %d a Unix socket allows; "+
			"set TMPDIR to a shorter directory", s.SocketDir, n, maxSocketPath)
	}
	if err := os.Mkdir(s.SocketDir, 0o700); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	for _, p := range []string{base, s.SocketDir} {
		if err := s.owner.chown(p); err != nil {
			return err
		}
	}
	return nil
}

// setTLSFields stores the paths of f in s.
func (s *Server) setTLSFields(f tlsFiles) {
	s.CACertFile, s.ServerCertFile, s.ServerKeyFile = f.caCert, f.serverCert, f.serverKey
	s.ClientCertFile, s.ClientKeyFile, s.WrongCACertFile = f.clientCert, f.clientKey, f.wrongCACert
}

// dataDirMajor returns the major version initdb wrote into dataDir/PG_VERSION
// ("15", or "9.6" as 9), or 0.
func dataDirMajor(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if err != nil {
		return 0
	}
	major, _, _ := strings.Cut(strings.TrimSpace(string(b)), ".")
	n, _ := strconv.Atoi(major)
	return n
}

// startServer runs pg_ctl start on a free port, retrying with another port
// when the chosen one was taken in the meantime, and sets Port.
func (s *Server) startServer() error {
	var lastErr error
	for range portAttempts {
		port, err := freePort(s.IPv6)
		if err != nil {
			return err
		}
		busy, err := s.startOn(port)
		if err == nil {
			s.Port = port
			return nil
		}
		lastErr = err
		if !busy {
			return err
		}
	}
	return lastErr
}

// startOn runs pg_ctl start on port and waits until the server accepts
// connections. On failure the error holds the end of the server log, and
// busy reports that the port was taken.
func (s *Server) startOn(port int) (busy bool, err error) {
	logStart := fileSize(s.LogFile)
	err = s.run(s.bins.pgctl, "start", "-D", s.DataDir, "-l", s.LogFile, "-w", "-t", "60", "-s",
		"-o", "-p "+strconv.Itoa(port))
	if err == nil {
		return false, nil
	}
	log := readFrom(s.LogFile, logStart)
	err = fmt.Errorf("%w\nserver log (%s):\n%s", err, s.LogFile, tail(log, 30))
	if !strings.Contains(log, "Address already in use") {
		return false, err
	}
	// The postmaster exits by itself when it cannot bind; make sure.
	s.run(s.bins.pgctl, "stop", "-D", s.DataDir, "-m", "immediate", "-w", "-s")
	return true, err
}

// running reports whether the postmaster of s is up.
func (s *Server) running() bool {
	pid := postmasterPID(s.DataDir)
	return pid != 0 && postmasterRunning(pid, s.DataDir)
}

// readVersion stores server_version_num.
func (s *Server) readVersion() error {
	out, err := s.Query("SHOW server_version_num")
	if err != nil {
		return err
	}
	v, err := strconv.Atoi(out)
	if err != nil {
		return fmt.Errorf("pgtest: server_version_num %q is not a number", out)
	}
	s.version = v
	return nil
}

// run runs a server program as the server's account, in the base
// directory, and returns its output in the error when it fails.
func (s *Server) run(prog string, args ...string) error {
	cmd := exec.Command(prog, args...)
	cmd.Dir = s.baseDir
	cmd.Env = cleanEnv()
	s.owner.runAs(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		as := ""
		if s.owner != nil {
			as = " (as user " + s.owner.name + ")"
		}
		return fmt.Errorf("pgtest: %s %s%s: %v\n%s", filepath.Base(prog), strings.Join(args, " "), as, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// freePort returns a port that is free on 127.0.0.1 (and on ::1 when ipv6)
// right now.
func freePort(ipv6 bool) (int, error) {
	var lastErr error
	for range 10 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("pgtest: find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		ok := true
		if ipv6 {
			l6, err := net.Listen("tcp", net.JoinHostPort("::1", strconv.Itoa(port)))
			if err != nil {
				ok, lastErr = false, err
			} else {
				l6.Close()
			}
		}
		l.Close()
		if ok {
			return port, nil
		}
	}
	return 0, fmt.Errorf("pgtest: find a port free on both 127.0.0.1 and ::1: %w", lastErr)
}

// canListen reports whether a TCP listener can be opened on addr.
func canListen(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom returns the content of path from offset on ("" if unreadable).
func readFrom(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	return string(b[offset:])
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
