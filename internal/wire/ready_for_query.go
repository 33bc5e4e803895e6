package wire

import "fmt"

// ReadyForQuery ('Z') ends every reply cycle.
//
//	byte transaction status: 'I' idle, 'T' in a transaction block, 'E' in a failed one
type ReadyForQuery struct {
	TxStatus byte // TxIdle, TxInBlock or TxFailed
}

// ParseReadyForQuery decodes the body of a ReadyForQuery message; any status
// other than TxIdle, TxInBlock or TxFailed is an error.
func ParseReadyForQuery(body []byte) (ReadyForQuery, error) {
	if len(body) != 1 {
		return ReadyForQuery{}, protoErr(fmt.Sprintf("ReadyForQuery: body length %d, want 1", len(body)))
	}
	switch s := body[0]; s {
	case TxIdle, TxInBlock, TxFailed:
		return ReadyForQuery{TxStatus: s}, nil
	}
	return ReadyForQuery{}, protoErr(fmt.Sprintf("ReadyForQuery: invalid transaction status %s", typeName(body[0])))
}

// AppendReadyForQuery appends a ReadyForQuery message (sent by servers).
func AppendReadyForQuery(dst []byte, txStatus byte) []byte {
	return append(dst, MsgReadyForQuery, 0, 0, 0, 5, txStatus)
}
