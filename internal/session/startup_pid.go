package session

import (
	"strconv"

	"github.com/pgline/pgline/internal/wire"
)

// The backend's process ID, learned during the startup.
//
// A transaction pooler answers the startup itself: the process ID its
// BackendKeyData gives is not the one of the server session a statement
// reaches (pg_backend_pid()), which is how a connection in
// statement_cache_mode=auto tells a pooler (see txpooler.go). Asked after
// the startup, that costs a round trip of its own, a fifth of a connect at
// 1 ms. So the startup asks it with the client's last startup message, and
// its reply arrives right behind the startup's ReadyForQuery:
//
//   - with the password message, or the SCRAM client-final message: the
//     server reads the query once it has authenticated the client, and an
//     impostor who did not learns nothing from it;
//   - with the StartupMessage when no password was given: a server that
//     asks for one then fails the connection anyway ("no password was
//     supplied", before its own complaint about the query is read).
//
// When the client sends no message after the StartupMessage although it
// has a password (the server trusted it), the query goes after the
// startup's ReadyForQuery, a round trip of its own (readPIDReply).

// pidQuery asks the process ID of the server session.
const pidQuery = "SELECT pg_catalog.pg_backend_pid()"

// pidCheck is what became of the startup's pidQuery.
type pidCheck struct {
	want     bool   // StartupConfig.CheckPID
	sent     bool   // the query went with a startup message
	answered bool   // a row with a number came back
	pid      uint32 // that number
}

// withPIDQuery appends pidQuery to msg, the client's last startup message,
// when the check is wanted and not sent yet.
func (c *Session) withPIDQuery(msg []byte, err error) ([]byte, error) {
	if err != nil || !c.pidCheck.want || c.pidCheck.sent {
		return msg, err
	}
	out, err := wire.AppendQuery(msg, pidQuery)
	if err != nil {
		return msg, err
	}
	c.pidCheck.sent = true
	return out, nil
}

// readPIDReply reads the reply to pidQuery, after the startup's
// ReadyForQuery, sending the query first when no startup message carried
// it: a row with the process ID (an ErrorResponse that does not end the
// session leaves it unknown: not PostgreSQL, taken as direct), then
// ReadyForQuery.
func (c *Session) readPIDReply() error {
	if !c.pidCheck.sent {
		msg, err := c.withPIDQuery(nil, nil)
		if err := c.sendNow(msg, err); err != nil {
			return err
		}
	}
	cols := -1 // of the RowDescription, as readSimple checks rows
	for {
		typ, body, err := c.rd.Next()
		if err != nil {
			return readErr(err)
		}
		switch typ {
		case wire.MsgCommandComplete:
		case wire.MsgRowDescription:
			if cols, err = wire.CheckRowDescription(body); err != nil {
				return ProtocolErr(err)
			}
		case wire.MsgDataRow:
			row, err := describedRow(body, cols)
			if err == nil {
				err = row.Check()
			}
			if err != nil {
				return ProtocolErr(err)
			}
			if row.NumColumns() > 0 && !c.pidCheck.answered {
				v, null := row.Column(0)
				if pid, err := strconv.ParseUint(string(v), 10, 32); err == nil && !null {
					c.pidCheck.answered, c.pidCheck.pid = true, uint32(pid)
				}
			}
		case wire.MsgErrorResponse:
			e, err := ParseSrvErr(body)
			if err != nil {
				return err
			}
			if e.fatal() {
				return e.Err
			}
		case wire.MsgReadyForQuery:
			return c.readyForQuery(body)
		case wire.MsgParameterStatus, wire.MsgNoticeResponse:
			if err := c.HandleAsync(typ, body); err != nil {
				return err
			}
		default:
			return APIErrors.Protocol("unexpected message " + strconv.QuoteRune(rune(typ)) + " in the reply to the startup's process ID query")
		}
	}
}

// StartupPID reports what the startup learned of the server session's
// process ID (StartupConfig.CheckPID): the process ID when known is true;
// unknown when the server answered with an error (not PostgreSQL) or
// was not asked.
func (c *Session) StartupPID() (pid uint32, known bool) {
	return c.pidCheck.pid, c.pidCheck.answered
}
