package pgline

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/pgline/pgline/internal/wire"
)

// tlsVersions maps ssl_min_protocol_version and ssl_max_protocol_version
// values to crypto/tls versions.
var tlsVersions = map[string]uint16{
	"TLSv1": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13,
}

// tlsPlan says how one connection attempt uses TLS.
type tlsPlan int

const (
	tlsNo       tlsPlan = iota // plaintext only
	tlsTry                     // ask for TLS, accept plaintext when the server says no
	tlsRequired                // ask for TLS, fail when the server says no
)

// tlsAttempts lists the TLS plans to try for one host, in order, as libpq
// does for each sslmode: allow tries plaintext then TLS, prefer tries TLS
// (accepting a plain 'N') then plaintext. Unix sockets never use TLS.
func tlsAttempts(cfg *Config, h HostConfig) []tlsPlan {
	if h.IsUnixSocket() {
		return []tlsPlan{tlsNo}
	}
	switch cfg.SSLMode {
	case "disable":
		return []tlsPlan{tlsNo}
	case "allow":
		return []tlsPlan{tlsNo, tlsRequired}
	case "prefer", "":
		return []tlsPlan{tlsTry, tlsNo}
	default: // require, verify-ca, verify-full
		return []tlsPlan{tlsRequired}
	}
}

// alpnPostgreSQL is the ALPN protocol of PostgreSQL, as registered with
// IANA: a client offers it on every TLS connection (libpq 17 does), and
// a direct TLS connection requires the server to select it.
const alpnPostgreSQL = "postgresql"

// negotiateTLS starts TLS on nc, a new connection to host, before anything
// else is sent on it, as cfg.SSLNegotiation says; it is the one place
// where pgline negotiates TLS, for a session (Conn.startTLS) and for its
// CancelRequest (cancelTLS). It returns the TLS connection, or nil when
// the server has no TLS and plan accepts that (the connection stays
// plain).
//
// With sslnegotiation=postgres (the default) it sends SSLRequest and
// reads exactly one byte of answer straight from the socket before any
// other read (CVE-2021-23222: bytes the server or a man in the middle
// sends after 'S' must not be taken as protocol data; they reach the TLS
// handshake, which fails on them). 'N' means no TLS: plaintext goes on
// when plan allows it.
//
// With sslnegotiation=direct (PostgreSQL 17+) the TLS handshake starts
// with the first byte, and the server must select ALPN "postgresql"
// (directTLS).
func negotiateTLS(nc net.Conn, cfg *Config, host string, plan tlsPlan) (*tls.Conn, error) {
	if cfg.SSLNegotiation == "direct" {
		return directTLS(nc, cfg, host)
	}
	if _, err := nc.Write(wire.AppendSSLRequest(nil)); err != nil {
		return nil, err
	}
	var b [1]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		return nil, fmt.Errorf("read SSLRequest answer: %w", err)
	}
	switch b[0] {
	case 'S':
	case 'N':
		if plan == tlsRequired {
			return nil, errors.New("server does not support TLS, but sslmode requires it")
		}
		return nil, nil
	case 'E':
		// A server failure (or one too old to know SSLRequest): its
		// message, from a server not authenticated yet, is not read, and
		// no attempt without TLS follows, whatever the sslmode (as libpq
		// since CVE-2024-10977).
		return nil, errSSLRequestError
	default:
		return nil, &ProtocolError{Msg: fmt.Sprintf("unexpected answer %q to SSLRequest", b[0])}
	}
	tc, err := buildTLSConfig(cfg, host)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(nc, tc)
	if err := conn.Handshake(); err != nil {
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return conn, nil
}

