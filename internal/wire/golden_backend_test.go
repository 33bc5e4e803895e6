package wire

import (
	"bytes"
	"io"
	"reflect"
	"testing"
)

// decodeDataRow returns a DataRow's values for comparison.
func decodeDataRow(b []byte) (any, error) {
	d, err := ParseDataRow(b)
	if err != nil {
		return nil, err
	}
	return d.Values(nil), nil
}

// backendCase is one backend message golden test.
type backendCase struct {
	name   string
	golden string
	decode func(body []byte) (any, error)
	want   any
	encode func(dst []byte) ([]byte, error)
}

// key32 is a 32-byte cancel key, as PostgreSQL 18 sends under protocol 3.2.
var key32 = []byte{
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
}

// backendGolden lists every backend message: its golden bytes, the value they
// decode to, and the (server-side) encoder that must reproduce them.
var backendGolden = []backendCase{
	{
		name: "AuthenticationOk", golden: "52 00000008 00000000",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthOK},
		encode: func(dst []byte) ([]byte, error) { return AppendAuthentication(dst, Authentication{Type: AuthOK}) },
	},
	{
		name: "AuthenticationCleartextPassword", golden: "52 00000008 00000003",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthCleartextPassword},
		encode: func(dst []byte) ([]byte, error) {
			return AppendAuthentication(dst, Authentication{Type: AuthCleartextPassword})
		},
	},
	{
		name: "AuthenticationMD5Password", golden: "52 0000000c 00000005 01020304",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthMD5Password, Salt: [4]byte{1, 2, 3, 4}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendAuthentication(dst, Authentication{Type: AuthMD5Password, Salt: [4]byte{1, 2, 3, 4}})
		},
	},
	{
		name: "AuthenticationGSS", golden: "52 00000008 00000007",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthGSS},
		encode: func(dst []byte) ([]byte, error) { return AppendAuthentication(dst, Authentication{Type: AuthGSS}) },
	},
	{
		name: "AuthenticationGSSContinue", golden: "52 00000009 00000008 78",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthGSSContinue, Data: []byte("x")},
		encode: func(dst []byte) ([]byte, error) {
			return AppendAuthentication(dst, Authentication{Type: AuthGSSContinue, Data: []byte("x")})
		},
	},
	{
		name: "AuthenticationSSPI", golden: "52 00000008 00000009",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthSSPI},
		encode: func(dst []byte) ([]byte, error) { return AppendAuthentication(dst, Authentication{Type: AuthSSPI}) },
	},
	{
		name: "AuthenticationSASL", golden: "52 0000000d 0000000a 4100 4200 00",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthSASL, Mechanisms: []string{"A", "B"}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendAuthentication(dst, Authentication{Type: AuthSASL, Mechanisms: []string{"A", "B"}})
		},
	},
	{
		name: "AuthenticationSASLContinue", golden: "52 0000000b 0000000b 723d31",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthSASLContinue, Data: []byte("r=1")},
		encode: func(dst []byte) ([]byte, error) {
			return AppendAuthentication(dst, Authentication{Type: AuthSASLContinue, Data: []byte("r=1")})
		},
	},
	{
		name: "AuthenticationSASLFinal", golden: "52 00000009 0000000c 76",
		decode: func(b []byte) (any, error) { return ParseAuthentication(b) },
		want:   Authentication{Type: AuthSASLFinal, Data: []byte("v")},
		encode: func(dst []byte) ([]byte, error) {
			return AppendAuthentication(dst, Authentication{Type: AuthSASLFinal, Data: []byte("v")})
		},
	},
	{
		name: "BackendKeyData", golden: "4b 0000000c 00000001 deadbeef",
		decode: func(b []byte) (any, error) { return ParseBackendKeyData(b, ProtocolVersion30) },
		want:   BackendKeyData{ProcessID: 1, SecretKey: []byte{0xde, 0xad, 0xbe, 0xef}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendBackendKeyData(dst, BackendKeyData{ProcessID: 1, SecretKey: []byte{0xde, 0xad, 0xbe, 0xef}}), nil
		},
	},
	{
		// Protocol 3.2: PostgreSQL 18's 32-byte key.
		name:   "BackendKeyData/3.2",
		golden: "4b 00000028 00000001 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		decode: func(b []byte) (any, error) { return ParseBackendKeyData(b, ProtocolVersion32) },
		want:   BackendKeyData{ProcessID: 1, SecretKey: key32},
		encode: func(dst []byte) ([]byte, error) {
			return AppendBackendKeyData(dst, BackendKeyData{ProcessID: 1, SecretKey: key32}), nil
		},
	},
	{
		name: "CommandComplete", golden: "43 0000000d 53454c454354203100",
		decode: func(b []byte) (any, error) { tag, err := ParseCommandComplete(b); return string(tag), err },
		want:   "SELECT 1",
		encode: func(dst []byte) ([]byte, error) { return AppendCommandComplete(dst, "SELECT 1") },
	},
	{
		name: "CopyInResponse", golden: "47 0000000b 00 0002 0000 0000",
		decode: func(b []byte) (any, error) { return ParseCopyResponse(b) },
		want:   CopyResponse{Format: 0, ColumnFormats: []int16{0, 0}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendCopyResponse(dst, MsgCopyInResponse, CopyResponse{ColumnFormats: []int16{0, 0}})
		},
	},
	{
		name: "CopyOutResponse", golden: "48 00000009 01 0001 0001",
		decode: func(b []byte) (any, error) { return ParseCopyResponse(b) },
		want:   CopyResponse{Format: 1, ColumnFormats: []int16{1}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendCopyResponse(dst, MsgCopyOutResponse, CopyResponse{Format: 1, ColumnFormats: []int16{1}})
		},
	},
	{
		name: "CopyBothResponse", golden: "57 00000007 00 0000",
		decode: func(b []byte) (any, error) { return ParseCopyResponse(b) },
		want:   CopyResponse{},
		encode: func(dst []byte) ([]byte, error) { return AppendCopyResponse(dst, MsgCopyBothResponse, CopyResponse{}) },
	},
	{
		name: "CopyData", golden: "64 00000006 6162",
		decode: func(b []byte) (any, error) { return string(b), nil },
		want:   "ab",
		encode: func(dst []byte) ([]byte, error) { return AppendCopyData(dst, []byte("ab")) },
	},
	{
		name: "DataRow", golden: "44 00000014 0003 00000002 6162 ffffffff 00000000",
		decode: decodeDataRow,
		want:   [][]byte{[]byte("ab"), nil, {}},
		encode: func(dst []byte) ([]byte, error) { return AppendDataRow(dst, [][]byte{[]byte("ab"), nil, {}}) },
	},
	{
		name: "DataRow/nocolumns", golden: "44 00000006 0000",
		decode: decodeDataRow,
		want:   [][]byte(nil),
		encode: func(dst []byte) ([]byte, error) { return AppendDataRow(dst, nil) },
	},
	{
		name: "ErrorResponse", golden: "45 00000016 53 4552524f5200 43 343236303100 4d 7800 00",
		decode: func(b []byte) (any, error) { return ParseErrorFields(b) },
		want:   ErrorFields{Severity: "ERROR", Code: "42601", Message: "x"},
		encode: func(dst []byte) ([]byte, error) {
			return AppendErrorFields(dst, MsgErrorResponse, ErrorFields{Severity: "ERROR", Code: "42601", Message: "x"})
		},
	},
	{
		name: "NoticeResponse", golden: "4e 00000010 53 4e4f5449434500 4d 6e00 00",
		decode: func(b []byte) (any, error) { return ParseErrorFields(b) },
		want:   ErrorFields{Severity: "NOTICE", Message: "n"},
		encode: func(dst []byte) ([]byte, error) {
			return AppendErrorFields(dst, MsgNoticeResponse, ErrorFields{Severity: "NOTICE", Message: "n"})
		},
	},
	{
		name: "FunctionCallResponse", golden: "56 0000000a 00000002 6162",
		decode: func(b []byte) (any, error) { return ParseFunctionCallResponse(b) },
		want:   FunctionCallResponse{Result: []byte("ab")},
		encode: func(dst []byte) ([]byte, error) {
			return AppendFunctionCallResponse(dst, FunctionCallResponse{Result: []byte("ab")})
		},
	},
	{
		name: "FunctionCallResponse/NULL", golden: "56 00000008 ffffffff",
		decode: func(b []byte) (any, error) { return ParseFunctionCallResponse(b) },
		want:   FunctionCallResponse{},
		encode: func(dst []byte) ([]byte, error) { return AppendFunctionCallResponse(dst, FunctionCallResponse{}) },
	},
	{
		// PostgreSQL 15's answer to a StartupMessage asking 3.2.
		name: "NegotiateProtocolVersion", golden: "76 0000000c 00030000 00000000",
		decode: func(b []byte) (any, error) { return ParseNegotiateProtocolVersion(b) },
		want:   NegotiateProtocolVersion{Version: ProtocolVersion30},
		encode: func(dst []byte) ([]byte, error) {
			return AppendNegotiateProtocolVersion(dst, NegotiateProtocolVersion{Version: ProtocolVersion30})
		},
	},
	{
		name: "NegotiateProtocolVersion/options", golden: "76 00000013 00030000 00000001 5f70715f2e7800",
		decode: func(b []byte) (any, error) { return ParseNegotiateProtocolVersion(b) },
		want:   NegotiateProtocolVersion{Version: ProtocolVersion30, Unrecognized: []string{"_pq_.x"}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendNegotiateProtocolVersion(dst, NegotiateProtocolVersion{Version: ProtocolVersion30, Unrecognized: []string{"_pq_.x"}})
		},
	},
	{
		name: "NotificationResponse", golden: "41 0000000e 00000007 636800 686900",
		decode: func(b []byte) (any, error) { return ParseNotificationResponse(b) },
		want:   NotificationResponse{PID: 7, Channel: "ch", Payload: "hi"},
		encode: func(dst []byte) ([]byte, error) {
			return AppendNotificationResponse(dst, NotificationResponse{PID: 7, Channel: "ch", Payload: "hi"})
		},
	},
	{
		name: "ParameterDescription", golden: "74 0000000e 0002 00000017 00000019",
		decode: func(b []byte) (any, error) { return ParseParameterDescription(b) },
		want:   ParameterDescription{OIDs: []uint32{23, 25}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendParameterDescription(dst, ParameterDescription{OIDs: []uint32{23, 25}})
		},
	},
	{
		name: "ParameterStatus", golden: "53 00000008 6100 6200",
		decode: func(b []byte) (any, error) { return ParseParameterStatus(b) },
		want:   ParameterStatus{Name: "a", Value: "b"},
		encode: func(dst []byte) ([]byte, error) {
			return AppendParameterStatus(dst, ParameterStatus{Name: "a", Value: "b"})
		},
	},
	{
		name: "ReadyForQuery", golden: "5a 00000005 49",
		decode: func(b []byte) (any, error) { return ParseReadyForQuery(b) },
		want:   ReadyForQuery{TxStatus: TxIdle},
		encode: func(dst []byte) ([]byte, error) { return AppendReadyForQuery(dst, TxIdle), nil },
	},
	{
		name:   "RowDescription",
		golden: "54 0000001b 0001 696400 00004000 0001 00000017 0004 ffffffff 0001",
		decode: func(b []byte) (any, error) { return ParseRowDescription(b, nil) },
		want: []FieldDescription{{Name: "id", TableOID: 16384, TableAttributeNumber: 1, DataTypeOID: 23,
			DataTypeSize: 4, TypeModifier: -1, Format: 1}},
		encode: func(dst []byte) ([]byte, error) {
			return AppendRowDescription(dst, []FieldDescription{{Name: "id", TableOID: 16384,
				TableAttributeNumber: 1, DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1, Format: 1}})
		},
	},
	emptyGolden("ParseComplete", "31 00000004", MsgParseComplete),
	emptyGolden("BindComplete", "32 00000004", MsgBindComplete),
	emptyGolden("CloseComplete", "33 00000004", MsgCloseComplete),
	emptyGolden("NoData", "6e 00000004", MsgNoData),
	emptyGolden("EmptyQueryResponse", "49 00000004", MsgEmptyQueryResponse),
	emptyGolden("PortalSuspended", "73 00000004", MsgPortalSuspended),
	emptyGolden("CopyDone", "63 00000004", MsgCopyDone),
}

// emptyGolden returns the golden test of a message with an empty body.
func emptyGolden(name, golden string, typ byte) backendCase {
	return backendCase{
		name: name, golden: golden,
		decode: func(b []byte) (any, error) { return len(b), nil },
		want:   0,
		encode: func(dst []byte) ([]byte, error) { return AppendEmpty(dst, typ) },
	}
}

func TestBackendGolden(t *testing.T) {
	for _, tc := range backendGolden {
		t.Run(tc.name, func(t *testing.T) {
			golden := unhex(t, tc.golden)
			r := NewReader(bytes.NewReader(golden), 0, 0)
			typ, body, err := r.Next()
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if typ != golden[0] {
				t.Fatalf("type %q, want %q", typ, golden[0])
			}
			v, err := tc.decode(body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(v, tc.want) {
				t.Fatalf("decoded %#v\nwant %#v", v, tc.want)
			}
			enc, err := tc.encode(nil)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.Equal(enc, golden) {
				t.Fatalf("encoded\n%x\nwant\n%x", enc, golden)
			}
			if _, _, err := r.Next(); err != io.EOF {
				t.Fatalf("Next after the only message: %v, want io.EOF", err)
			}
			checkEncoder(t, tc.encode, golden)
		})
	}
}
