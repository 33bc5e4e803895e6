package dsn

import (
	"iter"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
)

// Source is what is read besides the DSN: the environment, the
// operating-system user and the directories searched for a server socket.
// Tests fill it in to stay independent of the machine; System gives the
// real one. A nil LookupEnv is an empty environment, a nil CurrentUser an
// unknown user.
type Source struct {
	// LookupEnv returns an environment variable (os.LookupEnv).
	LookupEnv func(name string) (string, bool)
	// CurrentUser returns the operating-system user (user.Current): the
	// default user name, and the home directory when HOME is unset.
	CurrentUser func() (*user.User, error)
	// SocketDirs are searched, in order, for .s.PGSQL.<port> when no host
	// is given. A host equal to one of them matches "localhost" in the
	// password file.
	SocketDirs []string
}

// System returns the Source of this process: its environment, the real
// user and DefaultSocketDirs.
func System() *Source {
	return &Source{
		LookupEnv:   os.LookupEnv,
		CurrentUser: user.Current,
		SocketDirs:  DefaultSocketDirs(),
	}
}

// DefaultSocketDirs returns the usual Unix socket directories of
// PostgreSQL packages (Debian and Red Hat use /var/run/postgresql,
// upstream /tmp), or nil on Windows.
func DefaultSocketDirs() []string {
	if runtime.GOOS == "windows" {
		return nil
	}
	return []string{"/var/run/postgresql", "/run/postgresql", "/tmp"}
}

// envVars lists each libpq keyword that has an environment variable, with
// that variable.
var envVars = [...]struct{ key, name string }{
	{"host", "PGHOST"},
	{"hostaddr", "PGHOSTADDR"},
	{"port", "PGPORT"},
	{"dbname", "PGDATABASE"},
	{"user", "PGUSER"},
	{"password", "PGPASSWORD"},
	{"passfile", "PGPASSFILE"},
	{"require_auth", "PGREQUIREAUTH"},
	{"channel_binding", "PGCHANNELBINDING"},
	{"service", "PGSERVICE"},
	{"options", "PGOPTIONS"},
	{"application_name", "PGAPPNAME"},
	{"sslmode", "PGSSLMODE"},
	{"sslnegotiation", "PGSSLNEGOTIATION"},
	{"sslcert", "PGSSLCERT"},
	{"sslkey", "PGSSLKEY"},
	{"sslrootcert", "PGSSLROOTCERT"},
	{"sslcrl", "PGSSLCRL"},
	{"sslcrldir", "PGSSLCRLDIR"},
	{"sslsni", "PGSSLSNI"},
	{"requirepeer", "PGREQUIREPEER"},
	{"ssl_min_protocol_version", "PGSSLMINPROTOCOLVERSION"},
	{"ssl_max_protocol_version", "PGSSLMAXPROTOCOLVERSION"},
	{"sslcertmode", "PGSSLCERTMODE"},
	{"gssencmode", "PGGSSENCMODE"},
	{"connect_timeout", "PGCONNECT_TIMEOUT"},
	{"target_session_attrs", "PGTARGETSESSIONATTRS"},
	{"load_balance_hosts", "PGLOADBALANCEHOSTS"},
	{"min_protocol_version", "PGMINPROTOCOLVERSION"},
	{"max_protocol_version", "PGMAXPROTOCOLVERSION"},
}

// EnvVars yields each libpq keyword that has an environment variable, and
// the variable's name: ("host", "PGHOST"), ("port", "PGPORT") and so on.
func EnvVars() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, v := range envVars {
			if !yield(v.key, v.name) {
				return
			}
		}
	}
}

// EnvVar returns the name of key's environment variable, or "" when key
// has none.
func EnvVar(key string) string {
	for _, v := range envVars {
		if v.key == key {
			return v.name
		}
	}
	return ""
}

// Env returns the value of an environment variable; unset and empty are
// the same, as in libpq.
func (src *Source) Env(name string) string {
	if src.LookupEnv == nil {
		return ""
	}
	v, _ := src.LookupEnv(name)
	return v
}

// Get returns the value of key as libpq reads it when the DSN's pairs are
// all it has besides the environment: the last pair with key, even an
// empty one, else key's environment variable. The service file is not
// consulted.
func (src *Source) Get(pairs []Pair, key string) string {
	if v, ok := Lookup(pairs, key); ok {
		return v
	}
	if name := EnvVar(key); name != "" {
		return src.Env(name)
	}
	return ""
}

// osUser returns the operating-system user, or nil when unknown.
func (src *Source) osUser() *user.User {
	if src.CurrentUser == nil {
		return nil
	}
	u, err := src.CurrentUser()
	if err != nil {
		return nil
	}
	return u
}

// UserName returns the operating-system user's name, or "" when unknown.
func (src *Source) UserName() string {
	if u := src.osUser(); u != nil {
		return u.Username
	}
	return ""
}

// HomeDir returns $HOME, else the user's home directory, else "".
func (src *Source) HomeDir() string {
	if h := src.Env("HOME"); h != "" {
		return h
	}
	if u := src.osUser(); u != nil {
		return u.HomeDir
	}
	return ""
}

// libpqDir is the directory of the per-user libpq files: ~/.postgresql, or
// %APPDATA%\postgresql on Windows. It returns "" when unknown.
func (src *Source) libpqDir() string {
	if runtime.GOOS == "windows" {
		if d := src.Env("APPDATA"); d != "" {
			return filepath.Join(d, "postgresql")
		}
		return ""
	}
	if h := src.HomeDir(); h != "" {
		return filepath.Join(h, ".postgresql")
	}
	return ""
}

// DefaultPassFile returns ~/.pgpass (%APPDATA%\postgresql\pgpass.conf on
// Windows), or "" when the home directory is unknown. Whether the file
// exists is not checked.
func (src *Source) DefaultPassFile() string {
	if runtime.GOOS == "windows" {
		if d := src.libpqDir(); d != "" {
			return filepath.Join(d, "pgpass.conf")
		}
		return ""
	}
	if h := src.HomeDir(); h != "" {
		return filepath.Join(h, ".pgpass")
	}
	return ""
}

// UserFile returns the path of name in the per-user libpq directory
// (~/.postgresql) if that is a regular file, else "". It finds the default
// files of sslrootcert (root.crt), sslcert (postgresql.crt) and sslkey
// (postgresql.key).
func (src *Source) UserFile(name string) string {
	d := src.libpqDir()
	if d == "" {
		return ""
	}
	p := filepath.Join(d, name)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p
	}
	return ""
}

// DefaultHost returns the first of SocketDirs that holds the socket of a
// server on port, else "localhost".
func (src *Source) DefaultHost(port uint16) string {
	name := ".s.PGSQL." + strconv.Itoa(int(port))
	for _, dir := range src.SocketDirs {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err == nil && fi.Mode()&os.ModeSocket != 0 {
			return dir
		}
	}
	return "localhost"
}

// IsDefaultSocketDir reports whether host is one of SocketDirs.
func (src *Source) IsDefaultSocketDir(host string) bool {
	for _, dir := range src.SocketDirs {
		if host == dir {
			return true
		}
	}
	return false
}
