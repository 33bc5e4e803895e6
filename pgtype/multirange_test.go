package pgtype

import (
	"errors"
	"testing"
	"time"
)

func ri32(lo, up int32) Range[int32] {
	return Range[int32]{Lower: lo, Upper: up, LowerType: Inclusive, UpperType: Exclusive}
}

func multirangeCases() []rtCase {
	return []rtCase{
		{typ: "int4multirange", expr: "'{}'", dst: ptr[Multirange[int32]](), want: Multirange[int32]{}},
		{typ: "int4multirange", expr: "'{[1,3),[5,7)}'", dst: ptr[Multirange[int32]](), want: Multirange[int32]{ri32(1, 3), ri32(5, 7)}},
		{typ: "int4multirange", expr: "'{[5,7), [1,3], empty, [3,4)}'", dst: ptr[Multirange[int32]](), want: Multirange[int32]{ri32(1, 4), ri32(5, 7)},
			enc: Multirange[int32]{ri32(1, 4), ri32(5, 7)}},
		{typ: "int4multirange", expr: "'{(,3),[5,)}'", dst: ptr[Multirange[int64]](),
			want: Multirange[int64]{{Upper: 3, LowerType: Unbounded, UpperType: Exclusive}, {Lower: 5, LowerType: Inclusive, UpperType: Unbounded}}},
		{typ: "int4multirange", expr: "'{(,)}'", dst: ptr[Multirange[int32]](), want: Multirange[int32]{{LowerType: Unbounded, UpperType: Unbounded}}},
		{typ: "int4multirange", expr: "'{[1,3),[5,7)}'", dst: ptr[string](), want: "{[1,3),[5,7)}", enc: []Range[int32]{ri32(1, 3), ri32(5, 7)}},
		{typ: "int4multirange", expr: "'{[1,3)}'", dst: ptr[[]Range[int32]](), want: []Range[int32]{ri32(1, 3)}},
		{typ: "int4multirange", expr: "'{[2,9)}'", dst: ptr[any](), want: Multirange[any]{{Lower: int32(2), Upper: int32(9), LowerType: Inclusive, UpperType: Exclusive}}},
		{typ: "int4multirange", expr: "'{}'", dst: ptr[any](), want: Multirange[any]{}},
		{typ: "int8multirange", expr: "'{[-9223372036854775808,0),[10,)}'", dst: ptr[Multirange[int64]](),
			want: Multirange[int64]{{Lower: -1 << 63, LowerType: Inclusive, UpperType: Exclusive}, {Lower: 10, LowerType: Inclusive, UpperType: Unbounded}}},
		{typ: "nummultirange", expr: "'{(1.5,2.25],[3,)}'", dst: ptr[string](), want: "{(1.5,2.25],[3,)}",
			enc: Multirange[Numeric]{{Lower: Numeric{Int: bigInt("15"), Exp: -1, Valid: true}, Upper: Numeric{Int: bigInt("225"), Exp: -2, Valid: true}, LowerType: Exclusive, UpperType: Inclusive},
				{Lower: Numeric{Int: bigInt("3"), Valid: true}, LowerType: Inclusive, UpperType: Unbounded}}},
		{typ: "nummultirange", expr: "'{(,0.5]}'", dst: ptr[Multirange[float64]](), want: Multirange[float64]{{Upper: 0.5, LowerType: Unbounded, UpperType: Inclusive}}},
		{typ: "tsmultirange", expr: "'{[2020-01-01 00:00:00,2020-02-01 12:30:00),[2021-01-01,)}'", dst: ptr[Multirange[time.Time]](),
			want: Multirange[time.Time]{{Lower: date(2020, 1, 1, 0, 0, 0, 0), Upper: date(2020, 2, 1, 12, 30, 0, 0), LowerType: Inclusive, UpperType: Exclusive},
				{Lower: date(2021, 1, 1, 0, 0, 0, 0), LowerType: Inclusive, UpperType: Unbounded}}},
		{typ: "tstzmultirange", expr: "'{[2020-01-01 00:00:00+00,infinity)}'", dst: ptr[Multirange[Timestamp]](),
			want: Multirange[Timestamp]{{Lower: Timestamp{Time: date(2020, 1, 1, 0, 0, 0, 0), Valid: true}, Upper: Timestamp{InfinityModifier: Infinity, Valid: true}, LowerType: Inclusive, UpperType: Exclusive}}},
		{typ: "tstzmultirange", expr: "'{(,2021-06-01 10:00:00+02]}'", dst: ptr[string](), want: `{(,"2021-06-01 08:00:00+00"]}`,
			enc: Multirange[time.Time]{{Upper: date(2021, 6, 1, 8, 0, 0, 0), LowerType: Unbounded, UpperType: Inclusive}}},
		{typ: "datemultirange", expr: "'{[2000-01-01,2000-01-31],[2000-03-01,)}'", dst: ptr[Multirange[time.Time]](),
			want: Multirange[time.Time]{{Lower: date(2000, 1, 1, 0, 0, 0, 0), Upper: date(2000, 2, 1, 0, 0, 0, 0), LowerType: Inclusive, UpperType: Exclusive},
				{Lower: date(2000, 3, 1, 0, 0, 0, 0), LowerType: Inclusive, UpperType: Unbounded}}},
		{typ: "int4multirange[]", expr: `ARRAY['{[1,3)}'::int4multirange, NULL, '{}']`, dst: ptr[[]Multirange[int32]](),
			want: []Multirange[int32]{{ri32(1, 3)}, nil, {}}},
		{typ: "int4multirange[]", expr: `ARRAY['{[1,3),[4,5)}'::int4multirange, NULL]`, dst: ptr[[]*Multirange[int32]](),
			want: []*Multirange[int32]{{ri32(1, 3), ri32(4, 5)}, nil}},
		{typ: "int8multirange[]", expr: `'{}'`, dst: ptr[[]Multirange[int64]](), want: []Multirange[int64]{}},
		{typ: "datemultirange[]", expr: `ARRAY['{[2000-01-01,2000-01-02)}'::datemultirange]`, dst: ptr[[]string](),
			want: []string{"{[2000-01-01,2000-01-02)}"}, enc: []Multirange[time.Time]{{{Lower: date(2000, 1, 1, 0, 0, 0, 0), Upper: date(2000, 1, 2, 0, 0, 0, 0), LowerType: Inclusive, UpperType: Exclusive}}}},
	}
}

