package wire

import "fmt"

// NegotiateProtocolVersion ('v') is sent, before authentication, by a
// server that does not support the requested minor protocol version or
// some protocol options (_pq_.*).
//
//	int32 version, int32 n, n × cstring unrecognized option
//
// The protocol documentation calls the first field the newest minor
// version the server supports; PostgreSQL sends the whole version
// (major<<16 | minor: 196608 for 3.0, as 15 answers a StartupMessage
// asking 3.2), which is what libpq reads, and so does pgline.
type NegotiateProtocolVersion struct {
	Version      uint32
	Unrecognized []string
}

// ParseNegotiateProtocolVersion decodes the body of a NegotiateProtocolVersion
// message.
func ParseNegotiateProtocolVersion(body []byte) (NegotiateProtocolVersion, error) {
	c := cursor{b: body, msg: "NegotiateProtocolVersion"}
	v := NegotiateProtocolVersion{Version: c.u32()}
	n := int32(c.u32())
	if c.err == nil && (n < 0 || int(n) > len(c.b)) {
		c.fail(fmt.Sprintf("invalid option count %d", n))
	}
	for i := int32(0); i < n && c.err == nil; i++ {
		s := c.cstring()
		if c.err == nil {
			v.Unrecognized = append(v.Unrecognized, string(s))
		}
	}
	if err := c.done(); err != nil {
		return NegotiateProtocolVersion{}, err
	}
	return v, nil
}

// AppendNegotiateProtocolVersion appends a NegotiateProtocolVersion message
// (sent by servers).
func AppendNegotiateProtocolVersion(dst []byte, v NegotiateProtocolVersion) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgNegotiateProtocolVersion)
	dst = AppendUint32(dst, v.Version)
	dst = AppendUint32(dst, uint32(len(v.Unrecognized)))
	var err error
	for _, s := range v.Unrecognized {
		if dst, err = AppendCString(dst, s); err != nil {
			return dst[:orig], err
		}
	}
	return FinishMessage(dst, start)
}
