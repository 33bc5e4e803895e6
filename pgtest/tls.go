package pgtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// tlsFiles are the PEM files written by writeTLS.
type tlsFiles struct {
	caCert, serverCert, serverKey, clientCert, clientKey, wrongCACert string
}

// keyPair is a certificate with its key.
type keyPair struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

// writeTLS generates a CA, a server and a client certificate signed by it,
// and an unrelated second CA, into dir. Files the server reads are given to
// srv; the client key stays with the test process (mode 0600).
func writeTLS(dir string, clientCN string, srv *account) (tlsFiles, error) {
	ca, err := newCert(nil, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "pgtest CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	})
	if err != nil {
		return tlsFiles{}, err
	}
	wrong, err := newCert(nil, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "pgtest unrelated CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	})
	if err != nil {
		return tlsFiles{}, err
	}
	server, err := newCert(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return tlsFiles{}, err
	}
	client, err := newCert(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: clientCN},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return tlsFiles{}, err
	}

	f := tlsFiles{
		caCert:      filepath.Join(dir, "ca.crt"),
		serverCert:  filepath.Join(dir, "server.crt"),
		serverKey:   filepath.Join(dir, "server.key"),
		clientCert:  filepath.Join(dir, "client.crt"),
		clientKey:   filepath.Join(dir, "client.key"),
		wrongCACert: filepath.Join(dir, "wrong-ca.crt"),
	}
	writes := []struct {
		path  string
		block *pem.Block
		mode  os.FileMode
		owner *account
	}{
		{f.caCert, certBlock(ca), 0o644, srv},
		{f.wrongCACert, certBlock(wrong), 0o644, nil},
		{f.serverCert, certBlock(server), 0o644, srv},
		{f.serverKey, nil, 0o600, srv},
		{f.clientCert, certBlock(client), 0o644, nil},
		{f.clientKey, nil, 0o600, nil},
	}
	for _, w := range writes {
		b := w.block
		if b == nil {
			k := server.key
			if w.path == f.clientKey {
				k = client.key
			}
			if b, err = keyBlock(k); err != nil {
				return tlsFiles{}, err
			}
		}
		if err := os.WriteFile(w.path, pem.EncodeToMemory(b), w.mode); err != nil {
			return tlsFiles{}, fmt.Errorf("pgtest: write %s: %w", w.path, err)
		}
		if err := w.owner.chown(w.path); err != nil {
			return tlsFiles{}, err
		}
	}
	return f, nil
}

// paths returns pointers to every path in f.
func (f *tlsFiles) paths() []*string {
	return []*string{&f.caCert, &f.serverCert, &f.serverKey, &f.clientCert, &f.clientKey, &f.wrongCACert}
}

// copyTLS copies the files of f into dir, each keeping its mode and owner,
// and returns the copies.
func copyTLS(f tlsFiles, dir string) (tlsFiles, error) {
	for _, p := range f.paths() {
		dst := filepath.Join(dir, filepath.Base(*p))
		if err := copyFile(*p, dst); err != nil {
			return tlsFiles{}, err
		}
		*p = dst
	}
	return f, nil
}

// copyFile copies src to the new file dst with the same mode and owner.
func copyFile(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := os.Chmod(dst, fi.Mode().Perm()); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return sameOwner(src, dst)
}

// newCert creates a certificate from tmpl with a fresh P-256 key, signed by
// parent (self-signed when parent is nil).
func newCert(parent *keyPair, tmpl *x509.Certificate) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pgtest: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("pgtest: serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(10 * 365 * 24 * time.Hour)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("pgtest: create certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pgtest: parse certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return &keyPair{cert: cert, der: der, key: key}, nil
}

func certBlock(k *keyPair) *pem.Block {
	return &pem.Block{Type: "CERTIFICATE", Bytes: k.der}
}

func keyBlock(key *ecdsa.PrivateKey) (*pem.Block, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("pgtest: encode key: %w", err)
	}
	return &pem.Block{Type: "PRIVATE KEY", Bytes: der}, nil
}
