package wire

import (
	"fmt"
)

// Bind ('B') binds parameter values to a prepared statement, creating a portal.
//
//	cstring portal, cstring statement,
//	int16 n, n × int16 parameter format (0 text, 1 binary; n = 0: all text, n = 1: one for all),
//	int16 n, n × (int32 length or -1 for NULL, length bytes),
//	int16 n, n × int16 result column format (same rules)
type Bind struct {
	Portal        string
	Statement     string
	ParamFormats  []int16
	Params        [][]byte // nil is NULL; values alias the body when decoded
	ResultFormats []int16
}

// AppendBind appends a Bind message. params holds the encoded parameter
// values, nil for NULL. paramFormats must have 0, 1 or len(params) entries.
// To encode values in place without building params, use BeginMessage,
// AppendCString, AppendInt16, AppendInt32 and FinishMessage directly.
func AppendBind(dst []byte, portal, stmt string, paramFormats []int16, params [][]byte, resultFormats []int16) ([]byte, error) {
	if n := len(paramFormats); n > 1 && n != len(params) {
		return dst, fmt.Errorf("wire: Bind has %d parameter formats for %d parameters", n, len(params))
	}
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgBind)
	dst, err := AppendCString(dst, portal)
	if err == nil {
		dst, err = AppendCString(dst, stmt)
	}
	if err == nil {
		dst, err = appendInt16s(dst, paramFormats)
	}
	if err == nil {
		dst, err = appendCount(dst, len(params))
	}
	for i := 0; i < len(params) && err == nil; i++ {
		dst, err = appendBytes(dst, params[i])
	}
	if err == nil {
		dst, err = appendInt16s(dst, resultFormats)
	}
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}

// ParseBind decodes the body of a Bind message. Params alias body.
func ParseBind(body []byte) (Bind, error) {
	c := cursor{b: body, msg: "Bind"}
	b := Bind{Portal: string(c.cstring()), Statement: string(c.cstring())}
	b.ParamFormats = c.int16s()
	n := c.ucount(4)
	if n > 0 {
		b.Params = make([][]byte, n)
		for i := range b.Params {
			l := int32(c.u32())
			if c.err != nil {
				break
			}
			if l == -1 {
				continue
			}
			if l < 0 {
				c.fail(fmt.Sprintf("parameter %d: invalid length %d", i, l))
				break
			}
			b.Params[i] = c.bytes(int(l))
		}
	}
	b.ResultFormats = c.int16s()
	if err := c.done(); err != nil {
		return Bind{}, err
	}
	return b, nil
}
