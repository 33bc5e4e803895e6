package wire

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// checkEncoder checks that encode appends golden after existing bytes and
// allocates nothing when dst has room.
func checkEncoder(t *testing.T, encode func(dst []byte) ([]byte, error), golden []byte) {
	t.Helper()
	prefix := []byte("prefix")
	got, err := encode(bytes.Clone(prefix))
	if err != nil {
		t.Fatalf("encode after prefix: %v", err)
	}
	if want := append(bytes.Clone(prefix), golden...); !bytes.Equal(got, want) {
		t.Fatalf("encode after prefix:\n%x\nwant\n%x", got, want)
	}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { _, _ = encode(buf[:0]) }); n != 0 {
		t.Errorf("encode allocates %v times per run with room in dst", n)
	}
}

// TestEncoderErrorsRestoreDst checks every failing encoder returns dst as it
// was on entry, with the expected error.
func TestEncoderErrorsRestoreDst(t *testing.T) {
	nul := "a\x00b"
	tooMany := make([]uint32, math.MaxUint16+1)
	tooManyParams := make([][]byte, math.MaxUint16+1)
	tests := []struct {
		name    string
		encode  func(dst []byte) ([]byte, error)
		wantErr error // nil: any error
	}{
		{"Startup/nul key", func(d []byte) ([]byte, error) { return AppendStartup(d, ProtocolVersion30, []string{nul, "v"}) }, ErrNulInString},
		{"Startup/nul value", func(d []byte) ([]byte, error) { return AppendStartup(d, ProtocolVersion30, []string{"user", nul}) }, ErrNulInString},
		{"Startup/odd", func(d []byte) ([]byte, error) { return AppendStartup(d, ProtocolVersion30, []string{"user"}) }, nil},
		{"Startup/empty key", func(d []byte) ([]byte, error) { return AppendStartup(d, ProtocolVersion30, []string{"", "v"}) }, nil},
		{"Password", func(d []byte) ([]byte, error) { return AppendPassword(d, nul) }, ErrNulInString},
		{"SASLInitialResponse", func(d []byte) ([]byte, error) { return AppendSASLInitialResponse(d, nul, nil) }, ErrNulInString},
		{"Query", func(d []byte) ([]byte, error) { return AppendQuery(d, nul) }, ErrNulInString},
		{"Parse/name", func(d []byte) ([]byte, error) { return AppendParse(d, nul, "q", nil) }, ErrNulInString},
		{"Parse/sql", func(d []byte) ([]byte, error) { return AppendParse(d, "", nul, nil) }, ErrNulInString},
		{"Parse/too many", func(d []byte) ([]byte, error) { return AppendParse(d, "", "q", tooMany) }, ErrMessageTooLong},
		{"Bind/portal", func(d []byte) ([]byte, error) { return AppendBind(d, nul, "", nil, nil, nil) }, ErrNulInString},
		{"Bind/stmt", func(d []byte) ([]byte, error) { return AppendBind(d, "", nul, nil, nil, nil) }, ErrNulInString},
		{"Bind/formats", func(d []byte) ([]byte, error) {
			return AppendBind(d, "", "", []int16{0, 1}, [][]byte{nil, nil, nil}, nil)
		}, nil},
		{"Bind/too many", func(d []byte) ([]byte, error) { return AppendBind(d, "", "", nil, tooManyParams, nil) }, ErrMessageTooLong},
		{"Bind/too many results", func(d []byte) ([]byte, error) {
			return AppendBind(d, "", "", nil, nil, make([]int16, math.MaxUint16+1))
		}, ErrMessageTooLong},
		{"Describe/kind", func(d []byte) ([]byte, error) { return AppendDescribe(d, 'X', "") }, nil},
		{"Describe/nul", func(d []byte) ([]byte, error) { return AppendDescribe(d, 'S', nul) }, ErrNulInString},
		{"Close/kind", func(d []byte) ([]byte, error) { return AppendClose(d, 0, "") }, nil},
		{"Close/nul", func(d []byte) ([]byte, error) { return AppendClose(d, 'P', nul) }, ErrNulInString},
		{"Execute/nul", func(d []byte) ([]byte, error) { return AppendExecute(d, nul, 0) }, ErrNulInString},
		{"Execute/maxRows", func(d []byte) ([]byte, error) { return AppendExecute(d, "", math.MaxInt32+1) }, nil},
		{"CopyFail", func(d []byte) ([]byte, error) { return AppendCopyFail(d, nul) }, ErrNulInString},
		{"Authentication/no mechanisms", func(d []byte) ([]byte, error) {
			return AppendAuthentication(d, Authentication{Type: AuthSASL})
		}, nil},
		{"Authentication/nul", func(d []byte) ([]byte, error) {
			return AppendAuthentication(d, Authentication{Type: AuthSASL, Mechanisms: []string{nul}})
		}, ErrNulInString},
		{"CommandComplete", func(d []byte) ([]byte, error) { return AppendCommandComplete(d, nul) }, ErrNulInString},
		{"CopyResponse/type", func(d []byte) ([]byte, error) { return AppendCopyResponse(d, 'Q', CopyResponse{}) }, nil},
		{"DataRow/too many", func(d []byte) ([]byte, error) { return AppendDataRow(d, make([][]byte, 1<<15)) }, ErrMessageTooLong},
		{"ErrorFields/nul", func(d []byte) ([]byte, error) {
			return AppendErrorFields(d, MsgErrorResponse, ErrorFields{Detail: nul})
		}, ErrNulInString},
		{"ErrorFields/type", func(d []byte) ([]byte, error) { return AppendErrorFields(d, 'Q', ErrorFields{}) }, nil},
		{"NegotiateProtocolVersion", func(d []byte) ([]byte, error) {
			return AppendNegotiateProtocolVersion(d, NegotiateProtocolVersion{Unrecognized: []string{nul}})
		}, ErrNulInString},
		{"NotificationResponse", func(d []byte) ([]byte, error) {
			return AppendNotificationResponse(d, NotificationResponse{Payload: nul})
		}, ErrNulInString},
		{"ParameterDescription", func(d []byte) ([]byte, error) {
			return AppendParameterDescription(d, ParameterDescription{OIDs: tooMany})
		}, ErrMessageTooLong},
		{"ParameterStatus", func(d []byte) ([]byte, error) {
			return AppendParameterStatus(d, ParameterStatus{Name: "a", Value: nul})
		}, ErrNulInString},
		{"RowDescription", func(d []byte) ([]byte, error) {
			return AppendRowDescription(d, []FieldDescription{{Name: "a"}, {Name: nul}})
		}, ErrNulInString},
		{"Empty/type", func(d []byte) ([]byte, error) { return AppendEmpty(d, MsgReadyForQuery) }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]byte, 3, 64)
			copy(dst, "abc")
			got, err := tc.encode(dst)
			if err == nil {
				t.Fatalf("no error; encoded %x", got)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if string(got) != "abc" {
				t.Fatalf("dst after error = %q, want %q", got, "abc")
			}
		})
	}
}

