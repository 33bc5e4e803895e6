package wire

// Backend (server → client) message type bytes. Each comment shows the body
// that follows the 5-byte header (type byte, int32 length including itself).
const (
	MsgAuthentication           = 'R' // int32 auth type, then type-specific data
	MsgBackendKeyData           = 'K' // int32 process ID, byte[n] secret key (n = 4 under 3.0, 4 to 256 from 3.2)
	MsgBindComplete             = '2' // empty
	MsgCloseComplete            = '3' // empty
	MsgCommandComplete          = 'C' // cstring tag
	MsgCopyData                 = 'd' // bytes (the rest of the message)
	MsgCopyDone                 = 'c' // empty
	MsgCopyInResponse           = 'G' // int8 format, int16 n, n × int16 column format
	MsgCopyOutResponse          = 'H' // int8 format, int16 n, n × int16 column format
	MsgCopyBothResponse         = 'W' // int8 format, int16 n, n × int16 column format
	MsgDataRow                  = 'D' // int16 n, n × (int32 len or -1 for NULL, len bytes)
	MsgEmptyQueryResponse       = 'I' // empty
	MsgErrorResponse            = 'E' // (byte code, cstring value)*, byte 0
	MsgFunctionCallResponse     = 'V' // int32 len or -1 for NULL, len bytes
	MsgNegotiateProtocolVersion = 'v' // int32 version (major<<16 | minor), int32 n, n × cstring option
	MsgNoData                   = 'n' // empty
	MsgNoticeResponse           = 'N' // (byte code, cstring value)*, byte 0
	MsgNotificationResponse     = 'A' // int32 process ID, cstring channel, cstring payload
	MsgParameterDescription     = 't' // int16 n, n × int32 type OID
	MsgParameterStatus          = 'S' // cstring name, cstring value
	MsgParseComplete            = '1' // empty
	MsgPortalSuspended          = 's' // empty
	MsgReadyForQuery            = 'Z' // byte status 'I', 'T' or 'E'
	MsgRowDescription           = 'T' // int16 n, n × (cstring name, int32 table OID, int16 attnum, int32 type OID, int16 size, int32 typmod, int16 format)
)

// Frontend (client → server) message type bytes. Startup-phase messages
// (StartupMessage, SSLRequest, GSSENCRequest, CancelRequest) have no type
// byte: only an int32 length and an int32 code.
const (
	MsgBind         = 'B' // cstring portal, cstring statement, int16 n, n × int16 format, int16 n, n × (int32 len or -1, bytes), int16 n, n × int16 result format
	MsgClose        = 'C' // byte 'S' or 'P', cstring name
	MsgCopyFail     = 'f' // cstring message
	MsgDescribe     = 'D' // byte 'S' or 'P', cstring name
	MsgExecute      = 'E' // cstring portal, int32 max rows (0 = all)
	MsgFlush        = 'H' // empty
	MsgFunctionCall = 'F' // int32 function OID, formats, arguments, int16 result format
	MsgParse        = 'P' // cstring name, cstring query, int16 n, n × int32 parameter type OID
	MsgPassword     = 'p' // PasswordMessage, SASLInitialResponse, SASLResponse or GSSResponse
	MsgQuery        = 'Q' // cstring query
	MsgSync         = 'S' // empty
	MsgTerminate    = 'X' // empty
)

// Codes carried in startup-phase messages in place of a type byte.
const (
	ProtocolVersion30 = 3<<16 | 0 // StartupMessage: int32 196608, (cstring key, cstring value)*, byte 0
	ProtocolVersion32 = 3<<16 | 2 // StartupMessage: int32 196610, ...: 3.0 with a cancel key of 4 to 256 bytes (PostgreSQL 18)
	CancelRequestCode = 80877102  // CancelRequest: int32 code, int32 process ID, byte[n] secret key
	SSLRequestCode    = 80877103  // SSLRequest: int32 code
	GSSENCRequestCode = 80877104  // GSSENCRequest: int32 code
)

// Authentication request types carried in an Authentication ('R') message.
const (
	AuthOK                = 0  // authentication succeeded
	AuthCleartextPassword = 3  // send the password in clear text
	AuthMD5Password       = 5  // int32 5, byte[4] salt
	AuthGSS               = 7  // start GSSAPI negotiation
	AuthGSSContinue       = 8  // int32 8, GSSAPI or SSPI data
	AuthSSPI              = 9  // start SSPI negotiation
	AuthSASL              = 10 // int32 10, (cstring mechanism)*, byte 0
	AuthSASLContinue      = 11 // int32 11, SASL data
	AuthSASLFinal         = 12 // int32 12, SASL outcome data
)

// Transaction status bytes carried in ReadyForQuery.
const (
	TxIdle    = 'I' // not in a transaction block
	TxInBlock = 'T' // in a transaction block
	TxFailed  = 'E' // in a failed transaction block; statements are rejected until it ends
)
