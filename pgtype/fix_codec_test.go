package pgtype

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// Unit tests of the codec fixes for silent wrong values: each case gave a
// wrong value with no error before its fix.

// Type OIDs no Map knows, as the database would assign them.
const (
	fixDomainOID      = 70001 // a domain over bytea, unregistered
	fixDomainArrayOID = 70002
	fixCompositeOID   = 70003
	fixMoneyOID       = 790 // built in, no codec here
)

// recordField is one field of a hand-made binary record.
type recordField struct {
	oid uint32
	val []byte // nil for NULL
}

// binaryRecord returns the record_send form of fields.
func binaryRecord(fields ...recordField) []byte {
	b := be32(int32(len(fields)))
	for _, f := range fields {
		b = append(b, be32(int32(f.oid))...)
		if f.val == nil {
			b = append(b, be32(-1)...)
			continue
		}
		b = append(b, be32(int32(len(f.val)))...)
		b = append(b, f.val...)
	}
	return b
}

// A composite field of a type the Map does not know can only go as text:
// the whole composite is then a text literal, never its text bytes inside
// a binary composite (where the server would read them with the type's
// binary receive function).
func TestFixCompositeUnknownFieldIsText(t *testing.T) {
	m := NewMap()
	if err := m.RegisterComposite("c", fixCompositeOID, 0, fixMoneyOID, Int4OID); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterEnum("mood", fixCompositeOID+10, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterComposite("e", fixCompositeOID+20, 0, fixCompositeOID+10, Int4OID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg  any
		want string
	}{
		{struct {
			M string
			N int32
		}{"12345.67", 7}, "(12345.67,7)"},
		{struct {
			M int64
			N int32
		}{12345678, -7}, "(12345678,-7)"},
		{[]any{"$1,000.5", nil}, `("$1,000.5",)`},
		{[]any{[]byte("1.5"), 7}, "(1.5,7)"}, // a []byte for money is its text
	} {
		out, format, null, err := m.Encode(fixCompositeOID, c.arg, nil)
		if err != nil || null || format != 0 || string(out) != c.want {
			t.Errorf("%#v: %q format %d, null %v, err %v; want the text literal %s", c.arg, out, format, null, err, c.want)
		}
	}
	// A known text type (a registered enum) still goes in binary: its
	// binary form is its text.
	_, format, _, err := m.Encode(fixCompositeOID+20, []any{"happy", 1}, nil)
	if err != nil || format != 1 {
		t.Errorf("composite with an enum field: format %d, err %v; want binary", format, err)
	}
}

// A field of an anonymous record whose type the Map reads only in text is
// an error (ErrRecordField) for every destination, never its binary bytes
// handed out as its text.
func TestFixRecordUnknownField(t *testing.T) {
	m := NewMap()
	src := binaryRecord(
		recordField{fixMoneyOID, be64(1234)},
		recordField{TextOID, []byte("x")},
	)
	for _, dst := range []any{
		new(string),
		new([]byte),
		new([]any),
		new(any),
		new(struct{ M, X string }),
		new(struct {
			M []byte
			X string
		}),
	} {
		p, err := m.PlanScan(RecordOID, 1, dst)
		if err != nil {
			t.Fatalf("%T: %v", dst, err)
		}
		err = p.Scan(src, dst)
		if !errors.Is(err, ErrRecordField) {
			t.Errorf("%T: got %v, want ErrRecordField", dst, err)
		} else if !strings.Contains(err.Error(), "money (OID 790)") {
			t.Errorf("%T: %v does not name the type", dst, err)
		}
	}
	// Fields of known types still decode.
	var st struct {
		N int32
		X string
	}
	ok := binaryRecord(recordField{Int4OID, be32(7)}, recordField{TextOID, []byte("x")})
	if err := scanOne(t, m, RecordOID, 1, ok, &st); err != nil || st.N != 7 || st.X != "x" {
		t.Errorf("known fields: %+v, %v", st, err)
	}
}

// A record nested in an anonymous record is decoded (not handed out as its
// binary bytes), to a bounded depth.
func TestFixNestedRecord(t *testing.T) {
	m := NewMap()
	inner := binaryRecord(recordField{Int4OID, be32(1)}, recordField{TextOID, []byte("x")})
	outer := binaryRecord(recordField{RecordOID, inner}, recordField{Int4OID, be32(2)})
	var s string
	if err := scanOne(t, m, RecordOID, 1, outer, &s); err != nil || s != `("(1,x)",2)` {
		t.Errorf("nested record into *string: %q, %v", s, err)
	}
	var a []any
	if err := scanOne(t, m, RecordOID, 1, outer, &a); err != nil {
		t.Fatal(err)
	}
	if n, ok := a[0].([]any); !ok || len(n) != 2 || n[0] != int32(1) || n[1] != "x" || a[1] != int32(2) {
		t.Errorf("nested record into *[]any: %#v", a)
	}
	// An array of records inside a record.
	arr := append(be32(1), be32(0)...)
	arr = append(arr, be32(RecordOID)...)
	arr = append(arr, be32(1)...)
	arr = append(arr, be32(1)...)
	arr = append(arr, be32(int32(len(inner)))...)
	arr = append(arr, inner...)
	withArr := binaryRecord(recordField{RecordArrayOID, arr})
	if err := scanOne(t, m, RecordOID, 1, withArr, &s); err != nil || s != `("{""(1,x)""}")` {
		t.Errorf("record[] in a record into *string: %q, %v", s, err)
	}
	// Nesting beyond maxTypeDepth is an error, not unbounded recursion.
	deep := inner
	for range maxTypeDepth + 2 {
		deep = binaryRecord(recordField{RecordOID, deep})
	}
	for _, dst := range []any{new(string), new([]any)} {
		if err := scanOne(t, m, RecordOID, 1, deep, dst); err == nil {
			t.Errorf("records nested %d deep into %T: no error", maxTypeDepth+2, dst)
		}
	}
}

// A []byte for a type the Map does not know goes in binary, as the
// value's binary form (a domain over bytea's receive function takes it as
// is; in text format its input function would decode backslashes), but
// as text for the built-in types without a codec here, which are not
// bytes.
func TestFixBytesForUnknownType(t *testing.T) {
	m := NewMap()
	in := []byte(`\x41`)
	out, format, _, err := m.Encode(fixDomainOID, in, nil)
	if err != nil || format != 1 || !bytes.Equal(out, in) {
		t.Errorf("[]byte for an unknown OID: %q format %d, %v; want the bytes in binary", out, format, err)
	}
	out, format, _, err = m.Encode(fixMoneyOID, []byte("12345.67"), nil)
	if err != nil || format != 0 || string(out) != "12345.67" {
		t.Errorf("[]byte for money: %q format %d, %v; want its text", out, format, err)
	}
	// A string is a value's text, for the server to parse.
	if _, format, _, _ := m.Encode(fixDomainOID, `\x41`, nil); format != 0 {
		t.Errorf("string for an unknown OID: format %d, want 0", format)
	}
	// A text array literal cannot carry binary forms.
	_, _, _, err = m.Encode(fixDomainArrayOID, [][]byte{in}, nil)
	if err == nil || !strings.Contains(err.Error(), "binary form") {
		t.Errorf("[][]byte for an unknown array OID: %v, want an error", err)
	}
	if out, format, _, err := m.Encode(fixDomainArrayOID, []string{"a", "b c"}, nil); err != nil || format != 0 || string(out) != `{a,"b c"}` {
		t.Errorf("[]string for an unknown array OID: %q format %d, %v", out, format, err)
	}
}

// The array of a type the Map does not know comes as text: its elements
// are not the bytes a []byte destination promises.
func TestFixUnknownArrayIntoBytes(t *testing.T) {
	m := NewMap()
	for _, dst := range []any{new([][]byte), new([]*[]byte), new([][][]byte)} {
		if _, err := m.PlanScan(fixDomainArrayOID, 0, dst); !errors.Is(err, ErrUnsupportedDest) {
			t.Errorf("%T: got %v, want ErrUnsupportedDest", dst, err)
		}
	}
	var ss []string
	if err := scanOne(t, m, fixDomainArrayOID, 0, []byte(`{"\\x0102","\\x"}`), &ss); err != nil || len(ss) != 2 || ss[0] != `\x0102` {
		t.Errorf("into *[]string: %q, %v", ss, err)
	}
}

// Floats: a finite value beyond the destination's range, overflowing or
// underflowing to zero, is an error, as the server's float4in, float8in,
// float8::float4 and numeric::float4/float8 make it; NaN and ±Infinity
// map to their floats, and subnormal results are kept.
func TestFixFloatRange(t *testing.T) {
	m := NewMap()
	for _, v := range []float64{1e-46, -1e-50, 1e-300, 1e39, -math.MaxFloat64} {
		if _, _, _, err := m.Encode(Float4OID, v, nil); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("float64 %g for float4: %v, want ErrOutOfRange", v, err)
		}
		var f32 float32
		if err := scanOne(t, m, Float8OID, 1, be64(int64(math.Float64bits(v))), &f32); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("float8 %g into *float32: %v, %v; want ErrOutOfRange", v, f32, err)
		}
	}
	for _, v := range []float64{1e-45, 0, math.Copysign(0, -1), math.Inf(-1), math.MaxFloat32} {
		if _, _, _, err := m.Encode(Float4OID, v, nil); err != nil {
			t.Errorf("float64 %g for float4: %v", v, err)
		}
	}
	for _, c := range []struct {
		oid  uint32
		text string
		ok   bool
	}{
		{Float8OID, "1e400", false}, {Float8OID, "-1e400", false}, {Float8OID, "1e-400", false},
		{Float8OID, "4.9e-324", true}, {Float8OID, "0e-400", true}, {Float8OID, "-0.000", true},
		{Float4OID, "1e-46", false}, {Float4OID, "3.4028236e38", false}, {Float4OID, "1e-45", true},
		{Float8OID, "Infinity", true}, {Float8OID, "NaN", true},
	} {
		_, err := m.DecodeValue(c.oid, 0, []byte(c.text))
		if (err == nil) != c.ok {
			t.Errorf("%s text %q: error %v, want ok %v", m.TypeName(c.oid), c.text, err, c.ok)
		}
	}
	// float4 text is rounded once to float32, not through a float64.
	if v, err := m.DecodeValue(Float4OID, 0, []byte("1.000000059604644775390625000001")); err != nil || v != float32(math.Float32frombits(0x3f800001)) {
		t.Errorf("float4 text rounding: %v, %v", v, err)
	}

	for _, c := range []struct {
		text string
		f64  float64 // NaN: an error is wanted
		f32  float32 // NaN: an error is wanted
	}{
		{"1" + strings.Repeat("0", 400), math.NaN(), float32(math.NaN())},
		{"-1" + strings.Repeat("0", 309), math.NaN(), float32(math.NaN())},
		{"1" + strings.Repeat("0", 39), 1e39, float32(math.NaN())},
		{"0." + strings.Repeat("0", 400) + "1", math.NaN(), float32(math.NaN())},
		{"0." + strings.Repeat("0", 50) + "1", 1e-51, float32(math.NaN())},
		{"1.000000059604644775390625000001", 1.0000000596046448, math.Float32frombits(0x3f800001)},
		{"1.0000000596046447753906251", 1.0000000596046448, math.Float32frombits(0x3f800001)},
		{"0.000", 0, 0},
	} {
		var f64 float64
		err := scanOne(t, m, NumericOID, 0, []byte(c.text), &f64)
		if math.IsNaN(c.f64) != (err != nil) || err == nil && f64 != c.f64 {
			t.Errorf("numeric %.20s… into *float64: %v, %v", c.text, f64, err)
		}
		if err != nil && !errors.Is(err, ErrOutOfRange) {
			t.Errorf("numeric %.20s… into *float64: %v, want ErrOutOfRange", c.text, err)
		}
		var f32 float32
		err = scanOne(t, m, NumericOID, 0, []byte(c.text), &f32)
		if math.IsNaN(float64(c.f32)) != (err != nil) || err == nil && f32 != c.f32 {
			t.Errorf("numeric %.20s… into *float32: %v (%#x), %v", c.text, f32, math.Float32bits(f32), err)
		}
	}
	for _, c := range []struct {
		text string
		want float64
	}{{"NaN", math.NaN()}, {"Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}} {
		var f64 float64
		var f32 float32
		err := scanOne(t, m, NumericOID, 0, []byte(c.text), &f64)
		err2 := scanOne(t, m, NumericOID, 0, []byte(c.text), &f32)
		if err != nil || err2 != nil || !(f64 == c.want || math.IsNaN(c.want) && math.IsNaN(f64)) ||
			!(float64(f32) == c.want || math.IsNaN(c.want) && math.IsNaN(float64(f32))) {
			t.Errorf("numeric %s: %v %v, %v %v", c.text, f64, err, f32, err2)
		}
	}
	// The text of a text type into *float32 is rounded once, too.
	var f32 float32
	if err := scanOne(t, m, TextOID, 0, []byte("1.000000059604644775390625000001"), &f32); err != nil || math.Float32bits(f32) != 0x3f800001 {
		t.Errorf("text into *float32: %#x, %v", math.Float32bits(f32), err)
	}
}

