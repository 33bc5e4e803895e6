package wire

import (
	"fmt"
	"math"
)

// Execute ('E') runs a portal.
//
//	cstring portal, int32 maximum rows (0 = no limit)
type Execute struct {
	Portal  string
	MaxRows uint32
}

// AppendExecute appends an Execute message for portal returning at most
// maxRows rows before PortalSuspended (0 = no limit). maxRows above
// math.MaxInt32 is refused: the server would read it as negative.
func AppendExecute(dst []byte, portal string, maxRows uint32) ([]byte, error) {
	if maxRows > math.MaxInt32 {
		return dst, fmt.Errorf("wire: Execute row limit %d exceeds %d", maxRows, math.MaxInt32)
	}
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgExecute)
	dst, err := AppendCString(dst, portal)
	if err != nil {
		return dst[:orig], err
	}
	dst = AppendUint32(dst, maxRows)
	return FinishMessage(dst, start)
}

// ParseExecute decodes the body of an Execute message.
func ParseExecute(body []byte) (Execute, error) {
	c := cursor{b: body, msg: "Execute"}
	portal := c.cstring()
	n := c.u32()
	if err := c.done(); err != nil {
		return Execute{}, err
	}
	return Execute{Portal: string(portal), MaxRows: n}, nil
}
