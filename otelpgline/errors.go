package otelpgline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/pgline/pgline"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// sqlState returns the SQLSTATE of err's *pgline.PgError, or "".
func sqlState(err error) string {
	var pe *pgline.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// sentinels are the errors that error.type names by their Go name.
var sentinels = []struct {
	err  error
	name string
}{
	{context.DeadlineExceeded, "context.DeadlineExceeded"},
	{context.Canceled, "context.Canceled"},
	{pgline.ErrPoolClosed, "pgline.ErrPoolClosed"},
	{pgline.ErrClosed, "pgline.ErrClosed"},
	{pgline.ErrTxClosed, "pgline.ErrTxClosed"},
	{pgline.ErrTxRolledBack, "pgline.ErrTxRolledBack"},
	{pgline.ErrBatchAborted, "pgline.ErrBatchAborted"},
	{pgline.ErrTooManyRows, "pgline.ErrTooManyRows"},
	{io.ErrUnexpectedEOF, "io.ErrUnexpectedEOF"},
	{io.EOF, "io.EOF"},
}

// errorType is error.type for err: the SQLSTATE of a server error (so it
// matches db.response.status_code), the Go name of a well-known sentinel
// error ("context.DeadlineExceeded", "pgline.ErrClosed"), "timeout" for a
// network timeout, else the Go type of the error under any fmt.Errorf
// wrapping ("*net.OpError"), or "_OTHER" when that says nothing
// (errors.New).
func errorType(err error) string {
	if code := sqlState(err); code != "" {
		return code
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	var ce *pgline.ConnectError
	if errors.As(err, &ce) && len(ce.Attempts) > 0 {
		return errorType(ce.Attempts[len(ce.Attempts)-1].Err)
	}
	t := semconv.ErrorType(err).Value.AsString()
	if t == "*errors.errorString" || t == "*fmt.wrapError" || t == "*fmt.wrapErrors" || t == "*errors.joinError" {
		return semconv.ErrorTypeOther.Value.AsString()
	}
	return t
}

// exceptionType is exception.type for err: the Go type of its
// *pgline.PgError if it has one, else of err under fmt.Errorf wrapping.
func exceptionType(err error) string {
	var pe *pgline.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%T", pe)
	}
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || !strings.HasPrefix(fmt.Sprintf("%T", err), "*fmt.") {
			return fmt.Sprintf("%T", err)
		}
		next := u.Unwrap()
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}

// scrub returns msg with the text of each argument that it holds, as a
// whole word, replaced by "?": the server quotes values it cannot take
// (`invalid input syntax for type integer: "abc"`), and arguments are never
// recorded. It knows the text of strings, byte slices, integers, floats
// and fmt.Stringers; other values are not looked for.
func scrub(msg string, args []any) string {
	for _, a := range args {
		if t := argText(a); t != "" {
			msg = replaceWord(msg, t)
		}
	}
	return msg
}

// argText is the text a value would have in a server message, or "" (also
// when a String method panics, as on some nil pointers).
func argText(a any) (text string) {
	defer func() {
		if recover() != nil {
			text = ""
		}
	}()
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		return strconv.FormatInt(int64(v), 10)
	case int8:
		return strconv.FormatInt(int64(v), 10)
	case int16:
		return strconv.FormatInt(int64(v), 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint:
		return strconv.FormatUint(uint64(v), 10)
	case uint8:
		return strconv.FormatUint(uint64(v), 10)
	case uint16:
		return strconv.FormatUint(uint64(v), 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case fmt.Stringer:
		return v.String()
	}
	return ""
}

// replaceWord replaces each occurrence of w in s that is not glued to a
// letter or digit on either side.
func replaceWord(s, w string) string {
	var b strings.Builder
	done := 0
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], w)
		if i < 0 {
			break
		}
		i += from
		end := i + len(w)
		if (i > 0 && isAlnum(s[i-1])) || (end < len(s) && isAlnum(s[end])) {
			from = i + 1
			continue
		}
		b.WriteString(s[done:i])
		b.WriteByte('?')
		done, from = end, end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
