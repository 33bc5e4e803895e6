package pgline

import (
	"errors"
	"strings"
	"testing"
)

// TestAuthMethods connects as one user per authentication method, over TCP
// and over the Unix socket, with the right password and with a wrong one.
func TestAuthMethods(t *testing.T) {
	cases := []struct {
		user, password string
	}{
		{"trustuser", ""},
		{"pwuser", pwPassword},
		{"md5user", pwMD5},
		{"scramuser", pwSCRAM},
	}
	for _, tc := range cases {
		for _, via := range []string{"tcp", "socket"} {
			t.Run(tc.user+"/"+via, func(t *testing.T) {
				dsn := srv.DSN("user="+tc.user, "password="+quoteDSN(tc.password))
				if via == "socket" {
					dsn = srv.SocketDSN("user="+tc.user, "password="+quoteDSN(tc.password))
				}
				c := connect(t, dsn)
				who, err := c.queryScalar(testCtx(t), "SELECT current_user")
				if err != nil {
					t.Fatal(err)
				}
				if who != tc.user {
					t.Fatalf("current_user = %q, want %q", who, tc.user)
				}
				if tc.password == "" {
					return
				}
				wrong := "Wrong-" + tc.password
				dsn = srv.DSN("user="+tc.user, "password="+wrong)
				if via == "socket" {
					dsn = srv.SocketDSN("user="+tc.user, "password="+wrong)
				}
				_, err = Connect(testCtx(t), dsn)
				var pgErr *PgError
				if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
					t.Fatalf("wrong password: got %v, want a PgError 28P01", err)
				}
				if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), tc.password) {
					t.Fatalf("error contains the password: %v", err)
				}
			})
		}
	}
}

func TestNoPasswordSupplied(t *testing.T) {
	_, err := Connect(testCtx(t), srv.DSN("user=scramuser", "passfile=/nonexistent"))
	if err == nil || !strings.Contains(err.Error(), "no password") {
		t.Fatalf("got %v, want a 'no password was supplied' error", err)
	}
}

func TestClientCertificate(t *testing.T) {
	c := connect(t, srv.DSN("user=certuser", "sslmode=verify-full", "host=localhost",
		"sslrootcert="+srv.CACertFile, "sslcert="+srv.ClientCertFile, "sslkey="+srv.ClientKeyFile))
	who, err := c.queryScalar(testCtx(t), "SELECT current_user")
	if err != nil || who != "certuser" {
		t.Fatalf("current_user = %q, %v", who, err)
	}
	// Without the certificate the server refuses the user.
	_, err = Connect(testCtx(t), srv.DSN("user=certuser", "sslmode=require"))
	var pgErr *PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28000" {
		t.Fatalf("no client certificate: got %v, want PgError 28000", err)
	}
}

func TestRequireAuth(t *testing.T) {
	cases := []struct {
		user, password, requireAuth string
		ok                          bool
	}{
		{"scramuser", pwSCRAM, "scram-sha-256", true},
		{"scramuser", pwSCRAM, "md5,password", false},
		{"scramuser", pwSCRAM, "!scram-sha-256", false},
		{"md5user", pwMD5, "!password", true},
		{"md5user", pwMD5, "scram-sha-256", false},
		{"pwuser", pwPassword, "md5,scram-sha-256", false},
		{"trustuser", "", "none", true},
		{"trustuser", "", "scram-sha-256", false},
		{"trustuser", "", "!none", false},
	}
	for _, tc := range cases {
		t.Run(tc.user+"/"+tc.requireAuth, func(t *testing.T) {
			c, err := Connect(testCtx(t), srv.DSN("user="+tc.user, "password="+quoteDSN(tc.password), "require_auth="+tc.requireAuth))
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("connected; want require_auth to refuse")
			}
			if !strings.Contains(err.Error(), "require_auth") {
				t.Fatalf("error does not name require_auth: %v", err)
			}
		})
	}
}

// quoteDSN quotes a key=value DSN value.
func quoteDSN(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// TestPasswordSetAfterParseConfig: a Config.Password set after ParseConfig
// is the one sent (before, ParseConfig had copied the DSN's, or none, into
// each host, and the later one was ignored: "no password was supplied").
func TestPasswordSetAfterParseConfig(t *testing.T) {
	ctx := testCtx(t)
	for _, dsnPassword := range []string{"", "wrong"} {
		dsn := srv.DSN("user=scramuser")
		if dsnPassword != "" {
			dsn = SetDSNParam(dsn, "password", dsnPassword)
		}
		cfg, err := ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.PassFile = "" // nothing from a password file either
		cfg.Password = pwSCRAM
		c, err := ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("DSN password %q, Config.Password set after: %v", dsnPassword, err)
		}
		c.Close()
		cfg.Password = "not it"
		if c, err := ConnectConfig(ctx, cfg); err == nil {
			c.Close()
			t.Fatalf("DSN password %q: a wrong Config.Password set after ParseConfig connected", dsnPassword)
		}
	}
}
