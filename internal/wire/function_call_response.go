package wire

import (
	"encoding/binary"
	"fmt"
)

// FunctionCallResponse ('V') carries the result of a FunctionCall.
//
//	int32 length or -1 for NULL, length bytes
type FunctionCallResponse struct {
	Result []byte // nil for NULL; aliases the body
}

// ParseFunctionCallResponse decodes the body of a FunctionCallResponse.
func ParseFunctionCallResponse(body []byte) (FunctionCallResponse, error) {
	if len(body) < 4 {
		return FunctionCallResponse{}, protoErr("FunctionCallResponse: truncated")
	}
	l := int32(binary.BigEndian.Uint32(body))
	rest := body[4:]
	switch {
	case l == -1 && len(rest) == 0:
		return FunctionCallResponse{}, nil
	case l < 0:
		return FunctionCallResponse{}, protoErr(fmt.Sprintf("FunctionCallResponse: invalid length %d", l))
	case int(l) != len(rest):
		return FunctionCallResponse{}, protoErr(fmt.Sprintf("FunctionCallResponse: length %d does not match body (%d bytes)", l, len(rest)))
	}
	return FunctionCallResponse{Result: rest[:l:l]}, nil
}

// AppendFunctionCallResponse appends a FunctionCallResponse message (sent by
// servers).
func AppendFunctionCallResponse(dst []byte, r FunctionCallResponse) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgFunctionCallResponse)
	dst, err := appendBytes(dst, r.Result)
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}
