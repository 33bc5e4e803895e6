package wire

import (
	"strings"
	"testing"
)

// TestDecodersRejectMalformed feeds each decoder bodies that break its
// layout; every one must return a *ProtocolError.
func TestDecodersRejectMalformed(t *testing.T) {
	decoders := map[string]func([]byte) error{
		"Authentication":           func(b []byte) error { _, err := ParseAuthentication(b); return err },
		"BackendKeyData":           func(b []byte) error { _, err := ParseBackendKeyData(b, ProtocolVersion30); return err },
		"BackendKeyData/3.2":       func(b []byte) error { _, err := ParseBackendKeyData(b, ProtocolVersion32); return err },
		"CommandComplete":          func(b []byte) error { _, err := ParseCommandComplete(b); return err },
		"CopyResponse":             func(b []byte) error { _, err := ParseCopyResponse(b); return err },
		"DataRow":                  func(b []byte) error { _, err := ParseDataRow(b); return err },
		"ErrorFields":              func(b []byte) error { _, err := ParseErrorFields(b); return err },
		"FunctionCallResponse":     func(b []byte) error { _, err := ParseFunctionCallResponse(b); return err },
		"NegotiateProtocolVersion": func(b []byte) error { _, err := ParseNegotiateProtocolVersion(b); return err },
		"NotificationResponse":     func(b []byte) error { _, err := ParseNotificationResponse(b); return err },
		"ParameterDescription":     func(b []byte) error { _, err := ParseParameterDescription(b); return err },
		"ParameterStatus":          func(b []byte) error { _, err := ParseParameterStatus(b); return err },
		"ReadyForQuery":            func(b []byte) error { _, err := ParseReadyForQuery(b); return err },
		"RowDescription":           func(b []byte) error { _, err := ParseRowDescription(b, nil); return err },
		"StartupMessage":           func(b []byte) error { _, err := ParseStartupMessage(b); return err },
		"StartupCode":              func(b []byte) error { _, err := StartupCode(b); return err },
		"CancelRequest":            func(b []byte) error { _, err := ParseCancelRequest(b); return err },
		"Password":                 func(b []byte) error { _, err := ParsePassword(b); return err },
		"SASLInitialResponse":      func(b []byte) error { _, err := ParseSASLInitialResponse(b); return err },
		"Query":                    func(b []byte) error { _, err := ParseQuery(b); return err },
		"Parse":                    func(b []byte) error { _, err := ParseParse(b); return err },
		"Bind":                     func(b []byte) error { _, err := ParseBind(b); return err },
		"Describe":                 func(b []byte) error { _, err := ParseDescribe(b); return err },
		"Close":                    func(b []byte) error { _, err := ParseClose(b); return err },
		"Execute":                  func(b []byte) error { _, err := ParseExecute(b); return err },
		"CopyFail":                 func(b []byte) error { _, err := ParseCopyFail(b); return err },
	}
	tests := []struct {
		decoder string
		name    string
		hex     string
	}{
		{"Authentication", "empty", ""},
		{"Authentication", "short type", "000000"},
		{"Authentication", "ok with trailing", "00000000 00"},
		{"Authentication", "md5 short salt", "00000005 010203"},
		{"Authentication", "md5 long salt", "00000005 0102030405"},
		{"Authentication", "sasl unterminated", "0000000a 4100"},
		{"Authentication", "sasl no mechanisms", "0000000a 00"},
		{"Authentication", "sasl trailing", "0000000a 4100 00 ff"},
		{"BackendKeyData", "short", "00000001 000000"},
		{"BackendKeyData", "long", "00000001 00000002 00"},
		{"BackendKeyData/3.2", "no pid", "000000"},
		{"BackendKeyData/3.2", "key of 3 bytes", "00000001 000000"},
		{"BackendKeyData/3.2", "key of 257 bytes", "00000001 " + strings.Repeat("ab", 257)},
		{"BackendKeyData", "key of 32 bytes under 3.0", "00000001 " + strings.Repeat("ab", 32)},
		{"CommandComplete", "unterminated", "53454c454354"},
		{"CommandComplete", "trailing", "5300 00"},
		{"CopyResponse", "empty", ""},
		{"CopyResponse", "bad format", "02 0000"},
		{"CopyResponse", "negative count", "00 ffff"},
		{"CopyResponse", "count beyond body", "00 0003 0000 0000"},
		{"CopyResponse", "bad column format", "01 0001 0002"},
		{"CopyResponse", "trailing", "00 0000 00"},
		{"DataRow", "empty", ""},
		{"DataRow", "negative count", "ffff"},
		{"DataRow", "count beyond body", "0002 00000000"},
		{"DataRow", "length -2", "0001 fffffffe"},
		{"DataRow", "length MinInt32", "0001 80000000"},
		{"DataRow", "length beyond body", "0001 00000003 6162"},
		{"DataRow", "length MaxInt32", "0001 7fffffff 6162"},
		{"DataRow", "truncated length", "0001 0000"},
		{"DataRow", "trailing", "0001 ffffffff 00"},
		{"ErrorFields", "empty", ""},
		{"ErrorFields", "unterminated value", "4d 6162"},
		{"ErrorFields", "no terminator", "4d 6100"},
		{"ErrorFields", "trailing", "4d 6100 00 00"},
		{"FunctionCallResponse", "short", "000000"},
		{"FunctionCallResponse", "length -2", "fffffffe"},
		{"FunctionCallResponse", "NULL with data", "ffffffff 00"},
		{"FunctionCallResponse", "length beyond body", "00000003 6162"},
		{"FunctionCallResponse", "length short of body", "00000001 6162"},
		{"NegotiateProtocolVersion", "short", "00000000"},
		{"NegotiateProtocolVersion", "negative count", "00000000 ffffffff"},
		{"NegotiateProtocolVersion", "count beyond body", "00000000 00000002 6100"},
		{"NegotiateProtocolVersion", "trailing", "00000000 00000000 00"},
		{"NotificationResponse", "no payload", "00000001 636800"},
		{"NotificationResponse", "trailing", "00000001 6300 6400 00"},
		{"ParameterDescription", "count beyond body", "0002 00000017"},
		{"ParameterDescription", "trailing", "0000 00"},
		{"ParameterStatus", "one string", "6100"},
		{"ParameterStatus", "trailing", "6100 6200 63"},
		{"ReadyForQuery", "empty", ""},
		{"ReadyForQuery", "bad status", "58"},
		{"ReadyForQuery", "long", "4949"},
		{"RowDescription", "negative count", "ffff"},
		{"RowDescription", "count beyond body", "0002 6100 00000000 0000 00000000 0000 00000000 0000"},
		{"RowDescription", "unterminated name", "0001 616263"},
		{"RowDescription", "truncated field", "0001 6100 00000000 0000 00000000 0000 00000000 00"},
		{"RowDescription", "bad format", "0001 6100 00000000 0000 00000000 0000 00000000 0002"},
		{"RowDescription", "trailing", "0000 00"},
		{"StartupMessage", "short", "0003"},
		{"StartupMessage", "version 2", "00020000 00"},
		{"StartupMessage", "unterminated", "00030000 7500"},
		{"StartupMessage", "value missing", "00030000 7500 76"},
		{"StartupMessage", "trailing", "00030000 00 00"},
		{"StartupCode", "short", "04d216"},
		{"CancelRequest", "short", "04d2162e 00000001"},
		{"CancelRequest", "wrong code", "04d2162f 00000001 00000002"},
		{"CancelRequest", "key of 3 bytes", "04d2162e 00000001 000002"},
		{"CancelRequest", "key of 257 bytes", "04d2162e 00000001 " + strings.Repeat("ab", 257)},
		{"Password", "unterminated", "7077"},
		{"Password", "trailing", "7000 00"},
		{"SASLInitialResponse", "length -2", "4d00 fffffffe"},
		{"SASLInitialResponse", "length beyond body", "4d00 00000003 6162"},
		{"SASLInitialResponse", "no length", "4d00"},
		{"SASLInitialResponse", "trailing", "4d00 ffffffff 00"},
		{"Query", "unterminated", "53"},
		{"Query", "trailing", "5300 00"},
		{"Parse", "no query", "7300"},
		{"Parse", "count beyond body", "00 7100 0002 00000017"},
		{"Parse", "trailing", "00 7100 0000 00"},
		{"Bind", "empty", ""},
		{"Bind", "formats beyond body", "00 00 0003 0001"},
		{"Bind", "param length -2", "00 00 0000 0001 fffffffe 0000"},
		{"Bind", "param beyond body", "00 00 0000 0001 00000005 6162 0000"},
		{"Bind", "no result formats", "00 00 0000 0000"},
		{"Bind", "trailing", "00 00 0000 0000 0000 00"},
		{"Describe", "bad kind", "5800"},
		{"Describe", "unterminated", "5361"},
		{"Close", "empty", ""},
		{"Close", "trailing", "5000 00"},
		{"Execute", "short", "00 000000"},
		{"Execute", "trailing", "00 00000000 00"},
		{"CopyFail", "unterminated", "78"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.decoder] = true
		t.Run(tc.decoder+"/"+tc.name, func(t *testing.T) {
			err := decoders[tc.decoder](unhex(t, tc.hex))
			if !isProtocolError(err) {
				t.Fatalf("error %v, want *ProtocolError", err)
			}
		})
	}
	for name := range decoders {
		if !seen[name] {
			t.Errorf("no malformed-input case for %s", name)
		}
	}
}

