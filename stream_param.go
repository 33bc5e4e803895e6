package pgline

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/pgline/pgline/pgtype"
)

// ReaderValue is a query argument whose value is read from a reader while
// the statement is written to the server, never held in memory whole. Make
// one with ReaderArg.
type ReaderValue struct {
	r io.Reader
	n int64
}

// ReaderArg returns an argument that sends exactly n bytes read from r as
// the value of a bytea parameter (raw bytes), or of a text, varchar, json
// or jsonb parameter (the text, UTF-8). The bytes go from r to the socket
// a chunk at a time, without being buffered; meanwhile other goroutines'
// statements on the connection queue behind this one. If r ends before n
// bytes, the message cannot be completed and the connection is closed. r
// is read in the calling goroutine: a Read that blocks is not interrupted
// by the statement's ctx, as with CopyFromReader.
func ReaderArg(r io.Reader, n int64) *ReaderValue { return &ReaderValue{r: r, n: n} }

// format returns the format the value is sent in for a parameter of type
// oid: binary for bytea, text for the text types.
func (v *ReaderValue) format(oid uint32, streaming bool) (int16, error) {
	if !streaming {
		return 0, errors.New("ReaderArg cannot be used in a Batch")
	}
	if v.n < 0 || v.n > math.MaxInt32 {
		return 0, fmt.Errorf("ReaderArg length %d out of range", v.n)
	}
	switch oid {
	case pgtype.ByteaOID:
		return 1, nil
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.UnknownOID:
		return 0, nil
	}
	return 0, fmt.Errorf("ReaderArg takes bytea and text parameters, not type OID %d", oid)
}

func hasReaderArg(args []any) bool {
	for _, a := range args {
		if _, ok := a.(*ReaderValue); ok {
			return true
		}
	}
	return false
}
