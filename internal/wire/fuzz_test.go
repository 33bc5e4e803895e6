package wire

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// decodeBackend decodes body with the decoder for backend message type typ.
func decodeBackend(typ byte, body []byte) (any, error) {
	switch typ {
	case MsgAuthentication:
		return ParseAuthentication(body)
	case MsgBackendKeyData:
		return ParseBackendKeyData(body, ProtocolVersion32)
	case MsgCommandComplete:
		return ParseCommandComplete(body)
	case MsgCopyInResponse, MsgCopyOutResponse, MsgCopyBothResponse:
		return ParseCopyResponse(body)
	case MsgDataRow:
		d, err := ParseDataRow(body)
		if err != nil {
			return nil, err
		}
		return d.Values(nil), nil
	case MsgErrorResponse, MsgNoticeResponse:
		return ParseErrorFields(body)
	case MsgFunctionCallResponse:
		return ParseFunctionCallResponse(body)
	case MsgNegotiateProtocolVersion:
		return ParseNegotiateProtocolVersion(body)
	case MsgNotificationResponse:
		return ParseNotificationResponse(body)
	case MsgParameterDescription:
		return ParseParameterDescription(body)
	case MsgParameterStatus:
		return ParseParameterStatus(body)
	case MsgReadyForQuery:
		return ParseReadyForQuery(body)
	case MsgRowDescription:
		return ParseRowDescription(body, nil)
	}
	return body, nil
}

// decodeFrontend decodes body with the decoder for frontend message type typ
// (0: a startup-phase message).
func decodeFrontend(typ byte, body []byte) (any, error) {
	switch typ {
	case 0:
		code, err := StartupCode(body)
		if err != nil {
			return nil, err
		}
		if code == CancelRequestCode {
			return ParseCancelRequest(body)
		}
		return ParseStartupMessage(body)
	case MsgBind:
		return ParseBind(body)
	case MsgClose:
		return ParseClose(body)
	case MsgCopyFail:
		return ParseCopyFail(body)
	case MsgDescribe:
		return ParseDescribe(body)
	case MsgExecute:
		return ParseExecute(body)
	case MsgParse:
		return ParseParse(body)
	case MsgPassword:
		if _, err := ParsePassword(body); err == nil {
			return nil, nil
		}
		return ParseSASLInitialResponse(body)
	case MsgQuery:
		return ParseQuery(body)
	}
	return body, nil
}

// addBackendSeeds adds every backend golden message and malformed variants.
func addBackendSeeds(f *testing.F) {
	for _, tc := range backendGolden {
		g := unhex(f, tc.golden)
		f.Add(g[0], g[5:])
	}
	for _, h := range []string{
		"0001 ffffffff", "0001 fffffffe", "0002 ffffffff 7fffffff", "0001 00000010 61",
		"0001 80000000", "ffff", "0000", "",
	} {
		f.Add(byte(MsgDataRow), unhex(f, h))
	}
	f.Add(byte(MsgFunctionCallResponse), unhex(f, "fffffffe"))
	f.Add(byte(MsgFunctionCallResponse), unhex(f, "00000010 61"))
	f.Add(byte(MsgRowDescription), unhex(f, "ffff"))
	f.Add(byte(MsgRowDescription), unhex(f, "7fff 6100"))
	f.Add(byte(MsgNegotiateProtocolVersion), unhex(f, "00000000 ffffffff"))
	f.Add(byte(MsgParameterDescription), unhex(f, "ffff 00000017"))
	f.Add(byte(MsgAuthentication), unhex(f, "0000000a 4100"))
}

func FuzzBackendDecoders(f *testing.F) {
	addBackendSeeds(f)
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		if _, err := decodeBackend(typ, body); err != nil && !isProtocolError(err) {
			t.Fatalf("%q: error %v is not a *ProtocolError", typ, err)
		}
	})
}

