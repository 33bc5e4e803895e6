package wire

// Parse ('P') prepares a statement.
//
//	cstring statement name ("" = unnamed), cstring query, int16 n, n × int32 parameter type OID (0 = unspecified)
type Parse struct {
	Name      string
	SQL       string
	ParamOIDs []uint32
}

// AppendParse appends a Parse message preparing sql as statement name with
// the given parameter type OIDs (0 lets the server infer a type).
func AppendParse(dst []byte, name, sql string, paramOIDs []uint32) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgParse)
	dst, err := AppendCString(dst, name)
	if err == nil {
		dst, err = AppendCString(dst, sql)
	}
	if err == nil {
		dst, err = appendCount(dst, len(paramOIDs))
	}
	if err != nil {
		return dst[:orig], err
	}
	for _, oid := range paramOIDs {
		dst = AppendUint32(dst, oid)
	}
	return FinishMessage(dst, start)
}

// ParseParse decodes the body of a Parse message.
func ParseParse(body []byte) (Parse, error) {
	c := cursor{b: body, msg: "Parse"}
	name := c.cstring()
	sql := c.cstring()
	n := c.ucount(4)
	var oids []uint32
	if n > 0 {
		oids = make([]uint32, n)
		for i := range oids {
			oids[i] = c.u32()
		}
	}
	if err := c.done(); err != nil {
		return Parse{}, err
	}
	return Parse{Name: string(name), SQL: string(sql), ParamOIDs: oids}, nil
}
