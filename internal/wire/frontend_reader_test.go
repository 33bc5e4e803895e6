package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestReadFrontendMessageSequence(t *testing.T) {
	var b []byte
	b, _ = AppendStartup(b, ProtocolVersion30, []string{"user", "u"})
	b, _ = AppendParse(b, "", "SELECT $1", []uint32{23})
	b, _ = AppendBind(b, "", "", nil, [][]byte{[]byte("1")}, nil)
	b, _ = AppendExecute(b, "", 0)
	b = AppendSync(b)
	big := bytes.Repeat([]byte("c"), 100<<10)
	b, _ = AppendCopyData(b, big)
	r := iotest.OneByteReader(bytes.NewReader(b))
	typ, body, err := ReadFrontendMessage(r, true)
	if err != nil || typ != 0 {
		t.Fatalf("startup: %q %v", typ, err)
	}
	if m, err := ParseStartupMessage(body); err != nil || m.Params[1] != "u" {
		t.Fatalf("startup: %+v %v", m, err)
	}
	for _, want := range []byte{MsgParse, MsgBind, MsgExecute, MsgSync} {
		if typ, _, err := ReadFrontendMessage(r, false); err != nil || typ != want {
			t.Fatalf("got %q %v, want %q", typ, err, want)
		}
	}
	if typ, body, err := ReadFrontendMessage(r, false); err != nil || typ != MsgCopyData || !bytes.Equal(body, big) {
		t.Fatalf("CopyData: %q %v", typ, err)
	}
	if _, _, err := ReadFrontendMessage(r, false); err != io.EOF {
		t.Fatalf("at end: %v, want io.EOF", err)
	}
}

func TestReadFrontendMessageBad(t *testing.T) {
	tests := []struct {
		name    string
		startup bool
		hex     string
		eof     bool // want io.ErrUnexpectedEOF
	}{
		{"startup length 7", true, "00000007 00030000", false},
		{"startup too long", true, "00002711 00030000", false},
		{"startup negative", true, "ffffffff", false},
		{"startup truncated header", true, "0000", true},
		{"startup truncated body", true, "00000010 00030000", true},
		{"unknown type", false, "5a 00000004", false},
		{"length 3", false, "51 00000003", false},
		{"length negative", false, "51 80000000", false},
		{"Sync with body", false, "53 00000005 00", false},
		{"Describe over cap", false, "44 00100005", false},
		{"Query over cap", false, "51 40000005", false},
		{"truncated header", false, "51 0000", true},
		{"truncated body", false, "51 00000010 5300", true},
		{"truncated big body", false, "64 00100000 00", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadFrontendMessage(bytes.NewReader(unhex(t, tc.hex)), tc.startup)
			if !isProtocolError(err) {
				t.Fatalf("error %v, want *ProtocolError", err)
			}
			if tc.eof != errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("error %v: wraps io.ErrUnexpectedEOF = %v, want %v", err, !tc.eof, tc.eof)
			}
		})
	}
}
