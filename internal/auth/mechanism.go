package auth

import (
	"fmt"
	"slices"
)

// SASL mechanism names as the server lists them in AuthenticationSASL.
const (
	// MechSCRAMSHA256 is SCRAM-SHA-256 without channel binding.
	MechSCRAMSHA256 = "SCRAM-SHA-256"
	// MechSCRAMSHA256Plus is SCRAM-SHA-256 bound to the TLS channel with
	// tls-server-end-point. The server offers it only over TLS.
	MechSCRAMSHA256Plus = "SCRAM-SHA-256-PLUS"
)

// channel_binding connection parameter values, as libpq spells them.
const (
	ChannelBindingDisable = "disable" // never bind, send gs2 flag "n"
	ChannelBindingPrefer  = "prefer"  // bind when TLS and the server allow it (the default)
	ChannelBindingRequire = "require" // fail unless the exchange is bound
)

// ChooseMechanism picks the SASL mechanism to use from the server's offered
// list. channelBinding is the channel_binding setting ("disable", "prefer",
// "require"; empty means "prefer"). haveTLS reports whether channel-binding
// data is available: TLS is in use and TLSServerEndPoint succeeded for the
// server's certificate.
//
// With "require" it returns SCRAM-SHA-256-PLUS or an error wrapping
// ErrChannelBinding. With "prefer" it returns SCRAM-SHA-256-PLUS when both
// sides can bind and SCRAM-SHA-256 otherwise. With "disable" it returns
// SCRAM-SHA-256. When nothing usable is offered the error wraps
// ErrNoMechanism.
//
// Note that channel_binding=require must also make the caller refuse every
// non-SASL authentication request (md5, cleartext, trust), which this
// function does not see.
func ChooseMechanism(offered []string, channelBinding string, haveTLS bool) (mech string, err error) {
	hasPlain := slices.Contains(offered, MechSCRAMSHA256)
	hasPlus := slices.Contains(offered, MechSCRAMSHA256Plus)
	switch channelBinding {
	case ChannelBindingRequire:
		if !haveTLS {
			return "", fmt.Errorf("%w: channel_binding=require but no channel-binding data is available (no TLS, or the server certificate's signature algorithm has no tls-server-end-point hash)", ErrChannelBinding)
		}
		if !hasPlus {
			return "", fmt.Errorf("%w: channel_binding=require but the server did not offer %s (offered: %q)", ErrChannelBinding, MechSCRAMSHA256Plus, offered)
		}
		return MechSCRAMSHA256Plus, nil
	case ChannelBindingPrefer, "":
		if haveTLS && hasPlus {
			return MechSCRAMSHA256Plus, nil
		}
	case ChannelBindingDisable:
	default:
		return "", fmt.Errorf("auth: invalid channel_binding value %q (want disable, prefer or require)", channelBinding)
	}
	if hasPlain {
		return MechSCRAMSHA256, nil
	}
	return "", fmt.Errorf("%w (offered: %q)", ErrNoMechanism, offered)
}

// ClientSupportsCB returns the value NewSCRAM's clientSupportsCB parameter
// should take when the chosen mechanism is SCRAM-SHA-256: true when TLS is
// in use, channelBinding is not "disable" and the server did not offer
// SCRAM-SHA-256-PLUS. The gs2 flag "y" then tells the server that the client
// could have bound the channel, so that a server that does support binding
// detects a downgrade. When the server did offer -PLUS but the client could
// not use it (for example the certificate hash is undefined) the flag must be
// "n", or the server would report a downgrade attack.
func ClientSupportsCB(offered []string, channelBinding string, tlsInUse bool) bool {
	return tlsInUse && channelBinding != ChannelBindingDisable &&
		!slices.Contains(offered, MechSCRAMSHA256Plus)
}
