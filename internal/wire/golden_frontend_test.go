package wire

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// unhex decodes hex with optional spaces, failing the test on bad input.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad golden hex %q: %v", s, err)
	}
	return b
}

// frontendGolden lists every frontend message: how to encode it, its golden
// bytes, and how to decode the body back into the value that was encoded.
var frontendGolden = []struct {
	name    string
	startup bool
	encode  func(dst []byte) ([]byte, error)
	golden  string
	decode  func(body []byte) (any, error)
	want    any
}{
	{
		name: "StartupMessage", startup: true,
		encode: func(dst []byte) ([]byte, error) {
			return AppendStartup(dst, ProtocolVersion30, []string{"user", "u", "database", "d"})
		},
		golden: "0000001b 00030000 7573657200 7500 646174616261736500 6400 00",
		decode: func(b []byte) (any, error) { return ParseStartupMessage(b) },
		want:   StartupMessage{ProtocolVersion: 196608, Params: []string{"user", "u", "database", "d"}},
	},
	{
		name: "StartupMessage/3.2", startup: true,
		encode: func(dst []byte) ([]byte, error) { return AppendStartup(dst, ProtocolVersion32, []string{"user", "u"}) },
		golden: "00000010 00030002 7573657200 7500 00",
		decode: func(b []byte) (any, error) { return ParseStartupMessage(b) },
		want:   StartupMessage{ProtocolVersion: 196610, Params: []string{"user", "u"}},
	},
	{
		name: "SSLRequest", startup: true,
		encode: func(dst []byte) ([]byte, error) { return AppendSSLRequest(dst), nil },
		golden: "00000008 04d2162f",
		decode: func(b []byte) (any, error) { return StartupCode(b) },
		want:   uint32(SSLRequestCode),
	},
	{
		name: "GSSENCRequest", startup: true,
		encode: func(dst []byte) ([]byte, error) { return AppendGSSENCRequest(dst), nil },
		golden: "00000008 04d21630",
		decode: func(b []byte) (any, error) { return StartupCode(b) },
		want:   uint32(GSSENCRequestCode),
	},
	{
		name: "CancelRequest", startup: true,
		encode: func(dst []byte) ([]byte, error) {
			return AppendCancelRequest(dst, 1234, []byte{0xde, 0xad, 0xbe, 0xef}), nil
		},
		golden: "00000010 04d2162e 000004d2 deadbeef",
		decode: func(b []byte) (any, error) { return ParseCancelRequest(b) },
		want:   CancelRequest{ProcessID: 1234, SecretKey: []byte{0xde, 0xad, 0xbe, 0xef}},
	},
	{
		// Protocol 3.2: the whole 32-byte key of PostgreSQL 18 (8+4+32 bytes).
		name: "CancelRequest/3.2", startup: true,
		encode: func(dst []byte) ([]byte, error) { return AppendCancelRequest(dst, 1234, key32), nil },
		golden: "0000002c 04d2162e 000004d2 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		decode: func(b []byte) (any, error) { return ParseCancelRequest(b) },
		want:   CancelRequest{ProcessID: 1234, SecretKey: key32},
	},
	{
		name:   "PasswordMessage",
		encode: func(dst []byte) ([]byte, error) { return AppendPassword(dst, "pw") },
		golden: "70 00000007 707700",
		decode: func(b []byte) (any, error) { return ParsePassword(b) },
		want:   "pw",
	},
	{
		name:   "SASLInitialResponse",
		encode: func(dst []byte) ([]byte, error) { return AppendSASLInitialResponse(dst, "M", []byte("ab")) },
		golden: "70 0000000c 4d00 00000002 6162",
		decode: func(b []byte) (any, error) { return ParseSASLInitialResponse(b) },
		want:   SASLInitialResponse{Mechanism: "M", Data: []byte("ab")},
	},
	{
		name:   "SASLInitialResponse/nil",
		encode: func(dst []byte) ([]byte, error) { return AppendSASLInitialResponse(dst, "M", nil) },
		golden: "70 0000000a 4d00 ffffffff",
		decode: func(b []byte) (any, error) { return ParseSASLInitialResponse(b) },
		want:   SASLInitialResponse{Mechanism: "M"},
	},
	{
		name:   "SASLInitialResponse/empty",
		encode: func(dst []byte) ([]byte, error) { return AppendSASLInitialResponse(dst, "M", []byte{}) },
		golden: "70 0000000a 4d00 00000000",
		decode: func(b []byte) (any, error) { return ParseSASLInitialResponse(b) },
		want:   SASLInitialResponse{Mechanism: "M", Data: []byte{}},
	},
	{
		name:   "SASLResponse",
		encode: func(dst []byte) ([]byte, error) { return AppendSASLResponse(dst, []byte("ab")) },
		golden: "70 00000006 6162",
		decode: func(b []byte) (any, error) { return string(b), nil },
		want:   "ab",
	},
	{
		name:   "Query",
		encode: func(dst []byte) ([]byte, error) { return AppendQuery(dst, "SELECT 1") },
		golden: "51 0000000d 53454c454354203100",
		decode: func(b []byte) (any, error) { return ParseQuery(b) },
		want:   "SELECT 1",
	},
	{
		name:   "Parse",
		encode: func(dst []byte) ([]byte, error) { return AppendParse(dst, "s", "q", []uint32{23, 25}) },
		golden: "50 00000012 7300 7100 0002 00000017 00000019",
		decode: func(b []byte) (any, error) { return ParseParse(b) },
		want:   Parse{Name: "s", SQL: "q", ParamOIDs: []uint32{23, 25}},
	},
	{
		name:   "Parse/noparams",
		encode: func(dst []byte) ([]byte, error) { return AppendParse(dst, "", "q", nil) },
		golden: "50 00000009 00 7100 0000",
		decode: func(b []byte) (any, error) { return ParseParse(b) },
		want:   Parse{SQL: "q"},
	},
	{
		name: "Bind",
		encode: func(dst []byte) ([]byte, error) {
			return AppendBind(dst, "", "s", []int16{1}, [][]byte{[]byte("ab"), nil, {}}, []int16{1, 0})
		},
		golden: "42 00000021 00 7300 0001 0001 0003 00000002 6162 ffffffff 00000000 0002 0001 0000",
		decode: func(b []byte) (any, error) { return ParseBind(b) },
		want: Bind{Statement: "s", ParamFormats: []int16{1}, Params: [][]byte{[]byte("ab"), nil, {}},
			ResultFormats: []int16{1, 0}},
	},
	{
		name:   "Describe",
		encode: func(dst []byte) ([]byte, error) { return AppendDescribe(dst, 'S', "s") },
		golden: "44 00000007 53 7300",
		decode: func(b []byte) (any, error) { return ParseDescribe(b) },
		want:   Target{Kind: 'S', Name: "s"},
	},
	{
		name:   "Close",
		encode: func(dst []byte) ([]byte, error) { return AppendClose(dst, 'P', "") },
		golden: "43 00000006 50 00",
		decode: func(b []byte) (any, error) { return ParseClose(b) },
		want:   Target{Kind: 'P'},
	},
	{
		name:   "Execute",
		encode: func(dst []byte) ([]byte, error) { return AppendExecute(dst, "p", 10) },
		golden: "45 0000000a 7000 0000000a",
		decode: func(b []byte) (any, error) { return ParseExecute(b) },
		want:   Execute{Portal: "p", MaxRows: 10},
	},
	{
		name:   "Sync",
		encode: func(dst []byte) ([]byte, error) { return AppendSync(dst), nil },
		golden: "53 00000004",
		decode: func(b []byte) (any, error) { return len(b), nil },
		want:   0,
	},
	{
		name:   "Flush",
		encode: func(dst []byte) ([]byte, error) { return AppendFlush(dst), nil },
		golden: "48 00000004",
		decode: func(b []byte) (any, error) { return len(b), nil },
		want:   0,
	},
	{
		name:   "Terminate",
		encode: func(dst []byte) ([]byte, error) { return AppendTerminate(dst), nil },
		golden: "58 00000004",
		decode: func(b []byte) (any, error) { return len(b), nil },
		want:   0,
	},
	{
		name:   "CopyData",
		encode: func(dst []byte) ([]byte, error) { return AppendCopyData(dst, []byte("ab")) },
		golden: "64 00000006 6162",
		decode: func(b []byte) (any, error) { return string(b), nil },
		want:   "ab",
	},
	{
		name:   "CopyDone",
		encode: func(dst []byte) ([]byte, error) { return AppendCopyDone(dst), nil },
		golden: "63 00000004",
		decode: func(b []byte) (any, error) { return len(b), nil },
		want:   0,
	},
	{
		name:   "CopyFail",
		encode: func(dst []byte) ([]byte, error) { return AppendCopyFail(dst, "x") },
		golden: "66 00000006 7800",
		decode: func(b []byte) (any, error) { return ParseCopyFail(b) },
		want:   "x",
	},
}

func TestFrontendGolden(t *testing.T) {
	for _, tc := range frontendGolden {
		t.Run(tc.name, func(t *testing.T) {
			golden := unhex(t, tc.golden)
			got, err := tc.encode(nil)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.Equal(got, golden) {
				t.Fatalf("encoded\n%x\nwant\n%x", got, golden)
			}
			checkEncoder(t, tc.encode, golden)
			typ, body, err := ReadFrontendMessage(bytes.NewReader(golden), tc.startup)
			if err != nil {
				t.Fatalf("ReadFrontendMessage: %v", err)
			}
			if !tc.startup && typ != golden[0] {
				t.Fatalf("type %q, want %q", typ, golden[0])
			}
			v, err := tc.decode(body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(v, tc.want) {
				t.Fatalf("decoded %#v\nwant %#v", v, tc.want)
			}
		})
	}
}
