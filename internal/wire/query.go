package wire

// AppendQuery appends a Query ('Q'): a simple-protocol query string that may
// hold several statements.
//
//	cstring query
func AppendQuery(dst []byte, sql string) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgQuery)
	dst, err := AppendCString(dst, sql)
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}

// ParseQuery decodes the body of a Query message.
func ParseQuery(body []byte) (string, error) {
	c := cursor{b: body, msg: "Query"}
	q := c.cstring()
	if err := c.done(); err != nil {
		return "", err
	}
	return string(q), nil
}
