package config

import "github.com/pgline/pgline/internal/wire"

// min_protocol_version and max_protocol_version, as libpq 18 documents
// them (https://www.postgresql.org/docs/18/libpq-connect.html, "Parameter
// Key Words"; the rules are fe-connect.c's, pqConnectOptions2):
//
//   - the values are "3.0", "3.2" and "latest", the latest version the
//     client speaks: 3.2 (PostgreSQL 18's, whose cancel keys are up to 256
//     bytes long);
//   - min_protocol_version defaults to 3.0: any version;
//   - max_protocol_version, the version the StartupMessage asks, defaults
//     to 3.0, so that poolers and servers that do not answer a newer minor
//     version with NegotiateProtocolVersion still connect; but to latest
//     when min_protocol_version is above 3.0;
//   - a maximum below the minimum is an error.
//
// The environment variables are PGMINPROTOCOLVERSION and
// PGMAXPROTOCOLVERSION (package dsn). ProtocolRange is the one place
// these rules are applied: by Parse for a DSN, and by the connect for a
// Config filled in by hand.

// ProtocolVersionNames are the values min_protocol_version and
// max_protocol_version take, in the order errors list them.
var ProtocolVersionNames = []string{"3.0", "3.2", "latest"}

// protocolVersion is the version a value of min_protocol_version or
// max_protocol_version names (major<<16 | minor, as a StartupMessage
// carries it), or false.
func protocolVersion(name string) (uint32, bool) {
	switch name {
	case "3.0":
		return wire.ProtocolVersion30, true
	case "3.2", "latest":
		return wire.ProtocolVersion32, true
	}
	return 0, false
}

// ProtocolRange returns the protocol versions that min_protocol_version
// minName and max_protocol_version maxName allow, by the rules above; ""
// is a key's default. bad is "" when they are valid, else the key at
// fault: one whose value is not among ProtocolVersionNames, or
// max_protocol_version when it is below the minimum.
func ProtocolRange(minName, maxName string) (lo, hi uint32, bad string) {
	lo = wire.ProtocolVersion30
	if minName != "" {
		var ok bool
		if lo, ok = protocolVersion(minName); !ok {
			return 0, 0, "min_protocol_version"
		}
	}
	hi = wire.ProtocolVersion30
	if lo > wire.ProtocolVersion30 {
		hi = wire.ProtocolVersion32 // latest
	}
	if maxName != "" {
		var ok bool
		if hi, ok = protocolVersion(maxName); !ok {
			return 0, 0, "max_protocol_version"
		}
	}
	if hi < lo {
		return 0, 0, "max_protocol_version"
	}
	return lo, hi, ""
}

// parseProtocolSettings reads min_protocol_version and
// max_protocol_version (see ProtocolRange) into st, with their defaults
// made explicit: max_protocol_version is "latest" by default when the
// minimum is above 3.0.
func parseProtocolSettings(s settings, st *Settings) error {
	var err error
	if st.MinProtocolVersion, err = oneOf(s, "min_protocol_version", "3.0", ProtocolVersionNames...); err != nil {
		return err
	}
	def := "3.0"
	if lo, _, _ := ProtocolRange(st.MinProtocolVersion, ""); lo > wire.ProtocolVersion30 {
		def = "latest"
	}
	if st.MaxProtocolVersion, err = oneOf(s, "max_protocol_version", def, ProtocolVersionNames...); err != nil {
		return err
	}
	if _, _, bad := ProtocolRange(st.MinProtocolVersion, st.MaxProtocolVersion); bad != "" {
		return s.invalid("max_protocol_version", "must not be below min_protocol_version")
	}
	return nil
}
