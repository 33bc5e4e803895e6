package session

// Protocol flow of a connection's startup (after the optional TLS
// handshake), as the client sees it:
//
//	client: StartupMessage (protocol 3.0 or 3.2, user, database, parameters)
//	server: NegotiateProtocolVersion, when it speaks an older minor version (negotiate.go)
//	server: AuthenticationXXX request — repeated for SASL:
//	          SASL (mechanisms) → client SASLInitialResponse
//	          SASLContinue       → client SASLResponse
//	          SASLFinal          (checked, no answer)
//	        or CleartextPassword / MD5Password → client PasswordMessage
//	server: AuthenticationOk
//	server: ParameterStatus*, BackendKeyData, NoticeResponse* (any order)
//	server: ReadyForQuery
//
// An ErrorResponse at any point ends the startup. With
// StartupConfig.CheckPID, a Query goes with the client's last message; its
// reply follows the ReadyForQuery and is read as the session's first
// request (startup_pid.go, StartPIDCheck).

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/pgline/pgline/internal/auth"
	"github.com/pgline/pgline/internal/wire"
)

// startupMaxMessage bounds the messages of the startup phase (see
// Session.Startup): far above any a server sends then.
const startupMaxMessage = 1 << 20

// authMethod names an authentication method for require_auth checks.
type authMethod string

const (
	authNone     authMethod = "none" // AuthenticationOk with no request (trust)
	authPassword authMethod = "password"
	authMD5      authMethod = "md5"
	authSCRAM    authMethod = "scram-sha-256"
	authGSS      authMethod = "gss"
	authSSPI     authMethod = "sspi"
)

// StartupConfig is what the startup sends and how it authenticates, from
// the Config and the host.
type StartupConfig struct {
	// Params are the StartupMessage's parameters, as name, value pairs.
	Params []string
	// User and Password authenticate (Password: the Config's, else the
	// password file's for the host).
	User, Password string
	// ChannelBinding and RequireAuth are libpq's channel_binding and
	// require_auth.
	ChannelBinding, RequireAuth string
	// CheckPID asks the server session's process ID with the client's
	// last startup message (see startup_pid.go and StartPIDCheck).
	CheckPID bool
	// MinProtocol and MaxProtocol are min_protocol_version and
	// max_protocol_version (wire.ProtocolVersion30 or ProtocolVersion32):
	// the StartupMessage asks MaxProtocol, and a server that speaks a
	// version below MinProtocol is refused (see negotiation). Zero is 3.0.
	MinProtocol, MaxProtocol uint32
}

// Startup sends the StartupMessage and runs the exchange up to the first
// ReadyForQuery, over the socket or the TLS connection (before
// StartReading's reader is used by anyone else).
func (c *Session) Startup(cfg StartupConfig) error {
	// Until the session is ready, nothing the server sends is large: an
	// ErrorResponse or NoticeResponse whose header claims up to
	// max_message_size (1 GiB) is refused rather than allocated whole, as
	// it would be from anyone on the path before authentication (libpq
	// caps a startup error at 30,000 bytes).
	defer c.rd.SetMaxMessageSize(c.rd.SetMaxMessageSize(min(c.rd.MaxMessageSize(), startupMaxMessage)))
	c.pidCheck = pidCheck{want: cfg.CheckPID}
	n := newNegotiation(cfg)
	msg, err := wire.AppendStartup(nil, n.asked, cfg.Params)
	if err != nil {
		return fmt.Errorf("startup message: %w", err)
	}
	if cfg.Password == "" {
		// Without a password, the StartupMessage is the client's last
		// startup message, unless the server fails the connection.
		msg, _ = c.withPIDQuery(msg, nil)
	}
	if _, err := c.NetConn.Write(msg); err != nil {
		return err
	}
	method, scramPlus, err := c.authenticate(cfg, n)
	if err != nil {
		return err
	}
	if err := checkRequireAuth(cfg.RequireAuth, method); err != nil {
		return err
	}
	if cfg.ChannelBinding == "require" && !scramPlus {
		return errors.New("channel binding required, but the server authenticated the client without channel binding")
	}
	for {
		typ, body, err := c.rd.Next()
		if err != nil {
			return readErr(err)
		}
		switch typ {
		case wire.MsgBackendKeyData:
			k, err := n.backendKey(body)
			if err != nil {
				return err
			}
			c.PID, c.SecretKey = k.ProcessID, k.SecretKey
		case wire.MsgReadyForQuery:
			return c.readyForQuery(body)
		case wire.MsgErrorResponse:
			return startupPgError(body)
		case wire.MsgNegotiateProtocolVersion:
			if err := n.negotiate(body); err != nil {
				return err
			}
		case wire.MsgParameterStatus, wire.MsgNoticeResponse:
			if err := c.HandleAsync(typ, body); err != nil {
				return err
			}
		default:
			return APIErrors.Protocol(fmt.Sprintf("unexpected message %q during startup", typ))
		}
	}
}

