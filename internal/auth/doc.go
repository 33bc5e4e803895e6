// Package auth implements the client side of PostgreSQL password
// authentication: the md5 challenge and SASL SCRAM-SHA-256 and
// SCRAM-SHA-256-PLUS (RFC 5802, RFC 7677) with tls-server-end-point channel
// binding (RFC 5929).
//
// The package does no I/O. The connection code moves the bytes between the
// server's Authentication* messages and the client's PasswordMessage,
// SASLInitialResponse and SASLResponse messages.
//
// # md5
//
// For AuthenticationMD5Password send MD5Password(user, password, salt) as the
// PasswordMessage payload.
//
// # SCRAM protocol flow
//
//	server: AuthenticationSASL          mechanism list
//	client: ChooseMechanism, NewSCRAM
//	client: SASLInitialResponse          mechanism, ClientFirst()
//	server: AuthenticationSASLContinue   server-first-message
//	client: SASLResponse                 ServerFirst(server-first-message)
//	server: AuthenticationSASLFinal      server-final-message
//	client:                              ServerFinal(server-final-message)
//	server: AuthenticationOk
//
// The client must call ServerFinal and get a nil error before it trusts the
// server: only then has the server proved that it knows the password.
//
// # Channel binding
//
// Over TLS, TLSServerEndPoint computes the channel-binding data from the
// server's leaf certificate, and SCRAM-SHA-256-PLUS binds the exchange to the
// TLS connection, defeating a man in the middle who holds a different
// certificate.
//
// # Hostile servers
//
// Every server message is checked strictly; a malformed one is an error
// wrapping ErrMalformedMessage, never a panic. Iteration counts above
// MaxIterations are refused so that a server cannot make the client burn CPU.
// No error text ever contains the password.
package auth
