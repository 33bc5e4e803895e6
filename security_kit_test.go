package pgline

// Helpers of the connection-security tests (security_*_test.go): a fake
// server that records what the client sent (was a StartupMessage sent in
// plaintext? which password messages?), the authentication it asks for,
// and a private CA to issue server certificates for it.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/wire"
)

// secCA is a throwaway certificate authority.
type secCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	pemFile string // the CA certificate, for sslrootcert
}

var secSerial struct {
	sync.Mutex
	n int64
}

// nextSerial is a certificate serial number not used before.
func nextSerial() *big.Int {
	secSerial.Lock()
	defer secSerial.Unlock()
	secSerial.n++
	return big.NewInt(secSerial.n + 100)
}

// newSecCA makes a CA named name, its certificate in a temp file.
func newSecCA(t *testing.T, name string) *secCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	f := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &secCA{cert: cert, key: key, pemFile: f}
}

// leafOpts describes a server certificate.
type leafOpts struct {
	cn       string
	dns      []string
	ips      []net.IP
	expired  bool
	isCA     bool
	eku      []x509.ExtKeyUsage
	selfSign bool
}

// issue makes a server certificate signed by ca (or self-signed).
func (ca *secCA) issue(t *testing.T, o leafOpts) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	nb, na := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if o.expired {
		nb, na = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	}
	eku := o.eku
	if eku == nil {
		eku = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: o.cn},
		NotBefore: nb, NotAfter: na, DNSNames: o.dns, IPAddresses: o.ips,
		ExtKeyUsage: eku, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if o.isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	parent, signer := ca.cert, ca.key
	if o.selfSign {
		parent, signer = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// secRecord is what a fake server saw from the client, over every
// connection made to it.
type secRecord struct {
	mu         sync.Mutex
	sslReqs    int      // SSLRequests received
	plainStart int      // StartupMessages received outside TLS
	tlsStart   int      // StartupMessages received inside TLS
	passwords  []string // PasswordMessage bodies (cleartext or md5)
	saslMechs  []string // mechanisms chosen in SASLInitialResponse
	conns      int
}

func (r *secRecord) add(f func(r *secRecord)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

func (r *secRecord) snapshot() secRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return secRecord{sslReqs: r.sslReqs, plainStart: r.plainStart, tlsStart: r.tlsStart,
		passwords: append([]string(nil), r.passwords...), saslMechs: append([]string(nil), r.saslMechs...), conns: r.conns}
}

// sslAnswer says how a fake server answers SSLRequest.
type sslAnswer int

const (
	sslNo    sslAnswer = iota // 'N'
	sslYes                    // 'S' and a TLS handshake with cert
	sslClose                  // close the connection at once
	sslError                  // 'E' and an ErrorResponse
)

// secServer is a fake server (fakeListen). Each connection: the SSLRequest is
// answered per answer, then the StartupMessage is read (recorded as plain
// or TLS) and script runs on the (possibly TLS) connection.
type secServer struct {
	rec    *secRecord
	port   int
	answer sslAnswer
	cert   tls.Certificate
}

func newSecServer(t *testing.T, answer sslAnswer, cert tls.Certificate, script func(t *testing.T, c net.Conn, rec *secRecord)) *secServer {
	t.Helper()
	s := &secServer{rec: &secRecord{}, answer: answer, cert: cert}
	port, wait := fakeListen(t, func(t *testing.T, c net.Conn) {
		c.SetDeadline(time.Now().Add(15 * time.Second))
		s.rec.add(func(r *secRecord) { r.conns++ })
		s.serve(t, c, script)
	})
	t.Cleanup(wait) // the scripts use t
	s.port = port
	return s
}

func (s *secServer) serve(t *testing.T, c net.Conn, script func(t *testing.T, c net.Conn, rec *secRecord)) {
	conn := c
	inTLS := false
	for {
		_, body, err := wire.ReadFrontendMessage(conn, true)
		if err != nil {
			return
		}
		code := binary.BigEndian.Uint32(body)
		if code == wire.SSLRequestCode && !inTLS {
			s.rec.add(func(r *secRecord) { r.sslReqs++ })
			switch s.answer {
			case sslNo:
				conn.Write([]byte{'N'})
				continue
			case sslClose:
				return
			case sslError:
				b, _ := wire.AppendErrorFields([]byte{}, wire.MsgErrorResponse, wire.ErrorFields{Severity: "FATAL", SeverityV: "FATAL", Code: "XX000", Message: "no ssl for you"})
				conn.Write(b)
				return
			case sslYes:
				conn.Write([]byte{'S'})
				ts := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{s.cert}})
				if err := ts.Handshake(); err != nil {
					return
				}
				conn, inTLS = ts, true
				continue
			}
		}
		if code == wire.CancelRequestCode {
			return
		}
		if inTLS {
			s.rec.add(func(r *secRecord) { r.tlsStart++ })
		} else {
			s.rec.add(func(r *secRecord) { r.plainStart++ })
		}
		break
	}
	if script != nil {
		script(t, conn, s.rec)
	}
}

// dsnHost is the key=value host/port of the server.
func (s *secServer) dsnHost() string {
	return "host=127.0.0.1 port=" + strconv.Itoa(s.port)
}

// dsn is a DSN for s with the settings every security test wants.
func (s *secServer) dsn(extra string) string {
	return s.dsnHost() + " user=u dbname=d password=" + secPW + " connect_timeout=5 statement_cache_mode=prepare " + extra
}

