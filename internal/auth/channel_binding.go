package auth

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"errors"
	"fmt"
)

// tls-server-end-point channel-binding type name (RFC 5929 section 4), as it
// appears in the gs2 header "p=tls-server-end-point,,".
const cbTypeServerEndPoint = "tls-server-end-point"

// TLSServerEndPoint returns the RFC 5929 tls-server-end-point channel-binding
// data for the server's leaf certificate: the hash of the DER certificate,
// computed with the hash function of the certificate's signature algorithm,
// or with SHA-256 when that function is MD5 or SHA-1.
//
// It returns an error when the hash is undefined for the signature algorithm
// (Ed25519, MD2, unknown algorithms). The caller then cannot use
// SCRAM-SHA-256-PLUS.
func TLSServerEndPoint(cert *x509.Certificate) ([]byte, error) {
	if cert == nil {
		return nil, errors.New("auth: tls-server-end-point: no server certificate")
	}
	if len(cert.Raw) == 0 {
		return nil, errors.New("auth: tls-server-end-point: certificate has no DER encoding")
	}
	switch cert.SignatureAlgorithm {
	case x509.MD5WithRSA, x509.SHA1WithRSA, x509.DSAWithSHA1, x509.ECDSAWithSHA1,
		x509.SHA256WithRSA, x509.SHA256WithRSAPSS, x509.DSAWithSHA256, x509.ECDSAWithSHA256:
		sum := sha256.Sum256(cert.Raw)
		return sum[:], nil
	case x509.SHA384WithRSA, x509.SHA384WithRSAPSS, x509.ECDSAWithSHA384:
		sum := sha512.Sum384(cert.Raw)
		return sum[:], nil
	case x509.SHA512WithRSA, x509.SHA512WithRSAPSS, x509.ECDSAWithSHA512:
		sum := sha512.Sum512(cert.Raw)
		return sum[:], nil
	default:
		return nil, fmt.Errorf("auth: tls-server-end-point is undefined for certificate signature algorithm %v", cert.SignatureAlgorithm)
	}
}
