package wire

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
)

// bindParam is one parameter given to buildBind: value appended after
// BeginParam then FinishParam(format, null), or, when deferred is set,
// DeferParam(format, deferred) with nothing appended.
type bindParam struct {
	value    []byte
	format   int16
	null     bool
	deferred int64
}

// buildBind builds a Bind with a BindBuilder, as a caller encoding values
// in place does.
func buildBind(dst []byte, portal, stmt string, params []bindParam, resultFormats []int16) ([]byte, error) {
	var b BindBuilder
	dst, err := b.Begin(dst, portal, stmt, len(params))
	if err != nil {
		return dst, err
	}
	for _, p := range params {
		dst = b.BeginParam(dst)
		if p.deferred != 0 {
			if dst, err = b.DeferParam(dst, p.format, p.deferred); err != nil {
				return dst, err
			}
			continue
		}
		dst = append(dst, p.value...)
		if dst, err = b.FinishParam(dst, p.format, p.null); err != nil {
			return dst, err
		}
	}
	return b.Finish(dst, resultFormats)
}

// bindGolden: a Bind built in place, its golden bytes, and the Bind they
// decode to. A deferred value's bytes are not in the golden bytes (the
// length field counts them); splice says where they go and what they are.
var bindGolden = []struct {
	name          string
	portal, stmt  string
	params        []bindParam
	resultFormats []int16
	golden        string
	splice        int    // offset of the deferred bytes in golden, when set
	spliced       string // the deferred bytes
	want          Bind
}{
	{
		name: "formats per parameter",
		stmt: "s",
		params: []bindParam{
			{value: []byte("ab"), format: 1},
			{value: []byte("dropped"), format: 1, null: true}, // NULL: format stays 0
			{value: []byte{}, format: 0},
		},
		resultFormats: []int16{1, 0},
		golden:        "42 00000025 00 7300 0003 0001 0000 0000 0003 00000002 6162 ffffffff 00000000 0002 0001 0000",
		want: Bind{Statement: "s", ParamFormats: []int16{1, 0, 0}, Params: [][]byte{[]byte("ab"), nil, {}},
			ResultFormats: []int16{1, 0}},
	},
	{
		name:   "no parameters",
		portal: "p",
		golden: "42 0000000d 7000 00 0000 0000 0000",
		want:   Bind{Portal: "p"},
	},
	{
		name: "deferred value",
		stmt: "pgline_1",
		params: []bindParam{
			{value: []byte{0, 0, 0, 7}, format: 1},
			{format: 1, deferred: 3},
			{value: []byte("z")},
		},
		resultFormats: []int16{1},
		// The length, 0x30, counts the 3 deferred bytes written at offset 37.
		golden:  "42 00000030 00 70676c696e655f3100 0003 0001 0001 0000 0003 00000004 00000007 00000003 00000001 7a 0001 0001",
		splice:  37,
		spliced: "abc",
		want: Bind{Statement: "pgline_1", ParamFormats: []int16{1, 1, 0},
			Params: [][]byte{{0, 0, 0, 7}, []byte("abc"), []byte("z")}, ResultFormats: []int16{1}},
	},
}

func TestBindBuilderGolden(t *testing.T) {
	for _, tc := range bindGolden {
		t.Run(tc.name, func(t *testing.T) {
			golden := unhex(t, tc.golden)
			encode := func(dst []byte) ([]byte, error) {
				return buildBind(dst, tc.portal, tc.stmt, tc.params, tc.resultFormats)
			}
			got, err := encode(nil)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.Equal(got, golden) {
				t.Fatalf("encoded\n%x\nwant\n%x", got, golden)
			}
			checkEncoder(t, encode, golden)

			whole := golden
			if tc.spliced != "" {
				whole = append(append(append([]byte(nil), golden[:tc.splice]...), tc.spliced...), golden[tc.splice:]...)
			}
			typ, body, err := ReadFrontendMessage(bytes.NewReader(whole), false)
			if err != nil || typ != MsgBind {
				t.Fatalf("ReadFrontendMessage = %q, %v", typ, err)
			}
			b, err := ParseBind(body)
			if err != nil {
				t.Fatalf("ParseBind: %v", err)
			}
			if !reflect.DeepEqual(b, tc.want) {
				t.Fatalf("decoded %#v\nwant %#v", b, tc.want)
			}
			// The same Bind from AppendBind, with the values in hand.
			again, err := AppendBind(nil, b.Portal, b.Statement, b.ParamFormats, b.Params, b.ResultFormats)
			if err != nil || !bytes.Equal(again, whole) {
				t.Fatalf("AppendBind gives\n%x, %v\nwant\n%x", again, err, whole)
			}
		})
	}
}

