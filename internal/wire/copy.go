package wire

// Copy sub-protocol messages, sent by either side:
//
//	CopyData ('d'): bytes (the rest of the message)
//	CopyDone ('c'): empty
//	CopyFail ('f', frontend only): cstring error message
//
// Protocol flow (COPY FROM STDIN): Query or Execute → CopyInResponse; the
// client sends CopyData* then CopyDone (or CopyFail); the server replies
// CommandComplete (or ErrorResponse) and ReadyForQuery. COPY TO STDOUT:
// CopyOutResponse, CopyData*, CopyDone, CommandComplete, ReadyForQuery.

// AppendCopyData appends a CopyData message carrying data.
func AppendCopyData(dst []byte, data []byte) ([]byte, error) {
	dst, start := BeginMessage(dst, MsgCopyData)
	dst = append(dst, data...)
	return FinishMessage(dst, start)
}

// AppendCopyDone appends a CopyDone message.
func AppendCopyDone(dst []byte) []byte {
	return append(dst, MsgCopyDone, 0, 0, 0, 4)
}

// AppendCopyFail appends a CopyFail message; msg becomes the server's error
// message.
func AppendCopyFail(dst []byte, msg string) ([]byte, error) {
	orig := len(dst)
	dst, start := BeginMessage(dst, MsgCopyFail)
	dst, err := AppendCString(dst, msg)
	if err != nil {
		return dst[:orig], err
	}
	return FinishMessage(dst, start)
}

// ParseCopyFail decodes the body of a CopyFail message.
func ParseCopyFail(body []byte) (string, error) {
	c := cursor{b: body, msg: "CopyFail"}
	m := c.cstring()
	if err := c.done(); err != nil {
		return "", err
	}
	return string(m), nil
}