// directTLS is negotiateTLS with sslnegotiation=direct: the TLS handshake
// from the first byte, with no SSLRequest, as libpq 17 documents it
// ("start SSL handshake directly after establishing the TCP/IP
// connection", https://www.postgresql.org/docs/17/libpq-connect.html#LIBPQ-CONNECT-SSLNEGOTIATION).
// The protocol requires ALPN on such a connection, against protocol
// confusion ("When using SSL connections in this style the client is
// required to use the ALPN extension defined by RFC 7301 ... The
// PostgreSQL protocol is "postgresql"",
// https://www.postgresql.org/docs/17/protocol-flow.html#PROTOCOL-FLOW-SSL),
// and libpq refuses a connection whose server did not select it ("direct
// SSL connection was established without ALPN protocol negotiation
// extension"): so does pgline. A server before PostgreSQL 17 takes the
// ClientHello for a bad startup packet and closes the connection (or
// answers an error, which is no TLS record): the error then names
// sslnegotiation=direct. What sslmode asks of the server's certificate is
// checked as with SSLRequest (buildTLSConfig).
func directTLS(nc net.Conn, cfg *Config, host string) (*tls.Conn, error) {
	tc, err := buildTLSConfig(cfg, host)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(nc, tc)
	if err := conn.Handshake(); err != nil {
		return nil, fmt.Errorf("TLS handshake with sslnegotiation=direct (servers before PostgreSQL 17 do not accept it): %w", err)
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != alpnPostgreSQL {
		conn.Close()
		if p == "" {
			return nil, errors.New("sslnegotiation=direct: the server selected no ALPN protocol; direct TLS requires \"postgresql\"")
		}
		return nil, fmt.Errorf("sslnegotiation=direct: the server selected ALPN protocol %q, not \"postgresql\"", p)
	}
	return conn, nil
}

// cancelTLS starts TLS on nc, a new connection for a CancelRequest of a
// session that uses TLS, as the session's own connection did: with the
// same negotiation (libpq 17's PQcancelCreate copies every connection
// option, sslnegotiation among them, so a cancel of a direct TLS
// connection is direct TLS too) and the same certificate checks. The
// session had TLS, so TLS is required.
func cancelTLS(nc net.Conn, cfg *Config, host string) (net.Conn, error) {
	conn, err := negotiateTLS(nc, cfg, host, tlsRequired)
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// buildTLSConfig derives the client TLS configuration for host from cfg's
// ssl* settings, for both negotiations (negotiateTLS). Certificate checks
// are done in VerifyConnection so that SNI (sslsni) and verification
// (sslmode) stay independent, as in libpq. ALPN offers "postgresql"
// alone, on every TLS connection, as libpq 17 does.
func buildTLSConfig(cfg *Config, host string) (*tls.Config, error) {
	if cfg.TLSConfig != nil {
		c := cfg.TLSConfig.Clone()
		if c.ServerName == "" && cfg.SSLSNI && net.ParseIP(host) == nil {
			c.ServerName = host
		}
		c.NextProtos = []string{alpnPostgreSQL}
		return c, nil
	}
	mode := cfg.SSLMode
	rootCert := cfg.SSLRootCert
	verify := mode == "verify-ca" || mode == "verify-full"
	if rootCert == "system" {
		mode, verify = "verify-full", true
	}
	// libpq: with sslmode=require and a root certificate given, require
	// behaves as verify-ca.
	if mode == "require" && rootCert != "" {
		verify = true
		mode = "verify-ca"
	}

	tc := &tls.Config{
		NextProtos:         []string{alpnPostgreSQL},
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // verification is done in VerifyConnection below
	}
	if v, ok := tlsVersions[cfg.SSLMinProtocolVersion]; ok {
		tc.MinVersion = v
	}
	if v, ok := tlsVersions[cfg.SSLMaxProtocolVersion]; ok {
		tc.MaxVersion = v
	}
	if cfg.SSLSNI && net.ParseIP(host) == nil {
		tc.ServerName = host
	}

	if verify {
		var roots *x509.CertPool
		if rootCert == "system" {
			pool, err := x509.SystemCertPool()
			if err != nil {
				return nil, fmt.Errorf("load system root certificates: %w", err)
			}
			roots = pool
		} else {
			if rootCert == "" {
				return nil, fmt.Errorf("sslmode=%s needs a root certificate (sslrootcert)", mode)
			}
			pem, err := os.ReadFile(rootCert)
			if err != nil {
				return nil, fmt.Errorf("read sslrootcert: %w", err)
			}
			roots = x509.NewCertPool()
			if !roots.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("sslrootcert %s holds no PEM certificate", rootCert)
			}
		}
		checkName := mode == "verify-full"
		if checkName && host == "" {
			// libpq: verify-full needs a host name; hostaddr alone
			// gives none to check the certificate against.
			return nil, errors.New("sslmode=verify-full needs a host name to check the server certificate against (host=, not only hostaddr=)")
		}
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyServerCert(cs, roots, host, checkName)
		}
	}

	if cfg.SSLCert != "" || cfg.SSLKey != "" {
		if cfg.SSLCert == "" || cfg.SSLKey == "" {
			return nil, errors.New("sslcert and sslkey must be given together")
		}
		if err := checkKeyFilePermissions(cfg.SSLKey); err != nil {
			return nil, err
		}
		pair, err := tls.LoadX509KeyPair(cfg.SSLCert, cfg.SSLKey)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// verifyServerCert checks the server's chain against roots and, when
// checkName is set, that the leaf certificate is valid for host.
func verifyServerCert(cs tls.ConnectionState, roots *x509.CertPool, host string, checkName bool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("server sent no certificate")
	}
	opts := x509.VerifyOptions{
		Roots:         roots,
		Intermediates: x509.NewCertPool(),
	}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	leaf := cs.PeerCertificates[0]
	if _, err := leaf.Verify(opts); err != nil {
		return err
	}
	if !checkName {
		return nil
	}
	if host == "" {
		return errors.New("no host name to check the server certificate against")
	}
	err := leaf.VerifyHostname(host)
	if err != nil && len(leaf.DNSNames) == 0 && len(leaf.IPAddresses) == 0 && matchCommonName(leaf.Subject.CommonName, host) {
		// libpq: without subject alternative names, the Common Name is
		// the certificate's name (PostgreSQL's own recipe makes such
		// certificates); Go's check no longer looks at it.
		return nil
	}
	return err
}

// matchCommonName reports whether a certificate's Common Name cn names
// host as libpq matches it: case-insensitively, with a leading "*." that
// stands for exactly one label of a host name (not of an IP address).
func matchCommonName(cn, host string) bool {
	if cn == "" {
		return false
	}
	if strings.EqualFold(cn, host) {
		return true
	}
	rest, ok := strings.CutPrefix(cn, "*.")
	if !ok || net.ParseIP(host) != nil {
		return false
	}
	_, domain, ok := strings.Cut(host, ".")
	return ok && strings.EqualFold(domain, rest)
}

// checkKeyFilePermissions refuses a private key that others may read, as
// libpq does: at most 0600 for a key owned by the user, at most 0640 when it
// is owned by root (a key shared with a system group).
func checkKeyFilePermissions(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("sslkey: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("sslkey %s is not a regular file", path)
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	perm := fi.Mode().Perm()
	limit, want := os.FileMode(0o077), "0600"
	if fileOwnerUID(fi) == 0 {
		limit, want = 0o037, "0640"
	}
	if perm&limit != 0 {
		return fmt.Errorf("sslkey %s has mode %#o; it must be %s or less", path, perm, want)
	}
	return nil
}
