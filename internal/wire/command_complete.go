package wire

// ParseCommandComplete decodes the body of a CommandComplete ('C') message,
// a cstring command tag such as "INSERT 0 1" or "SELECT 5". The tag aliases
// body.
func ParseCommandComplete(body []byte) (tag []byte, err error) {
	c := cursor{b: body, msg: "CommandComplete"}
	tag = c.cstring()
	if err := c.done(); err != nil {
		return nil, err
	}
	return tag, nil
}

// AppendCommandComplete appends a CommandComplete message (sent by servers).
func AppendCommandComplete(dst []byte, tag string) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgCommandComplete)
	dst, err := AppendCString(dst, tag)
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}
