package wire

// ParameterStatus ('S') reports the value of a run-time parameter, at startup
// and whenever a reported parameter changes.
//
//	cstring name, cstring value
type ParameterStatus struct {
	Name  string
	Value string
}

// ParseParameterStatus decodes the body of a ParameterStatus message.
func ParseParameterStatus(body []byte) (ParameterStatus, error) {
	c := cursor{b: body, msg: "ParameterStatus"}
	name := c.cstring()
	value := c.cstring()
	if err := c.done(); err != nil {
		return ParameterStatus{}, err
	}
	return ParameterStatus{Name: string(name), Value: string(value)}, nil
}

// AppendParameterStatus appends a ParameterStatus message (sent by servers).
func AppendParameterStatus(dst []byte, p ParameterStatus) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgParameterStatus)
	dst, err := AppendCString(dst, p.Name)
	if err == nil {
		dst, err = AppendCString(dst, p.Value)
	}
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}