// FuzzDataRow checks that a row that parses re-encodes to the same bytes,
// that Next, Column and Values agree, and that a walk of the unchecked
// row (SplitDataRow) with NextChecked and Finish fails where ParseDataRow
// does, with the same error, and otherwise returns the same values.
func FuzzDataRow(f *testing.F) {
	addBackendSeeds(f)
	f.Fuzz(func(t *testing.T, _ byte, body []byte) {
		d, err := ParseDataRow(body)
		walked, walkErr := walkChecked(body)
		if (err == nil) != (walkErr == nil) || err != nil && err.Error() != walkErr.Error() {
			t.Fatalf("ParseDataRow: %v; SplitDataRow and NextChecked: %v", err, walkErr)
		}
		if err != nil {
			if !isProtocolError(err) {
				t.Fatalf("error %v is not a *ProtocolError", err)
			}
			return
		}
		if want := d.Values(nil); len(walked) != len(want) {
			t.Fatalf("NextChecked: %d columns, Values %d", len(walked), len(want))
		} else {
			for i := range want {
				if (walked[i] == nil) != (want[i] == nil) || !bytes.Equal(walked[i], want[i]) {
					t.Fatalf("column %d: NextChecked %q, Values %q", i, walked[i], want[i])
				}
			}
		}
		vals := d.Values(nil)
		if len(vals) != d.NumColumns() {
			t.Fatalf("%d values for %d columns", len(vals), d.NumColumns())
		}
		for i, want := range vals {
			v, null, ok := d.Next()
			cv, cnull := d.Column(i)
			if !ok || null != (want == nil) || cnull != null || !bytes.Equal(v, want) || !bytes.Equal(cv, want) {
				t.Fatalf("column %d: Next %q %v %v, Column %q %v, Values %q", i, v, null, ok, cv, cnull, want)
			}
		}
		if _, _, ok := d.Next(); ok {
			t.Fatal("Next past the end")
		}
		// Column in any order: backwards, then every other one.
		for i := len(vals) - 1; i >= 0; i-- {
			if cv, cnull := d.Column(i); cnull != (vals[i] == nil) || !bytes.Equal(cv, vals[i]) {
				t.Fatalf("backwards, column %d: %q %v, want %q", i, cv, cnull, vals[i])
			}
		}
		for i := 0; i < len(vals); i += 2 {
			if cv, _ := d.Column(i); !bytes.Equal(cv, vals[i]) {
				t.Fatalf("column %d: %q, want %q", i, cv, vals[i])
			}
		}
		enc, err := AppendDataRow(nil, vals)
		if err != nil || !bytes.Equal(enc[5:], body) {
			t.Fatalf("re-encoded %x, %v; want %x", enc, err, body)
		}
	})
}

// walkChecked walks body's unchecked row with NextChecked and Finish, as
// Rows.Scan does, and returns its values (nil for NULL, non-nil when
// empty), or Check's error where the walk stopped; a finished walk must
// leave the row checked.
func walkChecked(body []byte) ([][]byte, error) {
	d, err := SplitDataRow(body)
	if err != nil {
		return nil, err
	}
	var vals [][]byte
	for range d.NumColumns() {
		v, null, ok := d.NextChecked()
		if !ok {
			if err := d.Check(); err != nil {
				return nil, err
			}
			return nil, errors.New("NextChecked failed on a well-formed row")
		}
		if !null && v == nil {
			v = []byte{}
		}
		vals = append(vals, v)
	}
	if !d.Finish() {
		if err := d.Check(); err != nil {
			return nil, err
		}
		return nil, errors.New("Finish failed on a well-formed row")
	}
	if !d.Checked() {
		return nil, errors.New("finished, but the row is not checked")
	}
	return vals, nil
}

