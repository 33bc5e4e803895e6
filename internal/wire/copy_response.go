package wire

import "fmt"

// CopyResponse is the body of a CopyInResponse ('G'), CopyOutResponse ('H')
// or CopyBothResponse ('W'); the message type says which.
//
//	int8 overall format (0 text, 1 binary), int16 n, n × int16 column format
type CopyResponse struct {
	Format        int8    // 0 text, 1 binary
	ColumnFormats []int16 // one per column; all 0 when Format is 0
}

// ParseCopyResponse decodes the body of a CopyInResponse, CopyOutResponse or
// CopyBothResponse message.
func ParseCopyResponse(body []byte) (CopyResponse, error) {
	c := cursor{b: body, msg: "CopyResponse"}
	r := CopyResponse{Format: int8(c.u8())}
	if c.err == nil && r.Format != 0 && r.Format != 1 {
		c.fail(fmt.Sprintf("invalid format %d", r.Format))
	}
	n := c.count(2)
	if n > 0 {
		r.ColumnFormats = make([]int16, n)
		for i := range r.ColumnFormats {
			r.ColumnFormats[i] = int16(c.u16())
			if f := r.ColumnFormats[i]; c.err == nil && f != 0 && f != 1 {
				c.fail(fmt.Sprintf("invalid column format %d", f))
			}
		}
	}
	if err := c.done(); err != nil {
		return CopyResponse{}, err
	}
	return r, nil
}

// AppendCopyResponse appends a copy response message of type typ
// (MsgCopyInResponse, MsgCopyOutResponse or MsgCopyBothResponse; sent by
// servers).
func AppendCopyResponse(dst []byte, typ byte, r CopyResponse) ([]byte, error) {
	if typ != MsgCopyInResponse && typ != MsgCopyOutResponse && typ != MsgCopyBothResponse {
		return dst, fmt.Errorf("wire: %s is not a copy response type", typeName(typ))
	}
	orig := len(dst)
	dst, start := BeginMessage(dst, typ)
	dst = append(dst, byte(r.Format))
	dst, err := appendInt16s(dst, r.ColumnFormats)
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}