// secPW is the password the security tests give; no error or log may hold it.
const secPW = "Top-Secret-PW-7f3a"

// sendAuth writes an Authentication message.
func sendAuth(c net.Conn, a wire.Authentication) error {
	b, err := wire.AppendAuthentication(nil, a)
	if err != nil {
		return err
	}
	_, err = c.Write(b)
	return err
}

// recordClientAuth reads the client's messages until EOF, recording
// PasswordMessages (the client may send one after any request).
func recordClientAuth(c net.Conn, rec *secRecord, sasl bool) {
	for {
		typ, body, err := wire.ReadFrontendMessage(c, false)
		if err != nil {
			return
		}
		if typ != wire.MsgPassword {
			continue
		}
		if sasl {
			if ir, err := wire.ParseSASLInitialResponse(body); err == nil {
				rec.add(func(r *secRecord) { r.saslMechs = append(r.saslMechs, ir.Mechanism) })
				continue
			}
		}
		if pw, err := wire.ParsePassword(body); err == nil {
			rec.add(func(r *secRecord) { r.passwords = append(r.passwords, pw) })
		}
	}
}

// readPasswordMsg reads one PasswordMessage-type message body.
func readPasswordMsg(c net.Conn) ([]byte, error) {
	for {
		typ, body, err := wire.ReadFrontendMessage(c, false)
		if err != nil {
			return nil, err
		}
		if typ == wire.MsgPassword {
			return body, nil
		}
	}
}

// authScript is what a hostile server asks for after the StartupMessage.
type authScript func(t *testing.T, c net.Conn, rec *secRecord)

func askCleartext(t *testing.T, c net.Conn, rec *secRecord) {
	sendAuth(c, wire.Authentication{Type: wire.AuthCleartextPassword})
	recordThenOK(c, rec)
}

func askMD5(t *testing.T, c net.Conn, rec *secRecord) {
	sendAuth(c, wire.Authentication{Type: wire.AuthMD5Password, Salt: [4]byte{1, 2, 3, 4}})
	recordThenOK(c, rec)
}

func askNothing(t *testing.T, c net.Conn, rec *secRecord) {
	c.Write(authOKReady())
	recordClientAuth(c, rec, true)
}

// recordThenOK records one PasswordMessage, if the client sends one, and
// answers AuthenticationOk.
func recordThenOK(c net.Conn, rec *secRecord) {
	body, err := readPasswordMsg(c)
	if err != nil {
		return
	}
	if pw, err := wire.ParsePassword(body); err == nil {
		rec.add(func(r *secRecord) { r.passwords = append(r.passwords, pw) })
	}
	c.Write(authOKReady())
	recordClientAuth(c, rec, false)
}

// scramThenSkip runs SASL up to the client's final message, then answers
// per tail: "ok" (AuthenticationOk without SASLFinal), "badfinal" (a
// SASLFinal with a wrong signature then Ok), "cleartext" (ask for the
// password in clear after all).
func scramThenSkip(mechs []string, tail string) authScript {
	return func(t *testing.T, c net.Conn, rec *secRecord) {
		sendAuth(c, wire.Authentication{Type: wire.AuthSASL, Mechanisms: mechs})
		body, err := readPasswordMsg(c)
		if err != nil {
			return
		}
		ir, err := wire.ParseSASLInitialResponse(body)
		if err != nil {
			return
		}
		rec.add(func(r *secRecord) { r.saslMechs = append(r.saslMechs, ir.Mechanism) })
		first := string(ir.Data)
		i := strings.Index(first, "r=")
		if i < 0 {
			return
		}
		nonce := first[i+2:]
		sf := "r=" + nonce + "SERVERPART,s=" + base64.StdEncoding.EncodeToString([]byte("saltsalt")) + ",i=4096"
		sendAuth(c, wire.Authentication{Type: wire.AuthSASLContinue, Data: []byte(sf)})
		if _, err := readPasswordMsg(c); err != nil {
			return
		}
		switch tail {
		case "ok":
			c.Write(authOKReady())
		case "badfinal":
			sendAuth(c, wire.Authentication{Type: wire.AuthSASLFinal, Data: []byte("v=" + base64.StdEncoding.EncodeToString(make([]byte, 32)))})
			c.Write(authOKReady())
		case "cleartext":
			sendAuth(c, wire.Authentication{Type: wire.AuthCleartextPassword})
			recordThenOK(c, rec)
			return
		case "md5":
			sendAuth(c, wire.Authentication{Type: wire.AuthMD5Password})
			recordThenOK(c, rec)
			return
		case "restart-ok":
			// A second SASL request, then Ok before it completes.
			sendAuth(c, wire.Authentication{Type: wire.AuthSASL, Mechanisms: mechs})
			readPasswordMsg(c)
			c.Write(authOKReady())
		}
		recordClientAuth(c, rec, true)
	}
}

// okScript answers a successful trust startup.
func okScript(t *testing.T, c net.Conn, rec *secRecord) {
	c.Write(authOKReady())
	recordClientAuth(c, rec, false)
}

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }

// cont sends an AuthenticationSASLContinue with data.
func cont(c net.Conn, data string) {
	sendAuth(c, wire.Authentication{Type: wire.AuthSASLContinue, Data: []byte(data)})
}