// FuzzCancelKey checks the cancel key's parsers: a BackendKeyData parses
// under 3.2 when its key is 4 to 256 bytes, under 3.0 when it is 4, and
// then its key, sent back in a CancelRequest, is the same bytes, which
// ParseCancelRequest reads back whole.
func FuzzCancelKey(f *testing.F) {
	addBackendSeeds(f)
	f.Add(byte(MsgBackendKeyData), unhex(f, "00000001 000000"))
	f.Add(byte(MsgBackendKeyData), append(unhex(f, "00000001"), make([]byte, MaxCancelKeyLen)...))
	f.Add(byte(MsgBackendKeyData), append(unhex(f, "00000001"), make([]byte, MaxCancelKeyLen+1)...))
	f.Fuzz(func(t *testing.T, _ byte, body []byte) {
		for _, version := range []uint32{ProtocolVersion30, ProtocolVersion32} {
			k, err := ParseBackendKeyData(body, version)
			n := len(body) - 4
			ok := n == MinCancelKeyLen || version == ProtocolVersion32 && n >= MinCancelKeyLen && n <= MaxCancelKeyLen
			if (err == nil) != ok {
				t.Fatalf("version %#x, key of %d bytes: error %v, want ok %v", version, n, err, ok)
			}
			if err != nil {
				if !isProtocolError(err) {
					t.Fatalf("error %v is not a *ProtocolError", err)
				}
				continue
			}
			if enc := AppendBackendKeyData(nil, k); !bytes.Equal(enc[5:], body) {
				t.Fatalf("re-encoded %x, want %x", enc[5:], body)
			}
			cr := AppendCancelRequest(nil, k.ProcessID, k.SecretKey)
			if len(cr) != 12+n {
				t.Fatalf("CancelRequest of %d bytes for a key of %d", len(cr), n)
			}
			typ, rb, err := ReadFrontendMessage(bytes.NewReader(cr), true)
			if err != nil || typ != 0 {
				t.Fatal(typ, err)
			}
			back, err := ParseCancelRequest(rb)
			if err != nil || back.ProcessID != k.ProcessID || !bytes.Equal(back.SecretKey, k.SecretKey) {
				t.Fatalf("CancelRequest read back as %+v, %v; want %+v", back, err, k)
			}
			own := bytes.Clone(body) // the key is a copy: changing the body leaves it
			k2, _ := ParseBackendKeyData(own, version)
			own[4] ^= 0xff
			if !bytes.Equal(k2.SecretKey, k.SecretKey) {
				t.Fatal("the key aliases the message body")
			}
		}
	})
}

// FuzzRowDescription checks that a description that parses re-encodes to the
// same bytes, and that CheckRowDescription agrees with the parse.
func FuzzRowDescription(f *testing.F) {
	addBackendSeeds(f)
	f.Fuzz(func(t *testing.T, _ byte, body []byte) {
		fields, err := ParseRowDescription(body, nil)
		if n, cerr := CheckRowDescription(body); (cerr == nil) != (err == nil) || err == nil && n != len(fields) {
			t.Fatalf("CheckRowDescription: %d, %v; ParseRowDescription: %d fields, %v", n, cerr, len(fields), err)
		}
		if err != nil {
			if !isProtocolError(err) {
				t.Fatalf("error %v is not a *ProtocolError", err)
			}
			return
		}
		enc, err := AppendRowDescription(nil, fields)
		if err != nil || !bytes.Equal(enc[5:], body) {
			t.Fatalf("re-encoded %x, %v; want %x", enc, err, body)
		}
	})
}

// FuzzErrorFields checks that fields that parse survive an encode/decode
// round trip.
func FuzzErrorFields(f *testing.F) {
	addBackendSeeds(f)
	f.Fuzz(func(t *testing.T, _ byte, body []byte) {
		ef, err := ParseErrorFields(body)
		if err != nil {
			if !isProtocolError(err) {
				t.Fatalf("error %v is not a *ProtocolError", err)
			}
			return
		}
		enc, err := AppendErrorFields(nil, MsgErrorResponse, ef)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseErrorFields(enc[5:])
		if err != nil || back != ef {
			t.Fatalf("round trip %+v, %v; want %+v", back, err, ef)
		}
	})
}

func FuzzFrontendDecoders(f *testing.F) {
	for _, tc := range frontendGolden {
		g := unhex(f, tc.golden)
		if tc.startup {
			f.Add(byte(0), g[4:])
		} else {
			f.Add(g[0], g[5:])
		}
	}
	f.Add(byte(MsgBind), unhex(f, "00 00 0000 0001 fffffffe 0000"))
	f.Add(byte(MsgBind), unhex(f, "00 00 0000 0002 ffffffff 00000010 0000"))
	f.Add(byte(MsgBind), unhex(f, "00 00 ffff 0000"))
	f.Add(byte(MsgPassword), unhex(f, "4d00 fffffffe"))
	f.Add(byte(MsgPassword), unhex(f, "4d00 00000010 61"))
	f.Fuzz(func(t *testing.T, typ byte, body []byte) {
		v, err := decodeFrontend(typ, body)
		if err != nil && !isProtocolError(err) {
			t.Fatalf("%q: error %v is not a *ProtocolError", typ, err)
		}
		// A Bind that decodes re-encodes to the same bytes.
		if b, ok := v.(Bind); ok && err == nil && (len(b.ParamFormats) <= 1 || len(b.ParamFormats) == len(b.Params)) {
			enc, err := AppendBind(nil, b.Portal, b.Statement, b.ParamFormats, b.Params, b.ResultFormats)
			if err != nil && err != ErrNulInString {
				t.Fatal(err)
			}
			if err == nil && !bytes.Equal(enc[5:], body) {
				t.Fatalf("Bind re-encoded %x, want %x", enc[5:], body)
			}
		}
	})
}

