package pgtest

import (
	"fmt"
	"regexp"
	"strings"
)

// Options configure a throwaway cluster. The zero value starts a plain
// cluster with only the trusted superuser "postgres" and no TLS.
type Options struct {
	// Users are created after start. Each gets a password stored with the
	// encryption its Method implies (md5 for "md5" and "password",
	// scram-sha-256 otherwise) and pg_hba.conf entries for it: local, and
	// host (or hostssl) on 127.0.0.1/32 and ::1/128, with Method. Method is
	// one of "trust", "password", "md5", "scram-sha-256" or "cert"; cert
	// users get hostssl entries only and need TLS.
	Users []User

	// TLS generates a CA, a server certificate (SAN localhost, 127.0.0.1,
	// ::1) and a client certificate (CN = ClientCertUser) at start and turns
	// ssl on. The server verifies client certificates against the CA. The
	// role ClientCertUser is created (LOGIN, no password) with hostssl cert
	// entries, unless Users already names it.
	TLS bool

	// ClientCertUser is the CN of the generated client certificate. Empty
	// means "certuser".
	ClientCertUser string

	// HBA lines are placed first in pg_hba.conf, before the generated ones,
	// exactly as written.
	HBA []string

	// BinDir is the directory of the server binaries to run (initdb,
	// pg_ctl, postgres; pg_basebackup for standbys when there), for a
	// version other than the one found by default. Empty means the
	// environment variable PGLINE_PG_BINDIR, or else the search described
	// in the package documentation.
	BinDir string

	// Settings are extra postgresql.conf settings, written as
	// name = 'value' after pgtest's own, so they override them. The port
	// is always the one pgtest picks.
	Settings map[string]string
}

// User is a login role that Start creates, with its pg_hba.conf entries.
type User struct {
	Name     string
	Password string // required for "password", "md5" and "scram-sha-256"
	Method   string // "trust", "password", "md5", "scram-sha-256" or "cert"
	// HostSSLOnly makes the TCP entries hostssl instead of host.
	HostSSLOnly bool
}

// defaultClientCertUser is the CN of the client certificate when
// Options.ClientCertUser is empty.
const defaultClientCertUser = "certuser"

// superuser is the bootstrap superuser initdb creates.
const superuser = "postgres"

var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// certUser returns the CN of the client certificate.
func (o *Options) certUser() string {
	if o.ClientCertUser != "" {
		return o.ClientCertUser
	}
	return defaultClientCertUser
}

// users returns Users plus, with TLS, the implicit client-certificate user
// when Users does not name it.
func (o *Options) users() []User {
	us := append([]User(nil), o.Users...)
	if !o.TLS {
		return us
	}
	for _, u := range us {
		if u.Name == o.certUser() {
			return us
		}
	}
	return append(us, User{Name: o.certUser(), Method: "cert"})
}

// validate reports the first problem in o, before anything is created.
func (o *Options) validate() error {
	if o.TLS {
		if err := checkName("ClientCertUser", o.certUser()); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for i, u := range o.Users {
		where := fmt.Sprintf("Users[%d]", i)
		if err := checkName(where+".Name", u.Name); err != nil {
			return err
		}
		if u.Name == superuser {
			return fmt.Errorf("pgtest: %s: %q is the superuser pgtest creates itself", where, u.Name)
		}
		if seen[u.Name] {
			return fmt.Errorf("pgtest: %s: duplicate user %q", where, u.Name)
		}
		seen[u.Name] = true
		if strings.ContainsRune(u.Password, 0) {
			return fmt.Errorf("pgtest: %s: password contains a NUL byte", where)
		}
		switch u.Method {
		case "trust":
		case "password", "md5", "scram-sha-256":
			if u.Password == "" {
				return fmt.Errorf("pgtest: %s: method %q needs a non-empty Password", where, u.Method)
			}
		case "cert":
			if !o.TLS {
				return fmt.Errorf("pgtest: %s: method \"cert\" needs Options.TLS", where)
			}
		default:
			return fmt.Errorf("pgtest: %s: unknown method %q (want trust, password, md5, scram-sha-256 or cert)", where, u.Method)
		}
	}
	for i, l := range o.HBA {
		if strings.ContainsAny(l, "\n\r\x00") {
			return fmt.Errorf("pgtest: HBA[%d]: line contains a line break or NUL", i)
		}
	}
	for name, v := range o.Settings {
		if !settingName.MatchString(name) {
			return fmt.Errorf("pgtest: Settings: invalid setting name %q", name)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return fmt.Errorf("pgtest: Settings[%q]: value contains a line break or NUL", name)
		}
	}
	return nil
}

// checkName rejects role names that cannot be written safely into
// pg_hba.conf (quoted) or SQL (as a quoted identifier).
func checkName(field, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("pgtest: %s is empty", field)
	case len(name) > 63:
		return fmt.Errorf("pgtest: %s %q is longer than 63 bytes", field, name)
	case strings.ContainsAny(name, "\"\n\r\x00,"):
		return fmt.Errorf("pgtest: %s %q contains a quote, comma, line break or NUL", field, name)
	}
	return nil
}

// quoteIdent quotes s as an SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteLiteral quotes s as an SQL string literal
// (standard_conforming_strings is on by default).
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
