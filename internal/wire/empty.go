package wire

import "fmt"

// Messages with an empty body: the type byte and the length 4.
//
//	frontend: Sync ('S'), Flush ('H'), Terminate ('X'), CopyDone ('c')
//	backend:  ParseComplete ('1'), BindComplete ('2'), CloseComplete ('3'),
//	          NoData ('n'), EmptyQueryResponse ('I'), PortalSuspended ('s'),
//	          CopyDone ('c')

// AppendSync appends a Sync message, which ends an extended-protocol
// sequence: the server answers ReadyForQuery, and after an error skips
// messages up to the Sync.
func AppendSync(dst []byte) []byte { return append(dst, MsgSync, 0, 0, 0, 4) }

// AppendFlush appends a Flush message, asking the server to send its pending
// output without ending the sequence.
func AppendFlush(dst []byte) []byte { return append(dst, MsgFlush, 0, 0, 0, 4) }

// AppendTerminate appends a Terminate message, which closes the session.
func AppendTerminate(dst []byte) []byte { return append(dst, MsgTerminate, 0, 0, 0, 4) }

// AppendEmpty appends a backend message whose body is empty (sent by
// servers): ParseComplete, BindComplete, CloseComplete, NoData,
// EmptyQueryResponse, PortalSuspended or CopyDone.
func AppendEmpty(dst []byte, typ byte) ([]byte, error) {
	if n, exact := bodyLimit(typ); !exact || n != 0 {
		return dst, fmt.Errorf("wire: %s is not an empty backend message", typeName(typ))
	}
	return append(dst, typ, 0, 0, 0, 4), nil
}
