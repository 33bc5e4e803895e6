package wire

import "fmt"

// Target names the prepared statement or portal of a Describe ('D'), which
// asks for its description, or a Close ('C'), which releases it.
//
//	byte 'S' (statement) or 'P' (portal), cstring name
type Target struct {
	Kind byte // 'S' statement or 'P' portal
	Name string
}

// AppendDescribe appends a Describe message for the statement (kind 'S') or
// portal (kind 'P') called name.
func AppendDescribe(dst []byte, kind byte, name string) ([]byte, error) {
	return appendTarget(dst, MsgDescribe, kind, name)
}

// AppendClose appends a Close message for the statement (kind 'S') or portal
// (kind 'P') called name.
func AppendClose(dst []byte, kind byte, name string) ([]byte, error) {
	return appendTarget(dst, MsgClose, kind, name)
}

func appendTarget(dst []byte, typ, kind byte, name string) ([]byte, error) {
	if kind != 'S' && kind != 'P' {
		return dst, fmt.Errorf("wire: object kind %s is not 'S' or 'P'", typeName(kind))
	}
	orig := len(dst)
	dst, start := BeginMessage(dst, typ)
	dst = append(dst, kind)
	dst, err := AppendCString(dst, name)
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}

// ParseDescribe decodes the body of a Describe message.
func ParseDescribe(body []byte) (Target, error) { return parseTarget(body, "Describe") }

// ParseClose decodes the body of a Close message.
func ParseClose(body []byte) (Target, error) { return parseTarget(body, "Close") }

func parseTarget(body []byte, msg string) (Target, error) {
	c := cursor{b: body, msg: msg}
	kind := c.u8()
	if c.err == nil && kind != 'S' && kind != 'P' {
		c.fail(fmt.Sprintf("invalid object kind %s", typeName(kind)))
	}
	name := c.cstring()
	if err := c.done(); err != nil {
		return Target{}, err
	}
	return Target{Kind: kind, Name: string(name)}, nil
}
