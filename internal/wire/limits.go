package wire

import (
	"fmt"
	"math"
)

// smallMessageCap is the body size limit for control messages (everything but
// DataRow, CopyData, ErrorResponse, NoticeResponse, RowDescription and
// FunctionCallResponse, which are limited by the Reader's maxMessageSize).
const smallMessageCap = 1 << 20

// Body size classes returned by bodyLimit.
const (
	limitUnknown    = -1 // not a backend message type
	limitLarge      = -2 // capped by the configured maximum
	limitStreamable = -3 // capped by MaxStreamableSize; allocations by the configured maximum
)

// MaxStreamableSize caps the body of a DataRow or CopyData: PostgreSQL
// never builds a message of 1 GiB or more. Such a body may be larger than
// the Reader's maxMessageSize as long as it is consumed piece by piece
// (NextHeader, ReadFull, Discard, CopyN); maxMessageSize caps what is
// allocated whole.
const MaxStreamableSize = 1 << 30

// bodyLimit returns the exact body size of a fixed-size backend message
// (exact true), or its maximum body size, or limitLarge, or limitUnknown.
func bodyLimit(typ byte) (n int, exact bool) {
	switch typ {
	case MsgReadyForQuery:
		return 1, true
	case MsgParseComplete, MsgBindComplete, MsgCloseComplete, MsgNoData,
		MsgEmptyQueryResponse, MsgPortalSuspended, MsgCopyDone:
		return 0, true
	case MsgBackendKeyData:
		return 4 + MaxCancelKeyLen, false // the key's length: ParseBackendKeyData
	case MsgDataRow, MsgCopyData:
		return limitStreamable, false
	case MsgErrorResponse, MsgNoticeResponse, MsgRowDescription, MsgFunctionCallResponse:
		return limitLarge, false
	case MsgAuthentication, MsgParameterStatus, MsgNotificationResponse,
		MsgParameterDescription, MsgCommandComplete, MsgCopyInResponse,
		MsgCopyOutResponse, MsgCopyBothResponse, MsgNegotiateProtocolVersion:
		return smallMessageCap, false
	}
	return limitUnknown, false
}

// checkLength validates the length field of a backend message of type typ
// against the per-type limits and returns the body length. Nothing has been
// allocated when it returns an error.
func checkLength(typ byte, length int32, maxMessageSize int) (int, error) {
	if length < 4 {
		return 0, protoErr(fmt.Sprintf("message %s has invalid length %d", typeName(typ), length))
	}
	n := int(length) - 4
	limit, exact := bodyLimit(typ)
	switch {
	case limit == limitUnknown:
		return 0, protoErr(fmt.Sprintf("unknown backend message type %s", typeName(typ)))
	case exact:
		if n != limit {
			return 0, protoErr(fmt.Sprintf("message %s has body length %d, want %d", typeName(typ), n, limit))
		}
		return n, nil
	case limit == limitLarge:
		limit = maxMessageSize
	case limit == limitStreamable:
		limit = MaxStreamableSize
	}
	if n > limit {
		return 0, protoErr(fmt.Sprintf("message %s body length %d exceeds limit %d", typeName(typ), n, limit))
	}
	return n, nil
}

// clampMaxMessageSize maps 0 or less to the default and caps the size at what
// an int32 length field can describe.
func clampMaxMessageSize(n int) int {
	if n <= 0 {
		return DefaultMaxMessageSize
	}
	if n > math.MaxInt32-4 {
		return math.MaxInt32 - 4
	}
	return n
}

// typeName formats a message type byte for error messages: 'D' or 0x00.
func typeName(typ byte) string {
	if typ >= 0x20 && typ < 0x7f {
		return fmt.Sprintf("%q", rune(typ))
	}
	return fmt.Sprintf("0x%02x", typ)
}