func TestRoundTripMultirange(t *testing.T) {
	srv.NeedVersion(t, 14, "multiranges")
	runRoundTrip(t, NewMap(), multirangeCases())
}

// TestMultirangeEncodeText: ranges whose bounds can only go as text make
// the multirange a text literal, which the server reads; ranges without
// bounds join it in their text form.
func TestMultirangeEncodeText(t *testing.T) {
	m := NewMap()
	arg := Multirange[string]{
		{Lower: "2020-01-01", Upper: "2020-02-01 12:00", LowerType: Inclusive, UpperType: Exclusive},
		{Empty: true},
		{Lower: "2021-01-01", LowerType: Exclusive, UpperType: Unbounded},
	}
	out, format, null, err := m.Encode(TsMultirangeOID, arg, nil)
	if err != nil || format != 0 || null {
		t.Fatalf("Encode: %q %d %v %v", out, format, null, err)
	}
	if want := `{[2020-01-01,"2020-02-01 12:00"),empty,(2021-01-01,)}`; string(out) != want {
		t.Errorf("Encode = %s, want %s", out, want)
	}
	// NULL, refusals.
	if _, _, null, err := m.Encode(Int4MultirangeOID, Multirange[int32](nil), nil); err != nil || !null {
		t.Errorf("nil Multirange: null %v, %v", null, err)
	}
	if _, _, null, err := m.Encode(Int4MultirangeOID, (*Multirange[int32])(nil), nil); err != nil || !null {
		t.Errorf("nil *Multirange: null %v, %v", null, err)
	}
	if out, format, _, err := m.Encode(Int4MultirangeOID, &Multirange[int32]{ri32(1, 2)}, nil); err != nil || format != 1 || len(out) != 4+4+17 {
		t.Errorf("*Multirange: %x %d %v", out, format, err)
	}
	for _, c := range []struct {
		oid uint32
		arg any
	}{
		{Int4MultirangeOID, Multirange[int32]{{}}},                                            // no bound types
		{Int4MultirangeOID, Multirange[*int32]{{LowerType: Inclusive, UpperType: Unbounded}}}, // a NULL bound
		{Int4RangeOID, Multirange[int32]{ri32(1, 2)}},
		{Int4OID, Multirange[int32]{ri32(1, 2)}},
	} {
		var ee *EncodeError
		if _, _, _, err := m.Encode(c.oid, c.arg, nil); !errors.As(err, &ee) {
			t.Errorf("Encode(%s, %#v): %v, want an EncodeError", m.TypeName(c.oid), c.arg, err)
		}
	}
	// A Multirange for a range[] parameter is the array of its ranges.
	out, format, _, err = m.Encode(Int4RangeArrayOID, Multirange[int32]{ri32(1, 2)}, nil)
	if err != nil || format != 1 {
		t.Fatalf("Multirange as int4range[]: %v", err)
	}
	var rs []Range[int32]
	if err := mustPlan(t, m, Int4RangeArrayOID, 1, &rs).Scan(out, &rs); err != nil || len(rs) != 1 || rs[0] != ri32(1, 2) {
		t.Errorf("int4range[] back: %v %v", rs, err)
	}

	// The server reads the text literal.
	srv.NeedVersion(t, 14, "multiranges")
	out, _, _, _ = m.Encode(TsMultirangeOID, arg, nil)
	got, err := srv.Query("SELECT '" + string(out) + "'::tsmultirange")
	if want := `{["2020-01-01 00:00:00","2020-02-01 12:00:00"),("2021-01-01 00:00:00",)}`; err != nil || got != want {
		t.Errorf("server: %q, %v; want %q", got, err, want)
	}
}

