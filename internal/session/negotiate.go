package session

// The protocol version of a session and its cancel key, settled during the
// startup. Protocol 3.2 (PostgreSQL 18) differs from 3.0 in one thing: the
// secret key of BackendKeyData and CancelRequest, 4 bytes under 3.0, is 4
// to 256 bytes (PostgreSQL 18 sends 32), so that it can no longer be
// guessed. The rules are libpq 18's (fe-protocol3.c:
// pqGetNegotiateProtocolVersion3, getBackendKeyData; the protocol's
// "Protocol versions" section):
//
//	client: StartupMessage asking StartupConfig.MaxProtocol
//	server: NegotiateProtocolVersion (the version it speaks, no option)
//	          only when it speaks an older minor version than the one asked
//	        authentication ... AuthenticationOk, ParameterStatus*
//	server: BackendKeyData (a key of the session's version's length)
//	server: ReadyForQuery
//
// A server or pooler that predates the negotiation of minor versions
// answers a StartupMessage asking 3.2 with an ErrorResponse instead
// (PgBouncer before 1.22: FATAL 08P01 "bad packet header"; PostgreSQL
// before 9.3.21: 0A000 "unsupported frontend protocol"). libpq fails
// there; pgline's connect asks 3.0 again on a new connection, unless
// min_protocol_version forbids it (ProtocolVersionError.Refused).

import (
	"fmt"
	"strconv"

	"github.com/pgline/pgline/internal/wire"
)

// negotiation is the protocol version of one startup: asked, then what
// NegotiateProtocolVersion named, and checked against the minimum. It is
// the one place the startup's version rules are applied.
type negotiation struct {
	min, asked uint32 // StartupConfig.MinProtocol, and what the StartupMessage asked
	version    uint32 // the session's: asked, or what NegotiateProtocolVersion named
	seen       *wire.NegotiateProtocolVersion
	keyed      bool // BackendKeyData came: the version is settled
}

// newNegotiation starts the negotiation of a startup with cfg's bounds
// (zero: 3.0).
func newNegotiation(cfg StartupConfig) *negotiation {
	n := &negotiation{min: cfg.MinProtocol, asked: cfg.MaxProtocol}
	if n.min == 0 {
		n.min = wire.ProtocolVersion30
	}
	if n.asked == 0 {
		n.asked = wire.ProtocolVersion30
	}
	n.version = n.asked
	return n
}

// negotiate applies a NegotiateProtocolVersion. As in libpq, the version
// it names must be 3.0 or 3.2 and not above the one asked, the message
// must ask for a change, and it lists no protocol option (pgline asks for
// none: a server naming one is not answering pgline). The version must
// not be below min_protocol_version (a ProtocolVersionError names it). It
// may come anywhere before BackendKeyData, whose key's length depends on
// it; once only, except that an identical repeat is ignored (PgBouncer
// 1.22 to 1.25 may send it twice: pgbouncer/pgbouncer#1459).
func (n *negotiation) negotiate(body []byte) error {
	v, err := wire.ParseNegotiateProtocolVersion(body)
	if err != nil {
		return ProtocolErr(err)
	}
	switch {
	case n.keyed:
		return APIErrors.Protocol("NegotiateProtocolVersion after BackendKeyData")
	case n.seen != nil && n.seen.Version == v.Version && len(v.Unrecognized) == 0 && len(n.seen.Unrecognized) == 0:
		return nil // PgBouncer's repeat
	case n.seen != nil:
		return APIErrors.Protocol("a second, different NegotiateProtocolVersion")
	case v.Version > n.asked:
		return APIErrors.Protocol(fmt.Sprintf("NegotiateProtocolVersion names version %s, above the %s asked", versionName(v.Version), versionName(n.asked)))
	case v.Version < wire.ProtocolVersion30:
		return APIErrors.Protocol(fmt.Sprintf("NegotiateProtocolVersion names version %s, below 3.0", versionName(v.Version)))
	case v.Version == 3<<16|1:
		return APIErrors.Protocol("NegotiateProtocolVersion names version 3.1, which does not exist")
	case v.Version == n.asked && len(v.Unrecognized) == 0:
		return APIErrors.Protocol("NegotiateProtocolVersion asks for no change")
	case v.Version < n.min:
		return &ProtocolVersionError{asked: n.asked, min: n.min, server: v.Version}
	case len(v.Unrecognized) > 0:
		return APIErrors.Protocol(fmt.Sprintf("NegotiateProtocolVersion lists %d protocol options pgline did not ask for", len(v.Unrecognized)))
	}
	n.seen = &v
	n.version = v.Version
	return nil
}

// backendKey decodes a BackendKeyData with the session's version: a key of
// 4 bytes under 3.0, 4 to 256 under 3.2.
func (n *negotiation) backendKey(body []byte) (wire.BackendKeyData, error) {
	n.keyed = true
	k, err := wire.ParseBackendKeyData(body, n.version)
	if err != nil {
		return k, ProtocolErr(err)
	}
	return k, nil
}

// firstError returns the error of an ErrorResponse e that is the
// server's first answer to the StartupMessage: a ProtocolVersionError when
// that asked above 3.0 and e says the server does not take the message
// (08P01 protocol_violation, 0A000 feature_not_supported), else e's own.
func (n *negotiation) firstError(e srvErr) error {
	if n.asked > wire.ProtocolVersion30 && (e.f.Code == "08P01" || e.f.Code == "0A000") {
		return &ProtocolVersionError{asked: n.asked, min: n.min, err: e.Err}
	}
	return e.Err
}

// ProtocolVersionError is a startup that failed for its protocol version:
// the server speaks only server, below min_protocol_version (min); or,
// when server is zero, it answered the StartupMessage asking asked with
// an error (err), as a server or pooler that does not negotiate minor
// versions does (see Refused).
type ProtocolVersionError struct {
	asked, min, server uint32
	err                error // the server's, when it refused the StartupMessage
}

// Refused reports whether a connection asking 3.0 may succeed where this
// one failed: the server refused the StartupMessage of a newer version,
// and min_protocol_version allows 3.0.
func (e *ProtocolVersionError) Refused() bool {
	return e.server == 0 && e.min <= wire.ProtocolVersion30
}

func (e *ProtocolVersionError) Error() string {
	if e.server != 0 {
		return fmt.Sprintf("server only supports protocol version %s, but min_protocol_version is %s", versionName(e.server), versionName(e.min))
	}
	s := fmt.Sprintf("server refused a startup asking protocol version %s", versionName(e.asked))
	if e.min > wire.ProtocolVersion30 {
		s += fmt.Sprintf(", and min_protocol_version is %s", versionName(e.min))
	}
	return s + ": " + e.err.Error()
}

func (e *ProtocolVersionError) Unwrap() error { return e.err }

// versionName shows a protocol version as "3.2".
func versionName(v uint32) string {
	return strconv.Itoa(int(v>>16)) + "." + strconv.Itoa(int(v&0xffff))
}