// FuzzReader feeds arbitrary bytes through Next, or through NextHeader and
// the streaming calls, until an error, with a small buffer so that large
// messages take the slow paths.
func FuzzReader(f *testing.F) {
	for _, tc := range backendGolden {
		f.Add(unhex(f, tc.golden), false)
	}
	var all []byte
	for _, tc := range backendGolden {
		all = append(all, unhex(f, tc.golden)...)
	}
	f.Add(all, false)
	f.Add(all, true)
	f.Add(frame(msg{MsgCopyData, bytes.Repeat([]byte("x"), 100)}), true)
	f.Add(unhex(f, "44 00000003"), false)
	f.Add(unhex(f, "44 80000000"), false)
	f.Add(unhex(f, "44 7fffffff"), false)
	f.Add(unhex(f, "44 00000100 0001"), true)
	f.Add(unhex(f, "44 0000000a 0001 ffffffff"), false)
	f.Add(unhex(f, "44 0000000a 0001 fffffffe"), false)
	f.Fuzz(func(t *testing.T, data []byte, stream bool) {
		r := NewReader(bytes.NewReader(data), 16, 1<<16)
		for range len(data) + 1 {
			var err error
			if stream {
				var n int
				if _, n, err = r.NextHeader(); err == nil {
					half := make([]byte, n/2)
					if err = r.ReadFull(half); err == nil {
						if err = r.Discard(n / 4); err == nil {
							var rest []byte
							rest, err = r.Body()
							if err == nil && len(rest) != n-n/2-n/4 {
								t.Fatalf("Body returned %d bytes, want %d", len(rest), n-n/2-n/4)
							}
						}
					}
				}
			} else {
				var typ byte
				var body []byte
				if len(data)%2 == 0 {
					typ, body, err = r.Next()
				} else {
					// Big DataRow and CopyData come back skipped (nil).
					typ, body, err = r.NextDiscarding()
					if err == nil && body == nil && typ != MsgDataRow && typ != MsgCopyData {
						t.Fatalf("NextDiscarding skipped a %s message", typeName(typ))
					}
				}
				if err == nil && body != nil {
					if _, derr := decodeBackend(typ, body); derr != nil && !isProtocolError(derr) {
						t.Fatalf("decoder error %v is not a *ProtocolError", derr)
					}
				}
			}
			if err != nil {
				if err != io.EOF && !isProtocolError(err) {
					t.Fatalf("error %v is neither io.EOF nor a *ProtocolError", err)
				}
				return
			}
			if len(r.buf) != 16 {
				t.Fatalf("buffer size changed to %d", len(r.buf))
			}
			seen := 0 // each header seen takes at least 5 buffered bytes
			r.BufferedTypes(func(byte) bool { seen++; return true })
			if seen > r.Buffered()/5 {
				t.Fatalf("BufferedTypes saw %d headers in %d buffered bytes", seen, r.Buffered())
			}
		}
		t.Fatal("more messages than bytes")
	})
}

func FuzzReadFrontendMessage(f *testing.F) {
	for _, tc := range frontendGolden {
		f.Add(unhex(f, tc.golden), tc.startup)
	}
	f.Add(unhex(f, "51 80000000"), false)
	f.Add(unhex(f, "ffffffff"), true)
	f.Fuzz(func(t *testing.T, data []byte, startup bool) {
		typ, body, err := ReadFrontendMessage(bytes.NewReader(data), startup)
		if err != nil {
			if err != io.EOF && !isProtocolError(err) {
				t.Fatalf("error %v is neither io.EOF nor a *ProtocolError", err)
			}
			return
		}
		if v, err := decodeFrontend(typ, body); err != nil && !isProtocolError(err) {
			t.Fatalf("decoder error %v (%v) is not a *ProtocolError", err, reflect.TypeOf(v))
		}
	})
}