// Date and time text the server refuses is refused (CopyFrom parses a Go
// string with these parsers): there is no year 0, and UTC offsets stop
// below 16 hours.
func TestFixTimeTextRange(t *testing.T) {
	m := NewMap()
	for _, c := range []struct {
		oid  uint32
		text string
		ok   bool
	}{
		{DateOID, "0000-01-01", false},
		{DateOID, "0000-01-01 BC", false},
		{DateOID, "0001-01-01 BC", true},
		{TimestampOID, "0000-06-01 00:00:00", false},
		{TimestamptzOID, "0000-06-01 00:00:00+00", false},
		{TimestamptzOID, "2020-01-01 00:00:00+16", false},
		{TimestamptzOID, "2020-01-01 00:00:00-16", false},
		{TimestamptzOID, "2020-01-01 00:00:00+15:59:59", true},
		{TimestamptzOID, "2020-01-01 00:00:00-15:59", true},
		{TimetzOID, "00:00:00+16", false},
		{TimetzOID, "00:00:00+15:59:59", true},
	} {
		_, err := m.DecodeValue(c.oid, 0, []byte(c.text))
		if (err == nil) != c.ok {
			t.Errorf("%s %q: error %v, want ok %v", m.TypeName(c.oid), c.text, err, c.ok)
		}
	}
}

