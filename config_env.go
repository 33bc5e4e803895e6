package pgline

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
)

// configSource is what ParseConfig reads besides the DSN: the environment,
// the operating-system user and the directories searched for a server
// socket. Tests replace it to stay independent of the machine.
type configSource struct {
	lookupEnv   func(string) (string, bool)
	currentUser func() (*user.User, error)
	// socketDirs are searched, in order, for .s.PGSQL.<port> when no host
	// is given. A host equal to one of them matches "localhost" in the
	// password file.
	socketDirs []string
}

// osConfigSource reads the process environment and the real user.
func osConfigSource() *configSource {
	return &configSource{
		lookupEnv:   os.LookupEnv,
		currentUser: user.Current,
		socketDirs:  defaultSocketDirs(),
	}
}

// defaultSocketDirs are the usual Unix socket directories of PostgreSQL
// packages (Debian and Red Hat use /var/run/postgresql, upstream /tmp).
func defaultSocketDirs() []string {
	if runtime.GOOS == "windows" {
		return nil
	}
	return []string{"/var/run/postgresql", "/run/postgresql", "/tmp"}
}

// envKeys maps each libpq keyword that has an environment variable to it.
var envKeys = map[string]string{
	"host":                     "PGHOST",
	"hostaddr":                 "PGHOSTADDR",
	"port":                     "PGPORT",
	"dbname":                   "PGDATABASE",
	"user":                     "PGUSER",
	"password":                 "PGPASSWORD",
	"passfile":                 "PGPASSFILE",
	"service":                  "PGSERVICE",
	"connect_timeout":          "PGCONNECT_TIMEOUT",
	"application_name":         "PGAPPNAME",
	"options":                  "PGOPTIONS",
	"sslmode":                  "PGSSLMODE",
	"sslrootcert":              "PGSSLROOTCERT",
	"sslcert":                  "PGSSLCERT",
	"sslkey":                   "PGSSLKEY",
	"sslnegotiation":           "PGSSLNEGOTIATION",
	"sslsni":                   "PGSSLSNI",
	"sslcertmode":              "PGSSLCERTMODE",
	"sslcrl":                   "PGSSLCRL",
	"sslcrldir":                "PGSSLCRLDIR",
	"ssl_min_protocol_version": "PGSSLMINPROTOCOLVERSION",
	"ssl_max_protocol_version": "PGSSLMAXPROTOCOLVERSION",
	"min_protocol_version":     "PGMINPROTOCOLVERSION",
	"max_protocol_version":     "PGMAXPROTOCOLVERSION",
	"gssencmode":               "PGGSSENCMODE",
	"requirepeer":              "PGREQUIREPEER",
	"channel_binding":          "PGCHANNELBINDING",
	"require_auth":             "PGREQUIREAUTH",
	"target_session_attrs":     "PGTARGETSESSIONATTRS",
	"load_balance_hosts":       "PGLOADBALANCEHOSTS",
}

// env returns the value of an environment variable; unset and empty are
// the same.
func (src *configSource) env(name string) string {
	v, _ := src.lookupEnv(name)
	return v
}

// applyEnv fills every key the DSN (or the service file) left unset from
// its PG* environment variable. A key set in the DSN, even to "", is not
// looked up.
func applyEnv(s settings, src *configSource) {
	for key, name := range envKeys {
		if _, ok := s[key]; ok {
			continue
		}
		if v := src.env(name); v != "" {
			s[key] = setting{value: v, origin: name}
		}
	}
}

// homeDir returns $HOME, else the user's home directory, else "".
func (src *configSource) homeDir() string {
	if h := src.env("HOME"); h != "" {
		return h
	}
	if u, err := src.currentUser(); err == nil {
		return u.HomeDir
	}
	return ""
}

// libpqDir is the directory of the per-user libpq files: ~/.postgresql, or
// %APPDATA%\postgresql on Windows. It returns "" when unknown.
func (src *configSource) libpqDir() string {
	if runtime.GOOS == "windows" {
		if d := src.env("APPDATA"); d != "" {
			return filepath.Join(d, "postgresql")
		}
		return ""
	}
	if h := src.homeDir(); h != "" {
		return filepath.Join(h, ".postgresql")
	}
	return ""
}

// defaultPassFile is ~/.pgpass (%APPDATA%\postgresql\pgpass.conf on
// Windows), or "" when the home directory is unknown.
func (src *configSource) defaultPassFile() string {
	if runtime.GOOS == "windows" {
		if d := src.libpqDir(); d != "" {
			return filepath.Join(d, "pgpass.conf")
		}
		return ""
	}
	if h := src.homeDir(); h != "" {
		return filepath.Join(h, ".pgpass")
	}
	return ""
}

// defaultSSLFile returns name in the per-user libpq directory if that file
// exists, else "".
func (src *configSource) defaultSSLFile(name string) string {
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

// defaultHost is the first socket directory that holds the socket of a
// server on port, else "localhost".
func (src *configSource) defaultHost(port uint16) string {
	name := ".s.PGSQL." + strconv.Itoa(int(port))
	for _, dir := range src.socketDirs {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err == nil && fi.Mode()&os.ModeSocket != 0 {
			return dir
		}
	}
	return "localhost"
}

// isDefaultSocketDir reports whether host is one of the socket directories
// searched by default.
func (src *configSource) isDefaultSocketDir(host string) bool {
	for _, dir := range src.socketDirs {
		if host == dir {
			return true
		}
	}
	return false
}
