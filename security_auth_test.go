package pgline

// Authentication downgrades by a hostile server under require_auth and
// channel_binding.

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/auth"
	"github.com/pgline/pgline/internal/wire"
)

// TestSecurityAuth_NoDowngrade: under require_auth=scram-sha-256 or
// channel_binding=require a hostile server can neither get the password
// (cleartext or md5) nor let the client in without a verified SCRAM
// exchange.
func TestSecurityAuth_NoDowngrade(t *testing.T) {
	ca := newSecCA(t, "test CA")
	cert := ca.issue(t, leafOpts{cn: "localhost", dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}})
	plus := []string{auth.MechSCRAMSHA256Plus, auth.MechSCRAMSHA256}
	plain := []string{auth.MechSCRAMSHA256}
	scripts := []struct {
		name string
		s    authScript
	}{
		{"cleartext", askCleartext},
		{"md5", askMD5},
		{"trust", askNothing},
		{"scram-skip-final", scramThenSkip(plus, "ok")},
		{"scram-bad-final", scramThenSkip(plus, "badfinal")},
		{"scram-then-cleartext", scramThenSkip(plus, "cleartext")},
		{"scram-then-md5", scramThenSkip(plus, "md5")},
		{"scram-restart-ok", scramThenSkip(plus, "restart-ok")},
		{"scram-noplus-skip-final", scramThenSkip(plain, "ok")},
	}
	settings := []struct {
		name, dsn string
		tls       bool
	}{
		{"require_auth=scram", "require_auth=scram-sha-256 sslmode=disable", false},
		{"require_auth=scram-tls", "require_auth=scram-sha-256 sslmode=require", true},
		{"require_auth=!password,!md5,!none", "require_auth=!password,!md5,!none sslmode=disable", false},
		{"channel_binding=require", "channel_binding=require sslmode=require", true},
		{"channel_binding=require-prefer", "channel_binding=require sslmode=prefer", true},
	}
	for _, st := range settings {
		for _, sc := range scripts {
			t.Run(st.name+"/"+sc.name, func(t *testing.T) {
				ans := sslNo
				if st.tls {
					ans = sslYes
				}
				s := newSecServer(t, ans, cert, sc.s)
				c, err := Connect(testCtx(t), s.dsn(st.dsn))
				if err == nil {
					c.Close()
					t.Errorf("connected")
				}
				r := s.rec.snapshot()
				if len(r.passwords) > 0 {
					t.Errorf("client sent a password message: %q", r.passwords)
				}
				for _, p := range r.passwords {
					if strings.Contains(p, secPW) {
						t.Errorf("cleartext password sent")
					}
				}
				if err != nil && strings.Contains(err.Error(), secPW) {
					t.Errorf("error holds the password: %v", err)
				}
			})
		}
	}
}

// TestSecurityAuth_ChannelBindingNoTLS: channel_binding=require over a
// connection without TLS (sslmode=disable, or prefer against a server
// answering 'N') sends no SASL exchange at all.
func TestSecurityAuth_ChannelBindingNoTLS(t *testing.T) {
	for _, mode := range []string{"disable", "prefer", "allow"} {
		t.Run(mode, func(t *testing.T) {
			s := newSecServer(t, sslNo, tls.Certificate{}, scramThenSkip([]string{auth.MechSCRAMSHA256Plus, auth.MechSCRAMSHA256}, "ok"))
			c, err := Connect(testCtx(t), s.dsn("channel_binding=require sslmode="+mode))
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if r := s.rec.snapshot(); len(r.saslMechs) > 0 {
				t.Fatalf("client started SASL %v without TLS", r.saslMechs)
			}
		})
	}
}

// TestSecurityAuth_SCRAMGS2Flag: over TLS with the default
// channel_binding=prefer, a server offering only SCRAM-SHA-256 gets the
// "y" flag (downgrade detectable), a server offering -PLUS gets -PLUS.
func TestSecurityAuth_SCRAMGS2Flag(t *testing.T) {
	ca := newSecCA(t, "test CA")
	cert := ca.issue(t, leafOpts{cn: "localhost", dns: []string{"localhost"}})
	for _, tc := range []struct {
		mechs  []string
		prefix string
	}{
		{[]string{auth.MechSCRAMSHA256}, "y,,"},
		{[]string{auth.MechSCRAMSHA256Plus, auth.MechSCRAMSHA256}, "p=tls-server-end-point,,"},
	} {
		got := make(chan string, 1)
		s := newSecServer(t, sslYes, cert, func(t *testing.T, c net.Conn, rec *secRecord) {
			sendAuth(c, wire.Authentication{Type: wire.AuthSASL, Mechanisms: tc.mechs})
			body, err := readPasswordMsg(c)
			if err != nil {
				got <- ""
				return
			}
			ir, _ := wire.ParseSASLInitialResponse(body)
			got <- string(ir.Data)
		})
		c, err := Connect(testCtx(t), s.dsn("sslmode=require"))
		if err == nil {
			c.Close()
		}
		if g := <-got; !strings.HasPrefix(g, tc.prefix) {
			t.Errorf("offered %v: client-first %q, want prefix %q", tc.mechs, g, tc.prefix)
		}
	}
}

// TestSecurityAuth_RealServerChannelBinding: against the real server,
// channel_binding=require with require_auth=scram-sha-256 works over TLS,
// and require_auth refuses md5.
func TestSecurityAuth_RealServerChannelBinding(t *testing.T) {
	// scramuser over TLS with channel_binding=require works (PLUS).
	c := connect(t, srv.DSN("user=scramuser", "password="+pwSCRAM, "sslmode=require", "channel_binding=require", "require_auth=scram-sha-256"))
	c.Close()
	// md5user under require_auth=scram-sha-256 fails, naming require_auth.
	_, err := Connect(testCtx(t), srv.DSN("user=md5user", "password="+pwMD5, "require_auth=scram-sha-256"))
	if err == nil || !strings.Contains(err.Error(), "require_auth") {
		t.Fatalf("md5 under require_auth=scram-sha-256: %v", err)
	}
}
