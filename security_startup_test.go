package pgline

// A hostile server (or, under sslmode=prefer, allow or disable, a man in
// the middle) during startup and authentication: memory, deadlines,
// panics.

import (
	"context"
	"encoding/base64"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/auth"
	"github.com/pgline/pgline/internal/wire"
)

// TestSecurityStartup_HugeErrorHeader: before authentication, a server
// sends the 5-byte header of an ErrorResponse (or NoticeResponse)
// declaring 1 GiB - 1 bytes, then nothing. The client must not allocate
// the whole declared body at once (1 GiB per connection attempt for 5
// bytes, before the server proved anything; under sslmode=prefer, from
// anyone on the path). libpq caps an ErrorResponse during startup at
// MAX_ERRLEN (30000 bytes) and grows its buffer as bytes arrive.
func TestSecurityStartup_HugeErrorHeader(t *testing.T) {
	for _, typ := range []byte{'E', 'N'} {
		t.Run(string(typ), func(t *testing.T) {
			dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
				if readStartup(c) != nil {
					return
				}
				c.Write(rawMsg(typ, 1<<30-1, nil)) // body 1 GiB - 5 bytes, under the 1 GiB cap
				time.Sleep(300 * time.Millisecond)
			})
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := Connect(ctx, dsn)
			runtime.ReadMemStats(&after)
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Fatalf("allocated %d MiB for a 5-byte message header before authentication (%v)", grew>>20, err)
			}
		})
	}
}

// TestSecurityStartup_FloodDeadline: endless ParameterStatus,
// NoticeResponse or a slow drip of one message: Connect returns at its ctx
// deadline.
func TestSecurityStartup_FloodDeadline(t *testing.T) {
	ps := func(i int) []byte {
		b, _ := wire.AppendParameterStatus(nil, wire.ParameterStatus{Name: "p" + itoa(i), Value: strings.Repeat("v", 100)})
		return b
	}
	notice, _ := wire.AppendErrorFields(nil, wire.MsgNoticeResponse, wire.ErrorFields{Severity: "NOTICE", Code: "00000", Message: "hi"})
	authOK, _ := wire.AppendAuthentication(nil, wire.Authentication{Type: wire.AuthOK})
	cases := map[string]func(c net.Conn){
		"paramstatus": func(c net.Conn) {
			c.Write(authOK)
			for i := 0; ; i++ {
				if _, err := c.Write(ps(i)); err != nil {
					return
				}
			}
		},
		"notice-during-auth": func(c net.Conn) {
			for {
				if _, err := c.Write(notice); err != nil {
					return
				}
			}
		},
		"drip": func(c net.Conn) {
			c.Write(authOK)
			b := ps(1)
			for _, x := range b {
				if _, err := c.Write([]byte{x}); err != nil {
					return
				}
				time.Sleep(400 * time.Millisecond)
			}
		},
		"tls-drip": nil,
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
				if f == nil {
					wire.ReadFrontendMessage(c, true)
					c.Write([]byte{'S'})
					// A TLS record header announcing a ServerHello, then its
					// body one byte at a time.
					c.Write([]byte{0x16, 0x03, 0x03, 0x00, 0x40})
					for i := 0; i < 30; i++ {
						if _, err := c.Write([]byte{0x02}); err != nil {
							return
						}
						time.Sleep(300 * time.Millisecond)
					}
					return
				}
				if readStartup(c) != nil {
					return
				}
				f(c)
			})
			if f == nil {
				dsn = strings.Replace(dsn, "sslmode=disable", "sslmode=require", 1)
			}
			dsn = strings.Replace(dsn, "connect_timeout=10", "", 1)
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			start := time.Now()
			c, err := Connect(ctx, dsn)
			took := time.Since(start)
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if took > 2500*time.Millisecond {
				t.Fatalf("returned %v after a 1.5s deadline", took)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v is not DeadlineExceeded", err)
			}
		})
	}
}

// TestSecurityStartup_MalformedSASL: malformed SASL exchanges fail cleanly
// (no panic, no hang, small allocations), and a high iteration count is
// refused.
func TestSecurityStartup_MalformedSASL(t *testing.T) {
	cases := map[string]func(c net.Conn, nonce string){
		"iterations-huge":  func(c net.Conn, n string) { cont(c, "r="+n+"x,s=c2FsdA==,i=99999999999") },
		"iterations-limit": func(c net.Conn, n string) { cont(c, "r="+n+"x,s=c2FsdA==,i=1000001") },
		"nonce-replaced":   func(c net.Conn, n string) { cont(c, "r=AAAA,s=c2FsdA==,i=4096") },
		"salt-huge": func(c net.Conn, n string) {
			cont(c, "r="+n+"x,s="+base64.StdEncoding.EncodeToString(make([]byte, 700<<10))+",i=1")
		},
		"empty-continue": func(c net.Conn, n string) { cont(c, "") },
		"final-first": func(c net.Conn, n string) {
			sendAuth(c, wire.Authentication{Type: wire.AuthSASLFinal, Data: []byte("v=AAAA")})
		},
		"final-error": func(c net.Conn, n string) {
			cont(c, "r="+n+"x,s=c2FsdA==,i=1")
			readPasswordMsg(c)
			sendAuth(c, wire.Authentication{Type: wire.AuthSASLFinal, Data: []byte("e=" + strings.Repeat("x", 500<<10))})
		},
		"unknown-auth": func(c net.Conn, n string) {
			c.Write(rawMsg('R', 8, []byte{0, 0, 0, 99}))
		},
		"auth-truncated": func(c net.Conn, n string) {
			c.Write(rawMsg('R', 6, []byte{0, 0}))
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
				if readStartup(c) != nil {
					return
				}
				sendAuth(c, wire.Authentication{Type: wire.AuthSASL, Mechanisms: []string{auth.MechSCRAMSHA256}})
				body, err := readPasswordMsg(c)
				if err != nil {
					return
				}
				ir, _ := wire.ParseSASLInitialResponse(body)
				first := string(ir.Data)
				nonce := first[strings.Index(first, "r=")+2:]
				f(c, nonce)
				c.Write(authOKReady())
				waitClosed(c)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			c, err := Connect(ctx, dsn)
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
			if strings.Contains(err.Error(), "fakepw") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

// TestSecurityStartup_BareConfig: a Config built by hand (zero buffer
// sizes, empty sslmode, no RuntimeParams) connects without a panic.
func TestSecurityStartup_BareConfig(t *testing.T) {
	dsn := fakeServer(t, func(t *testing.T, c net.Conn) {
		if cancel, err := fakeAccept(c); cancel || err != nil {
			return
		}
		waitClosed(c)
	})
	parsed, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Hosts: parsed.Hosts, User: "u", Password: "x"}
	cfg.cacheMode = session.CachePrepare
	c, err := ConnectConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("bare Config: %v", err)
	}
	c.Close()
}