// Interval.Duration checks every step: Days × 24h may exceed int64 while
// the microseconds bring the sum back into range, or not.
func TestFixIntervalDuration(t *testing.T) {
	for _, c := range []struct {
		iv   Interval
		want time.Duration
		ok   bool
	}{
		{Interval{Days: math.MaxInt32, Microseconds: -1075146363703483840}, 0, false},
		{Interval{Days: math.MinInt32, Microseconds: math.MaxInt64}, 0, false},
		{Interval{Days: math.MaxInt32, Microseconds: math.MaxInt64}, 0, false},
		{Interval{Days: 106751992, Microseconds: math.MinInt64}, 71945224192 * time.Microsecond, true},
		{Interval{Days: -106751992, Microseconds: math.MaxInt64}, -71945224193 * time.Microsecond, true},
		{Interval{Days: 1, Microseconds: -1}, 24*time.Hour - time.Microsecond, true},
		{Interval{Days: -1, Microseconds: 86400e6 + 5}, 5 * time.Microsecond, true},
		{Interval{Days: 106752, Microseconds: 0}, 0, false},
		{Interval{Microseconds: math.MaxInt64 / 1000}, math.MaxInt64 / 1000 * time.Microsecond, true},
	} {
		got, err := c.iv.Duration()
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%+v.Duration() = %v, %v; want %v (ok %v)", c.iv, got, err, c.want, c.ok)
		}
		if err != nil && !errors.Is(err, ErrOutOfRange) {
			t.Errorf("%+v.Duration(): %v, want ErrOutOfRange", c.iv, err)
		}
	}
}

