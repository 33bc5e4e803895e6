package config

import (
	"os/user"
	"regexp"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/dsn"
)

// echoed finds the value invalidValue shows in an error.
var echoed = regexp.MustCompile(`value: "(?:[^"\\]|\\.)*"`)

// FuzzParse checks that Parse never panics, that what it accepts is
// usable, and that its errors never show the planted password.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "host=a,b,/tmp port=5432,5433,5434 password=SECRETpw",
		"postgres://u:SECRETpw@h1:1,[::1]:2/db?sslmode=require&search_path=x",
		"postgres://u:SECRETpw%zz@h/db", "password='SECRETpw", "password=SECRETpw port=x",
		"hostaddr=192.0.2.1,::1 host=a,b password=SECRETpw", "postgres://%2Ftmp/db?password=SECRETpw",
		"sslrootcert=system sslmode=require password=SECRETpw", "connect_timeout=1 require_auth=!md5",
		"service=x password=SECRETpw", "pool_max_conns=3 statement_cache_mode=none",
		"postgres://h?ssl=true&password=SECRETpw&port=0",
		"sslmode= password=SECRETpw", "sslmode=SECRETpw password=x",
	} {
		f.Add(s)
	}
	home := f.TempDir()
	env := map[string]string{"HOME": home, "PGSYSCONFDIR": home}
	src := &dsn.Source{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		CurrentUser: func() (*user.User, error) {
			return &user.User{Username: "osuser", HomeDir: home}, nil
		},
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		c, err := Parse(dsn, src, testMaxConns)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, errPrefix) {
				t.Fatalf("error without prefix: %v", err)
			}
			// An enumerated key's bad value is shown by design
			// (invalidValue): "sslmode=SECRET" shows SECRET. The rest of
			// the error must not show it, nor may the shown value hold
			// "=" (a key=value pair read as the value) or be long.
			echo := echoed.FindString(msg)
			if strings.Contains(echo, "=") || len(echo) > len(`value: ""`)+4*maxEcho {
				t.Fatalf("error shows a value it must not: %v", err)
			}
			if rest := strings.Replace(msg, echo, "", 1); strings.Contains(dsn, "SECRET") && strings.Contains(rest, "SECRET") {
				t.Fatalf("error shows the password: %v", err)
			}
			return
		}
		if len(c.Hosts) == 0 {
			t.Fatalf("%q: no hosts", dsn)
		}
		for _, h := range c.Hosts {
			if h.Port == 0 || h.Host == "" && h.HostAddr == "" {
				t.Fatalf("%q: bad host %+v", dsn, h)
			}
			if c.Password != "" && h.Password != "" {
				t.Fatalf("%q: host password %q looked up although the DSN gives one", dsn, h.Password)
			}
		}
		if c.User == "" || c.Database == "" || c.SSLMode == "" || c.ReadBufferSize <= 0 || c.MaxMessageSize <= 0 {
			t.Fatalf("%q: missing defaults: %+v", dsn, c)
		}
		for k, v := range c.RuntimeParams {
			if k == "" || isKnownKey(k) || strings.Contains(k+v, "\x00") {
				t.Fatalf("%q: bad runtime parameter %q=%q", dsn, k, v)
			}
		}
	})
}
