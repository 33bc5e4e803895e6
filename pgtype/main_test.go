package pgtype

import (
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pgline/pgline/pgtest"
)

var srv *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m, pgtest.Options{}, &srv)) }

// serverValue is one value as the server encodes it.
type serverValue struct {
	null bool
	bin  []byte // the type's send function output
	text string // value::text
}

// sendFunc names the binary send function of a type.
func sendFunc(typ string) string {
	if strings.HasSuffix(typ, "[]") {
		return "array_send"
	}
	switch {
	case strings.HasSuffix(typ, "multirange"):
		return "multirange_send"
	case strings.HasSuffix(typ, "range"):
		return "range_send"
	case sendFuncs[typ] != "":
		return sendFuncs[typ]
	}
	switch typ {
	case "polygon":
		return "poly_send"
	case "bool", "int2", "int4", "int8", "float4", "float8", "text", "bytea", "oid", "varchar", "bpchar", "name", "char":
		return typ + "send"
	}
	return typ + "_send"
}

// sendFuncs names the send functions of the types the tests create.
var sendFuncs = map[string]string{}

// serverValues asks the server for the binary and text forms of each
// (type, expression) pair, in one psql run, with TimeZone UTC.
func serverValues(t testing.TB, pairs [][2]string) []serverValue {
	t.Helper()
	var sql strings.Builder
	sql.WriteString("SET TimeZone = 'UTC';\n")
	for _, p := range pairs {
		typ, expr := p[0], p[1]
		fmt.Fprintf(&sql, "SELECT coalesce(encode(%s((%s)::%s), 'hex') || '|' || ((%s)::%s)::text, '<NULL>');\n",
			sendFunc(typ), expr, typ, expr, typ)
	}
	out, err := srv.Query(sql.String())
	if err != nil {
		t.Fatalf("psql: %v", err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != len(pairs) {
		t.Fatalf("got %d lines for %d values:\n%s", len(lines), len(pairs), out)
	}
	vals := make([]serverValue, len(pairs))
	for i, l := range lines {
		if l == "<NULL>" {
			vals[i].null = true
			continue
		}
		h, text, ok := strings.Cut(l, "|")
		if !ok {
			t.Fatalf("bad line %q", l)
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("bad hex in %q", l)
		}
		vals[i] = serverValue{bin: b, text: text}
	}
	return vals
}