func TestFinishMessageTooLong(t *testing.T) {
	dst, start := BeginMessage([]byte("abc"), MsgCopyData)
	dst, err := finishLimited(append(dst, "0123456789"...), start, 14)
	if err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	if want := "abcd\x00\x00\x00\x0e0123456789"; string(dst) != want {
		t.Fatalf("got %q, want %q", dst, want)
	}
	dst, start = BeginMessage([]byte("abc"), MsgCopyData)
	dst, err = finishLimited(append(dst, "0123456789"...), start, 13)
	if !errors.Is(err, ErrMessageTooLong) || string(dst) != "abc" {
		t.Fatalf("over the limit: %q, %v; want \"abc\", ErrMessageTooLong", dst, err)
	}
}

func TestAppendCString(t *testing.T) {
	got, err := AppendCString([]byte("x"), "héllo")
	if err != nil || string(got) != "xhéllo\x00" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := AppendCString(nil, strings.Repeat("a", 10)+"\x00"); !errors.Is(err, ErrNulInString) {
		t.Fatalf("NUL at end: %v", err)
	}
}

// TestBindInPlace builds a Bind with the building blocks and checks it equals
// AppendBind's output.
func TestBindInPlace(t *testing.T) {
	want, err := AppendBind(nil, "p", "s", []int16{1}, [][]byte{{0, 0, 0, 7}, nil}, []int16{1})
	if err != nil {
		t.Fatal(err)
	}
	dst, start := BeginMessage(nil, MsgBind)
	dst, _ = AppendCString(dst, "p")
	dst, _ = AppendCString(dst, "s")
	dst = AppendInt16(AppendInt16(dst, 1), 1)
	dst = AppendInt16(dst, 2)
	dst = AppendUint32(AppendInt32(dst, 4), 7)
	dst = AppendInt32(dst, -1)
	dst = AppendInt16(AppendInt16(dst, 1), 1)
	got, err := FinishMessage(dst, start)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("in place:\n%x, %v\nAppendBind:\n%x", got, err, want)
	}
}
