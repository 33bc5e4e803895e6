package wire

// ParameterDescription ('t') describes the parameters of a prepared statement.
//
//	int16 n, n × int32 parameter type OID
type ParameterDescription struct {
	OIDs []uint32
}

// ParseParameterDescription decodes the body of a ParameterDescription. The
// count is read as unsigned: a statement may have up to 65535 parameters.
func ParseParameterDescription(body []byte) (ParameterDescription, error) {
	c := cursor{b: body, msg: "ParameterDescription"}
	n := c.ucount(4)
	var p ParameterDescription
	if n > 0 {
		p.OIDs = make([]uint32, n)
		for i := range p.OIDs {
			p.OIDs[i] = c.u32()
		}
	}
	if err := c.done(); err != nil {
		return ParameterDescription{}, err
	}
	return p, nil
}

// AppendParameterDescription appends a ParameterDescription message (sent by
// servers).
func AppendParameterDescription(dst []byte, p ParameterDescription) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgParameterDescription)
	dst, err := appendCount(dst, len(p.OIDs))
	if err != nil {
		return dst[:orig], err
	}
	for _, oid := range p.OIDs {
		dst = AppendUint32(dst, oid)
	}
	return FinishMessage(dst, start)
}
