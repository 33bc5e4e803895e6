package floor

import (
	"bytes"
	"encoding/binary"
)

// begin appends a message type byte and a length placeholder; finish fills
// the length in. start is the offset of the length field.
func begin(b []byte, typ byte) ([]byte, int) {
	b = append(b, typ)
	start := len(b)
	return append(b, 0, 0, 0, 0), start
}

func finish(b []byte, start int) []byte {
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b
}

func appendCString(b []byte, s string) []byte {
	b = append(b, s...)
	return append(b, 0)
}

// appendQuery appends Bind (unnamed portal, binary results), Execute (no
// row limit) and Sync.
func appendQuery(b []byte, stmt string, params [][]byte, formats []int16) []byte {
	b = appendBindExecute(b, stmt, params, formats)
	return append(b, 'S', 0, 0, 0, 4)
}

// appendBindExecute appends Bind and Execute.
//
//	Bind:    'B' int32 len, portal\0, stmt\0, int16 nfmt, int16 fmt[nfmt],
//	         int16 nparam, (int32 len | -1, bytes)[nparam], int16 1, int16 1
//	Execute: 'E' int32 len, portal\0, int32 maxrows
//	Sync:    'S' int32 4
func appendBindExecute(b []byte, stmt string, params [][]byte, formats []int16) []byte {
	b, start := begin(b, 'B')
	b = append(b, 0) // unnamed portal
	b = appendCString(b, stmt)
	b = binary.BigEndian.AppendUint16(b, uint16(len(formats)))
	for _, f := range formats {
		b = binary.BigEndian.AppendUint16(b, uint16(f))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(params)))
	for _, p := range params {
		if p == nil {
			b = binary.BigEndian.AppendUint32(b, 0xFFFFFFFF)
			continue
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	b = append(b, 0, 1, 0, 1) // one result format code: binary for all
	b = finish(b, start)
	return append(b, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0)
}

// parseError reads the fields of an ErrorResponse body: a sequence of
// (code byte, string\0), ended by a zero byte.
func parseError(body []byte) *ServerError {
	e := &ServerError{}
	for len(body) > 0 && body[0] != 0 {
		code := body[0]
		body = body[1:]
		i := bytes.IndexByte(body, 0)
		if i < 0 {
			i = len(body)
		}
		v := string(body[:i])
		if i < len(body) {
			i++
		}
		body = body[i:]
		switch code {
		case 'S':
			e.Severity = v
		case 'C':
			e.Code = v
		case 'M':
			e.Message = v
		}
	}
	if e.Message == "" {
		e.Message = "(no message)"
	}
	return e
}
