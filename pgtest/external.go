package pgtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pgline/pgline/internal/dsn"
)

// startExternal returns a Server for the DSN in PGLINE_TEST_DSN, after
// checking with psql that it answers.
func startExternal(conninfo string) (*Server, error) {
	s, err := describeExternal(conninfo, dsn.System())
	if err != nil {
		return nil, err
	}
	if s.bins.psql, err = psqlPath(); err != nil {
		return nil, err
	}
	if err := s.readVersion(); err != nil {
		return nil, fmt.Errorf("pgtest: %s names a server psql cannot use: %w", DSNEnv, err)
	}
	return s, nil
}

// describeExternal returns the Server that conninfo names, reading it as
// pgline.ParseConfig and psql do (package dsn): the DSN's settings, else
// the PG* environment variables of src, else libpq's defaults (port 5432,
// the operating-system user, a database named like the user). Of a host
// list it describes the first host. The service file is not read. Errors
// never show text from conninfo.
func describeExternal(conninfo string, src *dsn.Source) (*Server, error) {
	ps, err := dsn.Split(conninfo, nil)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %s: %w", DSNEnv, err)
	}
	for _, p := range ps {
		if !dsn.ValidKey(p.Key) {
			// Server.DSN could not write it in key=value form.
			return nil, fmt.Errorf("pgtest: %s: a URL query parameter name holds white space or \"=\"", DSNEnv)
		}
	}
	// first returns the first entry of a comma-separated list.
	first := func(list string) string {
		v, _, _ := strings.Cut(list, ",")
		return strings.TrimSpace(v)
	}
	s := &Server{External: true, extDSN: ps, Port: 5432}
	host := first(src.Get(ps, "host"))
	if host == "" {
		host = first(src.Get(ps, "hostaddr"))
	}
	if strings.HasPrefix(host, "/") || strings.HasPrefix(host, "@") {
		s.SocketDir = host
	} else {
		s.Host = host
	}
	if p := first(src.Get(ps, "port")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			// Not quoted: in a URL without "@" the password reads as a port.
			return nil, fmt.Errorf("pgtest: %s: invalid port: must be a number from 1 to 65535", DSNEnv)
		}
		s.Port = n
	}
	if s.User = src.Get(ps, "user"); s.User == "" {
		s.User = src.UserName()
	}
	if s.Database = src.Get(ps, "dbname"); s.Database == "" {
		s.Database = s.User
	}
	return s, nil
}
