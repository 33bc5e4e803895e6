package floor

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
)

// maxStartupMessage bounds the body of any message during startup.
const maxStartupMessage = 64 << 10

// Authentication request codes (AuthenticationXXX: 'R' int32 len, int32 code, ...).
const (
	authOK          = 0
	authCleartext   = 3
	authMD5         = 5
	authSASL        = 10
	authSASLContine = 11
	authSASLFinal   = 12
)

// startup sends the StartupMessage and answers authentication until
// ReadyForQuery.
//
//	StartupMessage: int32 len, int32 196608 (3.0), (name\0 value\0)*, \0
func (c *Conn) startup(cfg *Config) error {
	b := make([]byte, 4, 128)
	b = binary.BigEndian.AppendUint32(b, 196608)
	b = appendCString(b, "user")
	b = appendCString(b, cfg.User)
	if cfg.Database != "" {
		b = appendCString(b, "database")
		b = appendCString(b, cfg.Database)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	c.wb = b
	if err := c.flush(); err != nil {
		return err
	}
	var scram *scramClient
	for {
		typ, body, err := c.readSmall()
		if err != nil {
			return err
		}
		switch typ {
		case 'E':
			return fmt.Errorf("floor: startup: %w", parseError(body))
		case 'Z':
			return nil
		case 'R':
			if len(body) < 4 {
				return fmt.Errorf("floor: protocol error: short authentication message")
			}
			code := binary.BigEndian.Uint32(body)
			data := body[4:]
			switch code {
			case authOK:
			case authCleartext:
				err = c.sendPassword(cfg.Password)
			case authMD5:
				if len(data) != 4 {
					return fmt.Errorf("floor: protocol error: md5 salt of %d bytes", len(data))
				}
				err = c.sendPassword(md5Password(cfg.User, cfg.Password, data))
			case authSASL:
				scram, err = newSCRAM(cfg.Password, data)
				if err == nil {
					err = c.sendSASLInitial(scram)
				}
			case authSASLContine:
				if scram == nil {
					return fmt.Errorf("floor: protocol error: SASL continue before SASL start")
				}
				var msg []byte
				if msg, err = scram.clientFinal(data); err == nil {
					err = c.sendSASL(msg)
				}
			case authSASLFinal:
				if scram == nil {
					return fmt.Errorf("floor: protocol error: SASL final before SASL start")
				}
				err = scram.verifyServer(data)
			default:
				return fmt.Errorf("floor: authentication method %d not supported (trust, password, md5 and scram-sha-256 are)", code)
			}
			if err != nil {
				return err
			}
		}
		// ParameterStatus, BackendKeyData, NoticeResponse and
		// NegotiateProtocolVersion need no answer.
	}
}

// readSmall reads one whole message of at most maxStartupMessage bytes.
func (c *Conn) readSmall() (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return 0, nil, c.fail(fmt.Errorf("floor: startup: read: %w", eofToUnexpected(err)))
	}
	n := int(binary.BigEndian.Uint32(h[1:]))
	if n < 4 || n-4 > maxStartupMessage {
		return 0, nil, c.fail(fmt.Errorf("floor: protocol error: startup message %q declares length %d", h[0], n))
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return 0, nil, c.fail(fmt.Errorf("floor: startup: read: %w", eofToUnexpected(err)))
	}
	return h[0], body, nil
}

// sendPassword sends PasswordMessage: 'p' int32 len, password\0.
func (c *Conn) sendPassword(pw string) error {
	b, start := begin(c.wb[:0], 'p')
	b = appendCString(b, pw)
	c.wb = finish(b, start)
	return c.flush()
}

// md5Password is "md5" + md5hex(md5hex(password + user) + salt).
func md5Password(user, password string, salt []byte) string {
	inner := md5.Sum([]byte(password + user))
	h := md5.New()
	h.Write([]byte(hex.EncodeToString(inner[:])))
	h.Write(salt)
	return "md5" + hex.EncodeToString(h.Sum(nil))
}

// sendSASLInitial sends SASLInitialResponse: 'p' int32 len, mechanism\0,
// int32 len, data.
func (c *Conn) sendSASLInitial(s *scramClient) error {
	b, start := begin(c.wb[:0], 'p')
	b = appendCString(b, scramMechanism)
	first := s.clientFirst()
	b = binary.BigEndian.AppendUint32(b, uint32(len(first)))
	b = append(b, first...)
	c.wb = finish(b, start)
	return c.flush()
}

// sendSASL sends SASLResponse: 'p' int32 len, data.
func (c *Conn) sendSASL(msg []byte) error {
	b, start := begin(c.wb[:0], 'p')
	b = append(b, msg...)
	c.wb = finish(b, start)
	return c.flush()
}