func TestMultirangeMalformed(t *testing.T) {
	m := NewMap()
	for _, h := range []string{
		"", "000000", "ffffffff", "7fffffff", "00000001", "0000000100000000", "00000001ffffffff01",
		"000000010000000501", "00000001000000010100", "0000000000",
		"000000020000000101", // a count larger than the ranges
	} {
		src := mustHex(t, h)
		_, err := m.DecodeValue(Int4MultirangeOID, 1, src)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: %v, want a DecodeError", h, err)
		}
		var mr Multirange[int32]
		if err := mustPlan(t, m, Int4MultirangeOID, 1, &mr).Scan(src, &mr); err == nil {
			t.Errorf("%s scanned: %v", h, mr)
		}
	}
	for _, s := range []string{"", "{", "}", "{[1,2)", "{[1,2),}", "{,}", "{[1,2)}x", "{[1,2) [3,4)}", "{x}", `{["1,2)}`, "{emptyx}", "[1,2)"} {
		if v, err := m.DecodeValue(Int4MultirangeOID, 0, []byte(s)); err == nil {
			t.Errorf("%q decoded: %v", s, v)
		}
	}
	// Text that the server takes: white space, quotes, escapes, empty.
	for _, c := range []struct{ in, canon string }{
		{" { [1,3) , empty , EMPTY } ", "{[1,3),empty,empty}"},
		{`{["1","3"),(4,\5]}`, "{[1,3),(4,5]}"},
	} {
		v, err := m.DecodeValue(Int4MultirangeOID, 0, []byte(c.in))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		out, _, _, err := m.Encode(Int4MultirangeOID, v, nil)
		var s string
		if err == nil {
			err = mustPlan(t, m, Int4MultirangeOID, 1, &s).Scan(out, &s)
		}
		if err != nil || s != c.canon {
			t.Errorf("%q: %q %v, want %q", c.in, s, err, c.canon)
		}
	}
}

func mustHex(t testing.TB, h string) []byte {
	t.Helper()
	b := make([]byte, len(h)/2)
	for i := range b {
		var v byte
		for _, c := range h[2*i : 2*i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				v |= byte(c - 'a' + 10)
			default:
				t.Fatalf("bad hex %q", h)
			}
		}
		b[i] = v
	}
	return b
}

func FuzzMultirange(f *testing.F) {
	for _, h := range []string{
		"00000000",
		"00000002000000110200000004000000010000000400000003000000110200000004000000050000000400000007",
		"000000010000000118", "0000000100000001010000", "00000001ffffffff", "7fffffff", "ffffffff", "000000010000000502",
		"0000000100000009020000000400000001",
	} {
		hexSeed(f, h)
	}
	for _, s := range []string{"{}", "{[1,3),[5,7)}", "{(,3),[5,)}", "{empty}", ` { [1,2) , (3,"4"] } `, `{["a\"b",)}`, "{[1,2)", "{,}", `{{"[1,2)"},NULL}`, `{"{[1,3)}",NULL}`} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, Int4MultirangeOID, format, src, new(Multirange[int32]), new(Multirange[int64]), new([]Range[string]), new(*Multirange[int32]))
			decodeAll(t, m, NumMultirangeOID, format, src, new(Multirange[Numeric]))
			decodeAll(t, m, TstzMultirangeOID, format, src, new(Multirange[time.Time]), new(Multirange[Timestamp]))
			decodeAll(t, m, Int4MultirangeArrayOID, format, src, new([]Multirange[int32]), new([]*Multirange[int64]))
			var v Multirange[int32]
			if err := mustPlan(t, m, Int4MultirangeOID, format, &v).Scan(src, &v); err != nil {
				continue
			}
			out, f, _, err := m.Encode(Int4MultirangeOID, v, nil)
			if err != nil || f != 1 {
				t.Fatalf("%#v: re-encode: format %d, %v", v, f, err)
			}
			var v2 Multirange[int32]
			if err := mustPlan(t, m, Int4MultirangeOID, 1, &v2).Scan(out, &v2); err != nil || !equal(v2, v) {
				t.Fatalf("%#v re-encoded as %x decodes to %#v (%v)", v, out, v2, err)
			}
			var s string
			if err := mustPlan(t, m, Int4MultirangeOID, 1, &s).Scan(out, &s); err != nil {
				t.Fatal(err)
			}
			var v3 Multirange[int32]
			if err := mustPlan(t, m, Int4MultirangeOID, 0, &v3).Scan([]byte(s), &v3); err != nil || !equal(v3, v) {
				t.Fatalf("%#v: text %q decodes to %#v (%v)", v, s, v3, err)
			}
		}
	})
}
