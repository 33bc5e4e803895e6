package wire

import (
	"bytes"
	"errors"
	"testing"
)

// TestFrameCopyDataGolden frames payloads built in place behind a reserved
// header, whatever the header held before, and checks the bytes against
// golden ones and against AppendCopyData.
func TestFrameCopyDataGolden(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		golden  string
	}{
		{"payload", "ab", "64 00000006 6162"},
		{"empty", "", "64 00000004"},
		{"binary COPY header", CopyBinaryHeader, "64 00000017 5047434f50590aff0d0a00 00000000 00000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			golden := unhex(t, tc.golden)
			for _, reserved := range []string{"\x00\x00\x00\x00\x00", "stale"} {
				msg := append([]byte(reserved), tc.payload...)
				if err := FrameCopyData(msg); err != nil {
					t.Fatalf("FrameCopyData: %v", err)
				}
				if !bytes.Equal(msg, golden) {
					t.Fatalf("framed\n%x\nwant\n%x", msg, golden)
				}
			}
			if app, err := AppendCopyData(nil, []byte(tc.payload)); err != nil || !bytes.Equal(app, golden) {
				t.Fatalf("AppendCopyData gives %x, %v", app, err)
			}
			typ, body, err := ReadFrontendMessage(bytes.NewReader(golden), false)
			if err != nil || typ != MsgCopyData || string(body) != tc.payload {
				t.Fatalf("ReadFrontendMessage = %q, %q, %v", typ, body, err)
			}
		})
	}
}

// TestFrameCopyDataReuse sends message after message from one buffer, as
// COPY FROM does, and checks that framing allocates nothing.
func TestFrameCopyDataReuse(t *testing.T) {
	buf := make([]byte, CopyDataHeaderSize, 64)
	var stream []byte
	for _, p := range []string{"first", "2", ""} {
		buf = append(buf[:CopyDataHeaderSize], p...)
		if err := FrameCopyData(buf); err != nil {
			t.Fatal(err)
		}
		stream = append(stream, buf...)
	}
	if want := unhex(t, "64 00000009 6669727374 64 00000005 32 64 00000004"); !bytes.Equal(stream, want) {
		t.Fatalf("stream\n%x\nwant\n%x", stream, want)
	}
	if n := testing.AllocsPerRun(100, func() { _ = FrameCopyData(buf) }); n != 0 {
		t.Errorf("FrameCopyData allocates %v times per run", n)
	}
}

func TestFrameCopyDataErrors(t *testing.T) {
	msg := []byte("stale" + "abcdef")
	if err := frameCopyDataLimited(msg, 9); !errors.Is(err, ErrMessageTooLong) {
		t.Fatalf("error %v, want ErrMessageTooLong", err)
	}
	if string(msg) != "staleabcdef" {
		t.Fatalf("msg %q changed by a failed FrameCopyData", msg)
	}
	if err := frameCopyDataLimited(msg, 10); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a message shorter than its header")
		}
	}()
	short := []byte("abcd")
	_ = FrameCopyData(short)
}

// TestCopyBinaryGolden checks the binary COPY header and trailer bytes and
// a whole one-row stream built with them.
func TestCopyBinaryGolden(t *testing.T) {
	tests := []struct {
		name   string
		encode func(dst []byte) ([]byte, error)
		golden string
	}{
		{"header", func(d []byte) ([]byte, error) { return AppendCopyBinaryHeader(d), nil },
			"5047434f50590aff0d0a00 00000000 00000000"},
		{"trailer", func(d []byte) ([]byte, error) { return AppendCopyBinaryTrailer(d), nil }, "ffff"},
		{"stream", func(d []byte) ([]byte, error) {
			d = AppendCopyBinaryHeader(d)
			d = append(d, 0, 2, 0, 0, 0, 4, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff) // (int4 7, NULL)
			return AppendCopyBinaryTrailer(d), nil
		}, "5047434f50590aff0d0a00 00000000 00000000 0002 00000004 00000007 ffffffff ffff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			golden := unhex(t, tc.golden)
			got, _ := tc.encode(nil)
			if !bytes.Equal(got, golden) {
				t.Fatalf("encoded\n%x\nwant\n%x", got, golden)
			}
			checkEncoder(t, tc.encode, golden)
		})
	}
}
