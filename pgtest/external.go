package pgtest

import (
	"fmt"
	"os/user"
	"strconv"
	"strings"
)

// startExternal returns a Server for the DSN in PGLINE_TEST_DSN, after
// checking with psql that it answers.
func startExternal(dsn string) (*Server, error) {
	ps, err := parseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %s: %w", DSNEnv, err)
	}
	s := &Server{External: true, extDSN: ps, Port: 5432}
	host, _ := lookup(ps, "host")
	if host == "" {
		host, _ = lookup(ps, "hostaddr")
	}
	if i := strings.IndexByte(host, ','); i >= 0 {
		host = host[:i] // several hosts: describe the first
	}
	if strings.HasPrefix(host, "/") || strings.HasPrefix(host, "@") {
		s.SocketDir = host
	} else {
		s.Host = host
	}
	if p, ok := lookup(ps, "port"); ok && p != "" {
		if i := strings.IndexByte(p, ','); i >= 0 {
			p = p[:i]
		}
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("pgtest: %s: invalid port %q", DSNEnv, p)
		}
		s.Port = n
	}
	s.User, _ = lookup(ps, "user")
	if s.User == "" {
		if u, err := user.Current(); err == nil {
			s.User = u.Username
		}
	}
	s.Database, _ = lookup(ps, "dbname")
	if s.Database == "" {
		s.Database = s.User
	}
	if s.bins.psql, err = psqlPath(); err != nil {
		return nil, err
	}
	if err := s.readVersion(); err != nil {
		return nil, fmt.Errorf("pgtest: %s names a server psql cannot use: %w", DSNEnv, err)
	}
	return s, nil
}
