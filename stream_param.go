package pgline

import (
	"io"
	"slices"

	"github.com/pgline/pgline/internal/session"
)

// ReaderValue is a query argument whose value is read from a reader while
// the statement is written to the server, never held in memory whole. Make
// one with ReaderArg.
type ReaderValue struct {
	v *session.ReaderValue // what the session sends (see sessionArgs)
}

// ReaderArg returns an argument that sends exactly n bytes read from r as
// the value of a bytea parameter (raw bytes), or of a text, varchar, json
// or jsonb parameter (the text, UTF-8). The bytes go from r to the socket
// a chunk at a time, without being buffered; meanwhile other goroutines'
// statements on the connection queue behind this one. If r ends before n
// bytes, the message cannot be completed and the connection is closed. r
// is read in the calling goroutine: a Read that blocks is not interrupted
// by the statement's ctx, as with CopyFromReader.
func ReaderArg(r io.Reader, n int64) *ReaderValue { return &ReaderValue{v: session.ReaderArg(r, n)} }

// sessionArgs returns args as the session takes them: each ReaderValue
// replaced by the session's own, in a copy; args itself when it has none
// (the common case costs one type check per argument).
func sessionArgs(args []any) []any {
	for i, a := range args {
		if rv, ok := a.(*ReaderValue); ok && rv != nil {
			out := slices.Clone(args)
			for j := i; j < len(out); j++ {
				if rv, ok := out[j].(*ReaderValue); ok && rv != nil {
					out[j] = rv.v
				}
			}
			return out
		}
	}
	return args
}
