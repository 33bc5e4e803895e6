package pgline

import (
	"strconv"

	"github.com/pgline/pgline/internal/dsn"
)

// passFilePasswords sets the Password of each host of c from the password
// file c.PassFile (package dsn reads it), when c has no Password of its own.
func passFilePasswords(c *Config, src *configSource) {
	if c.Password != "" || c.PassFile == "" {
		return
	}
	f := dsn.ReadPassFile(c.PassFile)
	for i := range c.Hosts {
		h := &c.Hosts[i]
		h.Password = f.Password(passFileHost(*h, src), strconv.Itoa(int(h.Port)), c.Database, c.User)
	}
}

// passFileHost is the host name h is looked up under: "localhost" for a
// Unix socket in a default socket directory (libpq's rule), the numeric
// address when only hostaddr was given, else the host itself (a socket
// directory elsewhere is matched by its path).
func passFileHost(h HostConfig, src *configSource) string {
	switch {
	case h.Host == "" && h.HostAddr != "":
		return h.HostAddr
	case h.Host == "" || h.IsUnixSocket() && src.IsDefaultSocketDir(h.Host):
		return "localhost"
	}
	return h.Host
}
