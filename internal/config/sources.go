package config

import (
	"strconv"

	"github.com/pgline/pgline/internal/dsn"
)

// What Parse reads besides the DSN, through a dsn.Source: the service
// file, the environment and the password file.

// applyService adds the keys of the service named by service or PGSERVICE
// to s, without replacing keys already set, so that the DSN wins over the
// service file and the service file over the environment (see package dsn
// for where the file is looked for).
func applyService(s settings, src *dsn.Source) error {
	name := s.get("service")
	if _, inDSN := s["service"]; !inDSN {
		name = src.Env("PGSERVICE")
	}
	if name == "" {
		return nil
	}
	pairs, file, err := src.Service(name)
	if err != nil {
		return dsnError(err)
	}
	for _, p := range pairs {
		if _, ok := s[p.Key]; !ok {
			s[p.Key] = setting{value: p.Value, origin: "service file " + file}
		}
	}
	return nil
}

// applyEnv fills every key the DSN (or the service file) left unset from
// its PG* environment variable. A key set in the DSN, even to "", is not
// looked up; an empty variable is the same as an unset one.
func applyEnv(s settings, src *dsn.Source) {
	for key, name := range dsn.EnvVars() {
		if _, ok := s[key]; ok {
			continue
		}
		if v := src.Env(name); v != "" {
			s[key] = setting{value: v, origin: name}
		}
	}
}

// passFilePasswords sets the Password of each host of st from the password
// file st.PassFile (package dsn reads it), when st has no Password of its own.
func passFilePasswords(st *Settings, src *dsn.Source) {
	if st.Password != "" || st.PassFile == "" {
		return
	}
	f := dsn.ReadPassFile(st.PassFile)
	for i := range st.Hosts {
		h := &st.Hosts[i]
		h.Password = f.Password(passFileHost(*h, src), strconv.Itoa(int(h.Port)), st.Database, st.User)
	}
}

// passFileHost is the host name h is looked up under: "localhost" for a
// Unix socket in a default socket directory (libpq's rule), the numeric
// address when only hostaddr was given, else the host itself (a socket
// directory elsewhere is matched by its path).
func passFileHost(h Host, src *dsn.Source) string {
	switch {
	case h.Host == "" && h.HostAddr != "":
		return h.HostAddr
	case h.Host == "" || h.IsUnixSocket() && src.IsDefaultSocketDir(h.Host):
		return "localhost"
	}
	return h.Host
}