// authenticate answers the server's authentication requests until
// AuthenticationOk and returns the method used, and whether SCRAM with
// channel binding was used. n takes the NegotiateProtocolVersion that may
// come first, and tells a refusal of the StartupMessage's version.
func (c *Session) authenticate(cfg StartupConfig, n *negotiation) (authMethod, bool, error) {
	password := cfg.Password
	method := authNone
	var scram *auth.SCRAM
	scramPlus, scramDone := false, false
	for first := true; ; first = false {
		typ, body, err := c.rd.Next()
		if err != nil {
			return "", false, readErr(err)
		}
		switch typ {
		case wire.MsgErrorResponse:
			if !first {
				return "", false, startupPgError(body)
			}
			e, err := ParseSrvErr(body)
			if err != nil {
				return "", false, err
			}
			return "", false, n.firstError(e)
		case wire.MsgNegotiateProtocolVersion:
			if err := n.negotiate(body); err != nil {
				return "", false, err
			}
			continue
		case wire.MsgNoticeResponse:
			if err := c.HandleAsync(typ, body); err != nil {
				return "", false, err
			}
			continue
		case wire.MsgAuthentication:
		default:
			return "", false, APIErrors.Protocol(fmt.Sprintf("unexpected message %q during authentication", typ))
		}
		a, err := wire.ParseAuthentication(body)
		if err != nil {
			return "", false, ProtocolErr(err)
		}
		switch a.Type {
		case wire.AuthOK:
			if scram != nil && !scramDone {
				return "", false, errors.New("SCRAM: server accepted the client before proving it knows the password")
			}
			return method, scramPlus, nil

		case wire.AuthCleartextPassword, wire.AuthMD5Password:
			method = authPassword
			if a.Type == wire.AuthMD5Password {
				method = authMD5
			}
			if err := checkMethodAllowed(cfg, method); err != nil {
				return "", false, err
			}
			if password == "" {
				return "", false, fmt.Errorf("server requested %s authentication, but no password was supplied", method)
			}
			pw := password
			if method == authMD5 {
				pw = auth.MD5Password(cfg.User, password, a.Salt)
			}
			if err := c.sendNow(c.withPIDQuery(wire.AppendPassword(nil, pw))); err != nil {
				return "", false, err
			}

		case wire.AuthSASL:
			method = authSCRAM
			if err := checkMethodAllowed(cfg, method); err != nil {
				return "", false, err
			}
			if password == "" {
				return "", false, errors.New("server requested SCRAM-SHA-256 authentication, but no password was supplied")
			}
			var cbData []byte
			if c.TLS && cfg.ChannelBinding != "disable" {
				cbData = c.channelBindingData()
			}
			mech, err := auth.ChooseMechanism(a.Mechanisms, cfg.ChannelBinding, cbData != nil)
			if err != nil {
				return "", false, err
			}
			scramPlus = mech == auth.MechSCRAMSHA256Plus
			supportsCB := auth.ClientSupportsCB(a.Mechanisms, cfg.ChannelBinding, c.TLS)
			if !scramPlus {
				cbData = nil
			}
			scram, err = auth.NewSCRAM(mech, password, cbData, supportsCB)
			if err != nil {
				return "", false, err
			}
			if err := c.sendNow(wire.AppendSASLInitialResponse(nil, mech, scram.ClientFirst())); err != nil {
				return "", false, err
			}

		case wire.AuthSASLContinue:
			if scram == nil {
				return "", false, APIErrors.Protocol("SASLContinue without SASL")
			}
			final, err := scram.ServerFirst(a.Data)
			if err != nil {
				return "", false, err
			}
			// The client-final message: the client's last.
			if err := c.sendNow(c.withPIDQuery(wire.AppendSASLResponse(nil, final))); err != nil {
				return "", false, err
			}

		case wire.AuthSASLFinal:
			if scram == nil {
				return "", false, APIErrors.Protocol("SASLFinal without SASL")
			}
			if err := scram.ServerFinal(a.Data); err != nil {
				return "", false, err
			}
			scramDone = true

		case wire.AuthGSS, wire.AuthSSPI:
			return "", false, errors.New("GSSAPI/SSPI authentication is not supported")
		default:
			return "", false, fmt.Errorf("unsupported authentication request %d", a.Type)
		}
	}
}

// checkMethodAllowed refuses a method that channel_binding=require or
// require_auth rules out, before anything is sent for it.
func checkMethodAllowed(cfg StartupConfig, m authMethod) error {
	if cfg.ChannelBinding == "require" && m != authSCRAM {
		return fmt.Errorf("channel binding required, but the server requested %s authentication", m)
	}
	return checkRequireAuth(cfg.RequireAuth, m)
}

// checkRequireAuth applies libpq's require_auth: a comma-separated list of
// accepted methods, or of refused ones when every entry starts with "!".
func checkRequireAuth(list string, m authMethod) error {
	if list == "" {
		return nil
	}
	entries := strings.Split(list, ",")
	negated := strings.HasPrefix(entries[0], "!")
	listed := false
	for _, e := range entries {
		if strings.TrimPrefix(strings.TrimSpace(e), "!") == string(m) {
			listed = true
		}
	}
	if listed == negated {
		return fmt.Errorf("authentication method %q is not allowed by require_auth=%s", m, list)
	}
	return nil
}

// channelBindingData returns the tls-server-end-point data of the server's
// certificate, or nil when it cannot be computed.
func (c *Session) channelBindingData() []byte {
	tc, ok := c.NetConn.(*tls.Conn)
	if !ok {
		return nil
	}
	st := tc.ConnectionState()
	if len(st.PeerCertificates) == 0 {
		return nil
	}
	d, err := auth.TLSServerEndPoint(st.PeerCertificates[0])
	if err != nil {
		return nil
	}
	return d
}

// sendNow writes one startup-phase message built by an encoder.
func (c *Session) sendNow(msg []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = c.NetConn.Write(msg)
	return err
}

// startupPgError decodes an ErrorResponse received during startup.
func startupPgError(body []byte) error {
	e, err := ParseSrvErr(body)
	if err != nil {
		return err
	}
	return e.Err
}
