package wire

import "fmt"

// ErrorFields holds the fields of an ErrorResponse ('E') or NoticeResponse
// ('N'). Fields the server did not send are empty.
//
//	(byte field code, cstring value)*, byte 0
type ErrorFields struct {
	Severity         string // S: localized severity
	SeverityV        string // V: severity, never localized (PostgreSQL 9.6+)
	Code             string // C: SQLSTATE code
	Message          string // M: primary message
	Detail           string // D
	Hint             string // H
	Position         string // P: 1-based cursor position in the query, decimal
	InternalPosition string // p: position in InternalQuery, decimal
	InternalQuery    string // q: internally generated query that failed
	Where            string // W: context (call stack)
	Schema           string // s
	Table            string // t
	Column           string // c
	DataType         string // d
	Constraint       string // n
	File             string // F: server source file
	Line             string // L: server source line, decimal
	Routine          string // R: server source routine
}

// field returns a pointer to the field with the given code, or nil for a code
// this package does not know.
func (f *ErrorFields) field(code byte) *string {
	switch code {
	case 'S':
		return &f.Severity
	case 'V':
		return &f.SeverityV
	case 'C':
		return &f.Code
	case 'M':
		return &f.Message
	case 'D':
		return &f.Detail
	case 'H':
		return &f.Hint
	case 'P':
		return &f.Position
	case 'p':
		return &f.InternalPosition
	case 'q':
		return &f.InternalQuery
	case 'W':
		return &f.Where
	case 's':
		return &f.Schema
	case 't':
		return &f.Table
	case 'c':
		return &f.Column
	case 'd':
		return &f.DataType
	case 'n':
		return &f.Constraint
	case 'F':
		return &f.File
	case 'L':
		return &f.Line
	case 'R':
		return &f.Routine
	}
	return nil
}

// errorFieldCodes lists the codes AppendErrorFields writes, in order.
const errorFieldCodes = "SVCMDHPpqWstcdnFLR"

// ParseErrorFields decodes the body of an ErrorResponse or NoticeResponse.
// Unknown field codes are ignored, as the protocol requires.
func ParseErrorFields(body []byte) (ErrorFields, error) {
	c := cursor{b: body, msg: "ErrorResponse"}
	var f ErrorFields
	for {
		code := c.u8()
		if c.err != nil || code == 0 {
			break
		}
		v := c.cstring()
		if p := f.field(code); p != nil && c.err == nil {
			*p = string(v)
		}
	}
	if err := c.done(); err != nil {
		return ErrorFields{}, err
	}
	return f, nil
}

// AppendErrorFields appends an ErrorResponse or NoticeResponse message of
// type typ (MsgErrorResponse or MsgNoticeResponse; sent by servers) holding
// the non-empty fields of f.
func AppendErrorFields(dst []byte, typ byte, f ErrorFields) ([]byte, error) {
	if typ != MsgErrorResponse && typ != MsgNoticeResponse {
		return dst, fmt.Errorf("wire: %s is not an error or notice message type", typeName(typ))
	}
	orig := len(dst)
	dst, start := BeginMessage(dst, typ)
	var err error
	for i := range len(errorFieldCodes) {
		code := errorFieldCodes[i]
		v := *f.field(code)
		if v == "" {
			continue
		}
		dst = append(dst, code)
		if dst, err = AppendCString(dst, v); err != nil {
			return dst[:orig], err
		}
	}
	dst = append(dst, 0)
	return FinishMessage(dst, start)
}