// A text literal (array, composite or range) made because one value can
// only go as text carries the others as their text form, rather than
// failing or mixing binary bytes into it.
func TestFixTextLiteralMixesBinaryValues(t *testing.T) {
	m := NewMap()
	for _, c := range []struct {
		oid  uint32
		arg  any
		want string
	}{
		{Int4RangeOID, Range[any]{Lower: "5", Upper: int32(7), LowerType: Inclusive, UpperType: Exclusive}, "[5,7)"},
		{TstzRangeOID, Range[any]{Lower: time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC), Upper: "infinity", LowerType: Inclusive, UpperType: Exclusive},
			`["2020-01-02 03:04:05.000006+00",infinity)`},
		{Float8ArrayOID, []any{0.1, "NaN", 1e-300}, "{0.1,NaN,1e-300}"},
		{Int8ArrayOID, []any{int64(-1), "2", nil}, "{-1,2,NULL}"},
		{IntervalArrayOID, []any{-(26*time.Hour + time.Microsecond), "1 mon"}, `{-26:00:00.000001,"1 mon"}`},
	} {
		out, format, _, err := m.Encode(c.oid, c.arg, nil)
		if err != nil || format != 0 || string(out) != c.want {
			t.Errorf("%s %#v: %q format %d, %v; want %s", m.TypeName(c.oid), c.arg, out, format, err, c.want)
		}
	}
}
