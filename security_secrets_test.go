package pgline

// Passwords must not show in errors, logs, traces or formatted values
// (SECURITY.md: "a password, token or other secret appearing in an error,
// a log record or a trace (DSNs included)").

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecuritySecrets_ConfigFormatting: a *Config printed with %v, %+v or
// %#v, or logged with slog.Any, must not show the password, the
// password-file password of each host or sslpassword in clear. A Config
// is what a program logs when a connection fails ("cannot connect with
// %+v").
func TestSecuritySecrets_ConfigFormatting(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pgpass")
	if err := os.WriteFile(pass, []byte("*:*:*:*:PassFile-Secret-99\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig("host=db1 user=u password=" + secPW + " sslpassword=SSLKey-Secret-42")
	if err != nil {
		t.Fatal(err)
	}
	cfg2, err := ParseConfig("host=db1 user=u passfile=" + pass)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{secPW, "SSLKey-Secret-42", "PassFile-Secret-99"}
	var logBuf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&logBuf, nil))
	l.Info("config", "cfg", cfg, "cfg2", cfg2)
	l.Info("host", "h", cfg2.Hosts[0])
	outs := map[string]string{"slog": logBuf.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		outs[verb] = fmt.Sprintf(verb, cfg) + fmt.Sprintf(verb, cfg2) + fmt.Sprintf(verb, *cfg) + fmt.Sprintf(verb, cfg2.Hosts)
	}
	for how, out := range outs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s of a Config shows the secret %q", how, s)
			}
		}
	}
}

// TestSecuritySecrets_ParseErrors: every ParseConfig error for a malformed
// DSN holding a password leaves the password out. A password typed as the
// value of an enumerated key (sslmode=, require_auth=, channel_binding=,
// ...) is not here: that value is what the user typed into the key, and
// its error shows it, as libpq's does (internal/config's
// TestParseErrorsEchoValue); a password given as one, and the value of a
// key whose error shows no value, are.
func TestSecuritySecrets_ParseErrors(t *testing.T) {
	pw := secPW
	dsns := []string{
		"postgres://u:" + pw + "@host:notaport/db",
		"postgres://u:" + pw + "@host:99999/db",
		"postgres://u:" + pw + "%zz@host/db",
		"postgres://u:" + pw + "@[::1/db",
		"postgres://u:" + pw + "@host/db?sslmode=bogus",
		"postgres://u:" + pw + "@host/db?" + pw,
		"postgres://u:" + pw + "@host/db?" + pw + "=x=y",
		"postgres://u:" + pw + "@host/db?x=%zz" + pw,
		"postgres://u:" + pw + "@host/db?password=" + pw + "%",
		"postgres://u:" + pw + "@host/db?database=x",
		"postgres://u:" + pw + "@host/db?_pq_.x=1",
		"postgres://u:" + pw + "@host/db extra=1",
		"postgres://u:" + pw + "@host/db?connect_timeout=" + pw,
		"postgres://u:" + pw + "@host/db?hostaddr=" + pw,
		"postgres://u:" + pw + "@h1,h2/db?port=1,2,3",
		"postgres://u:" + pw + "@host/db?sslcrl=" + pw,
		"postgres://" + pw + "@host:x/db",
		"host=h password='" + pw,
		"host=h password=" + pw + " port=" + pw,
		"host=h " + pw,
		"host=h " + pw + "=",
		"host=h sslmode= password=" + pw, // sslmode="password=...", as in libpq
		"host=h target_session_attrs= password=" + pw,
		"postgres://u:" + pw + "@host/db?sslmode=password%3D" + pw,
		"host=h password=" + pw + " pool_max_conns=" + pw,
		"host=h password=" + pw + " cancel_timeout=" + pw,
		"host=h password=" + pw + " x\x00y=1",
		"host=h password=" + pw + " service=" + pw,
		"host=h password=" + pw + " service=nosuch",
		"=" + pw,
		"host=h user=u " + pw + "'",
	}
	for _, d := range dsns {
		_, err := ParseConfig(d)
		if err == nil {
			continue
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), pw[:10]) {
			t.Errorf("ParseConfig(%q): error shows the password: %v", d, err)
		}
	}
}

// TestSecuritySecrets_EnvAndServiceErrors: bad values from the environment
// and the service file are reported without them.
func TestSecuritySecrets_EnvAndServiceErrors(t *testing.T) {
	dir := t.TempDir()
	svc := filepath.Join(dir, "svc.conf")
	body := "[s1]\npassword=" + secPW + "\nport=" + secPW + "\n[s2]\npassword=" + secPW + "\n" + secPW + "\n"
	if err := os.WriteFile(svc, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGSERVICEFILE", svc)
	for _, d := range []string{"service=s1 host=h user=u", "service=s2 host=h user=u"} {
		_, err := ParseConfig(d)
		if err == nil {
			t.Errorf("%s: no error", d)
			continue
		}
		if strings.Contains(err.Error(), secPW) {
			t.Errorf("%s: error shows the password: %v", d, err)
		}
	}
	t.Setenv("PGPASSWORD", secPW)
	t.Setenv("PGPORT", secPW)
	if _, err := ParseConfig("host=h user=u"); err == nil || strings.Contains(err.Error(), secPW) {
		t.Errorf("PGPORT error: %v", err)
	}
}

// TestSecuritySecrets_ConnectErrorsAndTrace: a failed connect (no server,
// wrong password from the DSN, PGPASSWORD or a password file) shows no
// password in its error nor in the SlogTracer record.
func TestSecuritySecrets_ConnectErrorsAndTrace(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pgpass")
	if err := os.WriteFile(pass, []byte("*:*:*:*:PassFile-Wrong-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dsn, secret string
		env               map[string]string
	}{
		{"dsn", srv.DSN("user=scramuser", "password="+secPW), secPW, nil},
		{"dsn-md5", srv.DSN("user=md5user", "password="+secPW), secPW, nil},
		{"dsn-cleartext", srv.DSN("user=pwuser", "password="+secPW, "sslmode=disable"), secPW, nil},
		{"env", srv.DSN("user=scramuser"), secPW, map[string]string{"PGPASSWORD": secPW}},
		{"passfile", srv.DSN("user=scramuser", "passfile="+pass), "PassFile-Wrong-77", nil},
		{"no-server", "host=127.0.0.1 port=1 user=u password=" + secPW + " connect_timeout=2", secPW, nil},
		{"url", "postgres://scramuser:" + secPW + "@127.0.0.1:1/db?connect_timeout=2", secPW, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := ParseConfig(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			var logBuf bytes.Buffer
			cfg.Tracer = SlogTracer(slog.New(slog.NewJSONHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})), &SlogTracerOptions{Args: true})
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			c, err := ConnectConfig(ctx, cfg)
			if err == nil {
				c.Close()
				t.Fatal("connected with a wrong password")
			}
			for _, out := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), logBuf.String()} {
				if strings.Contains(out, tc.secret) {
					t.Errorf("secret shows: %s", out)
				}
			}
		})
	}
}
