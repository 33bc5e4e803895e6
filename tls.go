package pgline

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
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

// buildTLSConfig derives the client TLS configuration for host from cfg's
// ssl* settings. Certificate checks are done in VerifyConnection so that SNI
// (sslsni) and verification (sslmode) stay independent, as in libpq.
func buildTLSConfig(cfg *Config, host string) (*tls.Config, error) {
	if cfg.TLSConfig != nil {
		c := cfg.TLSConfig.Clone()
		if c.ServerName == "" && cfg.SSLSNI && net.ParseIP(host) == nil {
			c.ServerName = host
		}
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