// TestBindBuilderErrors checks that every failure removes the message,
// leaving dst as it was before Begin.
func TestBindBuilderErrors(t *testing.T) {
	nul := "a\x00b"
	one := []bindParam{{value: []byte("x")}}
	tests := []struct {
		name    string
		build   func(dst []byte) ([]byte, error)
		wantErr error // nil: any error
	}{
		{"portal with NUL", func(d []byte) ([]byte, error) { return buildBind(d, nul, "", nil, nil) }, ErrNulInString},
		{"statement with NUL", func(d []byte) ([]byte, error) { return buildBind(d, "", nul, nil, nil) }, ErrNulInString},
		{"too many parameters", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, err := b.Begin(d, "", "", math.MaxUint16+1)
			return d, err
		}, ErrMessageTooLong},
		{"negative parameter count", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, err := b.Begin(d, "", "", -1)
			return d, err
		}, ErrMessageTooLong},
		{"too many result formats", func(d []byte) ([]byte, error) {
			return buildBind(d, "", "", one, make([]int16, math.MaxUint16+1))
		}, ErrMessageTooLong},
		{"parameters beyond the count", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, _ = b.Begin(d, "", "", 1)
			for range 3 {
				d = b.BeginParam(d)
				d = append(d, 1)
				d, _ = b.FinishParam(d, 1, false)
			}
			return b.Finish(d, nil)
		}, nil},
		{"deferred parameter beyond the count", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, _ = b.Begin(d, "", "", 0)
			d = b.BeginParam(d)
			d, _ = b.DeferParam(d, 1, 1)
			return b.Finish(d, nil)
		}, nil},
		{"parameters missing", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, _ = b.Begin(d, "", "", 2)
			d = b.BeginParam(d)
			d, _ = b.FinishParam(d, 0, true)
			return b.Finish(d, nil)
		}, nil},
		{"negative deferred length", func(d []byte) ([]byte, error) {
			return buildBind(d, "", "", []bindParam{{deferred: -1}}, nil)
		}, nil},
		{"deferred length too large", func(d []byte) ([]byte, error) {
			return buildBind(d, "", "", []bindParam{{deferred: math.MaxInt32 + 1}}, nil)
		}, nil},
		{"value too long", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, _ = b.Begin(d, "", "", 1)
			d = b.BeginParam(d)
			// A value of more than 2 GiB, without one: the length
			// field's offset moved back that far.
			b.lenPos -= math.MaxInt32 + 1
			return b.FinishParam(d, 0, false)
		}, ErrMessageTooLong},
		{"message too long with deferred values", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, _ = b.Begin(d, "", "", 2)
			for range 2 {
				d = b.BeginParam(d)
				d, _ = b.DeferParam(d, 1, math.MaxInt32/2+1)
			}
			return b.Finish(d, nil)
		}, ErrMessageTooLong},
		{"message too long for a limit", func(d []byte) ([]byte, error) {
			var b BindBuilder
			d, _ = b.Begin(d, "", "", 1)
			d = b.BeginParam(d)
			d, _ = b.DeferParam(d, 1, 10)
			return b.finish(d, 20)
		}, ErrMessageTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("prefix")
			got, err := tc.build(dst)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if string(got) != "prefix" {
				t.Fatalf("dst %q after the error, want %q", got, "prefix")
			}
		})
	}
}

// TestBindBuilderAbort checks that Abort removes the message at any step.
func TestBindBuilderAbort(t *testing.T) {
	var b BindBuilder
	dst, err := b.Begin([]byte("prefix"), "", "s", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Abort(dst); string(got) != "prefix" {
		t.Fatalf("Abort after Begin: %q", got)
	}
	dst = b.BeginParam(dst)
	dst = append(dst, "value"...)
	if got := b.Abort(dst); string(got) != "prefix" {
		t.Fatalf("Abort after a value: %q", got)
	}
}

// BenchmarkBindBuilder builds the Bind of a five-parameter INSERT in place.
func BenchmarkBindBuilder(b *testing.B) {
	text := bytes.Repeat([]byte("x"), 900)
	params := []bindParam{
		{value: []byte{0, 0, 0, 0, 0, 0, 0, 42}, format: 1},
		{value: text},
		{value: []byte{0x40, 0x09, 0x1e, 0xb8, 0x51, 0xeb, 0x85, 0x1f}, format: 1},
		{value: []byte{0, 2, 0x8e, 0x1c, 0x5a, 0x27, 0x40, 0}, format: 1},
		{value: []byte("tail")},
	}
	results := []int16{1}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildBind(buf[:0], "", "pgline_1", params, results); err != nil {
			b.Fatal(err)
		}
	}
}