func TestAuthenticationUnknownType(t *testing.T) {
	a, err := ParseAuthentication(unhex(t, "00000002 abcd"))
	if err != nil || a.Type != 2 || string(a.Data) != "\xab\xcd" {
		t.Fatalf("got %+v, %v", a, err)
	}
}

func TestErrorFieldsAllAndUnknown(t *testing.T) {
	want := ErrorFields{
		Severity: "ERROR", SeverityV: "ERROR", Code: "23505", Message: "dup", Detail: "d", Hint: "h",
		Position: "12", InternalPosition: "3", InternalQuery: "iq", Where: "w", Schema: "public",
		Table: "t", Column: "c", DataType: "dt", Constraint: "pk", File: "f.c", Line: "99", Routine: "r",
	}
	enc, err := AppendErrorFields(nil, MsgErrorResponse, want)
	if err != nil {
		t.Fatal(err)
	}
	body := enc[5:]
	// Insert an unknown field code before the terminator: it is ignored.
	body = append(body[:len(body)-1:len(body)-1], 'Z', 'z', 0, 0)
	got, err := ParseErrorFields(body)
	if err != nil || got != want {
		t.Fatalf("got %+v, %v\nwant %+v", got, err, want)
	}
}

func TestDataRowAccess(t *testing.T) {
	body := dataRowBody(t, []byte("a"), nil, []byte{}, []byte("dddd"))
	d, err := ParseDataRow(body)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumColumns() != 4 {
		t.Fatalf("NumColumns %d", d.NumColumns())
	}
	type col struct {
		v    string
		null bool
	}
	want := []col{{"a", false}, {"", true}, {"", false}, {"dddd", false}}
	for pass := range 2 {
		for i, w := range want {
			v, null, ok := d.Next()
			if !ok || string(v) != w.v || null != w.null {
				t.Fatalf("pass %d Next %d = %q %v %v", pass, i, v, null, ok)
			}
			if !null && v == nil {
				t.Fatalf("Next %d: non-NULL value is nil", i)
			}
			cv, cnull := d.Column(i)
			if string(cv) != w.v || cnull != w.null {
				t.Fatalf("Column %d = %q %v", i, cv, cnull)
			}
		}
		if _, _, ok := d.Next(); ok {
			t.Fatal("Next past the end returned ok")
		}
		d.Reset()
	}
	vals := d.Values(make([][]byte, 0, 8))
	if len(vals) != 4 || vals[1] != nil || vals[2] == nil || string(vals[3]) != "dddd" {
		t.Fatalf("Values = %q", vals)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Column(4) did not panic")
		}
	}()
	d.Column(4)
}

func TestParseRowDescriptionReusesDst(t *testing.T) {
	fields := []FieldDescription{{Name: "a", DataTypeOID: 23}, {Name: "b", DataTypeOID: 25, Format: 1}}
	enc, err := AppendRowDescription(nil, fields)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]FieldDescription, 5, 10)
	got, err := ParseRowDescription(enc[5:], dst)
	if err != nil || len(got) != 2 || &got[0] != &dst[0] || got[1] != fields[1] {
		t.Fatalf("got %+v, %v", got, err)
	}
}
