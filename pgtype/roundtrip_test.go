package pgtype

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

// rtCase is one value checked against the server: the server's binary and
// text forms must decode into a new dst to want, and encoding enc (want
// when enc is nil and noEnc is false) must give the server's binary bytes.
type rtCase struct {
	typ    string
	expr   string
	dst    func() any
	want   any
	enc    any
	noEnc  bool
	noText bool // value::text differs from the type's output function
	since  int  // the PostgreSQL major version the case needs (0: any)
}

// name names the subtest of c.
func (c rtCase) name() string {
	return c.typ + " " + c.expr + " into " + reflect.TypeOf(c.dst()).String()
}

func ptr[T any]() func() any { return func() any { return new(T) } }

func date(y int, m time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, m, d, h, mi, s, ns, time.UTC)
}

func strp(s string) *string { return &s }
func i32p(v int32) *int32   { return &v }

var hundredDigits = "1234567890123456789012345678901234567890123456789012345678901234567890.123456789012345678901234567890"

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func bigInt(s string) *big.Int {
	i, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return i
}

func roundTripCases() []rtCase {
	return []rtCase{
		{typ: "bool", expr: "true", dst: ptr[bool](), want: true},
		{typ: "bool", expr: "false", dst: ptr[bool](), want: false},
		{typ: "int2", expr: "-32768", dst: ptr[int16](), want: int16(math.MinInt16)},
		{typ: "int2", expr: "32767", dst: ptr[int16](), want: int16(math.MaxInt16)},
		{typ: "int2", expr: "-5", dst: ptr[int64](), want: int64(-5)},
		{typ: "int4", expr: "-2147483648", dst: ptr[int32](), want: int32(math.MinInt32)},
		{typ: "int4", expr: "2147483647", dst: ptr[int](), want: int(math.MaxInt32)},
		{typ: "int4", expr: "42", dst: ptr[uint8](), want: uint8(42)},
		{typ: "int4", expr: "42", dst: ptr[string](), want: "42", enc: int32(42)},
		{typ: "int8", expr: "-9223372036854775808", dst: ptr[int64](), want: int64(math.MinInt64)},
		{typ: "int8", expr: "9223372036854775807", dst: ptr[int64](), want: int64(math.MaxInt64)},
		{typ: "int8", expr: "9223372036854775807", dst: ptr[uint64](), want: uint64(math.MaxInt64)},
		{typ: "int8", expr: "123", dst: ptr[int16](), want: int16(123)},
		{typ: "oid", expr: "4294967295", dst: ptr[uint32](), want: uint32(math.MaxUint32)},
		{typ: "float4", expr: "1.5", dst: ptr[float32](), want: float32(1.5)},
		{typ: "float4", expr: "-3.4028235e38", dst: ptr[float32](), want: float32(-math.MaxFloat32)},
		{typ: "float4", expr: "'NaN'", dst: ptr[float32](), want: float32(math.NaN())},
		{typ: "float4", expr: "'Infinity'", dst: ptr[float64](), want: math.Inf(1), enc: float32(math.Inf(1))},
		{typ: "float8", expr: "0.1", dst: ptr[float64](), want: 0.1},
		{typ: "float8", expr: "1.7976931348623157e308", dst: ptr[float64](), want: math.MaxFloat64},
		{typ: "float8", expr: "5e-324", dst: ptr[float64](), want: 5e-324},
		{typ: "float8", expr: "'-Infinity'", dst: ptr[float64](), want: math.Inf(-1)},
		{typ: "float8", expr: "'NaN'", dst: ptr[float64](), want: math.NaN()},
		{typ: "float8", expr: "-0.25", dst: ptr[float32](), want: float32(-0.25), enc: -0.25},

		{typ: "numeric", expr: "0", dst: ptr[string](), want: "0"},
		{typ: "numeric", expr: "0.0001", dst: ptr[string](), want: "0.0001"},
		{typ: "numeric", expr: "0.0001", dst: ptr[float64](), want: 0.0001},
		{typ: "numeric", expr: "-12.50", dst: ptr[string](), want: "-12.50"},
		{typ: "numeric", expr: "10000", dst: ptr[string](), want: "10000"},
		{typ: "numeric", expr: "100000000", dst: ptr[int64](), want: int64(100000000)},
		{typ: "numeric", expr: "-9223372036854775808", dst: ptr[int64](), want: int64(math.MinInt64)},
		{typ: "numeric", expr: "12345.678", dst: ptr[*big.Rat](), want: rat("12345.678"), enc: "12345.678", noEnc: true},
		{typ: "numeric", expr: "12345.678", dst: ptr[big.Rat](), want: *rat("12345.678"), enc: rat("12345.678")},
		{typ: "numeric", expr: "-123456789012345678901234567890", dst: ptr[big.Int](), want: *bigInt("-123456789012345678901234567890"), enc: bigInt("-123456789012345678901234567890")},
		{typ: "numeric", expr: "7.000", dst: ptr[big.Int](), want: *big.NewInt(7), noEnc: true},
		{typ: "numeric", expr: hundredDigits, dst: ptr[string](), want: hundredDigits, enc: Numeric{Int: bigInt(strings.Replace(hundredDigits, ".", "", 1)), Exp: -30, Valid: true}},
		{typ: "numeric", expr: hundredDigits, dst: ptr[big.Rat](), want: *rat(hundredDigits), noEnc: true}, // a Rat has no scale
		{typ: "numeric", expr: "-1234567890.0987654321", dst: ptr[big.Rat](), want: *rat("-1234567890.0987654321"), enc: rat("-1234567890.0987654321")},
		{typ: "numeric", expr: "-" + hundredDigits, dst: ptr[Numeric](), want: Numeric{Int: bigInt("-" + strings.Replace(hundredDigits, ".", "", 1)), Exp: -30, Valid: true}},
		{typ: "numeric", expr: "1e20", dst: ptr[string](), want: "100000000000000000000", enc: uint64(0), noEnc: true},
		{typ: "numeric", expr: "'NaN'", dst: ptr[float64](), want: math.NaN()},
		{typ: "numeric", expr: "'NaN'", dst: ptr[string](), want: "NaN", enc: Numeric{NaN: true, Valid: true}},
		{typ: "numeric", expr: "'Infinity'", dst: ptr[float64](), want: math.Inf(1), since: 14},
		{typ: "numeric", expr: "'-Infinity'", dst: ptr[string](), want: "-Infinity", enc: math.Inf(-1), since: 14},
		{typ: "numeric", expr: "1.5", dst: ptr[float64](), want: 1.5},
		{typ: "numeric", expr: "9223372036854775807", dst: ptr[int64](), want: int64(math.MaxInt64)},
		{typ: "numeric", expr: "18446744073709551615", dst: ptr[string](), want: "18446744073709551615", enc: uint64(math.MaxUint64)},
		{typ: "numeric", expr: "0.000000000000000000001", dst: ptr[string](), want: "0.000000000000000000001", enc: rat("1/1000000000000000000000")},

		{typ: "text", expr: "''", dst: ptr[string](), want: ""},
		{typ: "text", expr: "'héllo wörld ✓ 日本'", dst: ptr[string](), want: "héllo wörld ✓ 日本"},
		{typ: "text", expr: "'bytes'", dst: ptr[[]byte](), want: []byte("bytes")},
		{typ: "text", expr: "''", dst: ptr[[]byte](), want: []byte{}},
		{typ: "varchar", expr: "'ünïcode'", dst: ptr[string](), want: "ünïcode"},
		{typ: "bpchar", expr: "'ab'::char(4)", dst: ptr[string](), want: "ab  ", noText: true},
		{typ: "name", expr: "'pg_class'", dst: ptr[string](), want: "pg_class"},
		{typ: "bytea", expr: `'\x00ff10'`, dst: ptr[[]byte](), want: []byte{0, 0xff, 0x10}},
		{typ: "bytea", expr: `''`, dst: ptr[[]byte](), want: []byte{}},
		{typ: "bytea", expr: `'\x6869'`, dst: ptr[string](), want: "hi", enc: []byte("hi")},
		{typ: "uuid", expr: "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", dst: ptr[[16]byte](),
			want: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}},
		{typ: "uuid", expr: "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", dst: ptr[string](), want: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
			enc: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}},

		{typ: "date", expr: "'2000-01-01'", dst: ptr[time.Time](), want: date(2000, 1, 1, 0, 0, 0, 0)},
		{typ: "date", expr: "'1900-06-15'", dst: ptr[time.Time](), want: date(1900, 6, 15, 0, 0, 0, 0)},
		{typ: "date", expr: "'4000-01-01'", dst: ptr[time.Time](), want: date(4000, 1, 1, 0, 0, 0, 0)},
		{typ: "date", expr: "'0001-01-01'", dst: ptr[time.Time](), want: date(1, 1, 1, 0, 0, 0, 0)},
		{typ: "date", expr: "'0044-03-15 BC'", dst: ptr[time.Time](), want: date(-43, 3, 15, 0, 0, 0, 0)},
		{typ: "date", expr: "'infinity'", dst: ptr[Timestamp](), want: Timestamp{InfinityModifier: Infinity, Valid: true}},
		{typ: "date", expr: "'-infinity'", dst: ptr[Timestamp](), want: Timestamp{InfinityModifier: NegativeInfinity, Valid: true}},
		{typ: "timestamp", expr: "'1900-06-15 12:34:56.789'", dst: ptr[time.Time](), want: date(1900, 6, 15, 12, 34, 56, 789e6)},
		{typ: "timestamp", expr: "'4000-01-01 00:00:00.000001'", dst: ptr[time.Time](), want: date(4000, 1, 1, 0, 0, 0, 1000)},
		{typ: "timestamp", expr: "'0001-01-01 00:00:00'", dst: ptr[time.Time](), want: date(1, 1, 1, 0, 0, 0, 0)},
		{typ: "timestamp", expr: "'1969-12-31 23:59:59.999999'", dst: ptr[time.Time](), want: date(1969, 12, 31, 23, 59, 59, 999999000)},
		{typ: "timestamp", expr: "'294276-12-31 23:59:59.999999'", dst: ptr[time.Time](), want: date(294276, 12, 31, 23, 59, 59, 999999000)},
		{typ: "timestamp", expr: "'4713-01-01 BC'", dst: ptr[time.Time](), want: date(-4712, 1, 1, 0, 0, 0, 0)},
		{typ: "timestamp", expr: "'infinity'", dst: ptr[Timestamp](), want: Timestamp{InfinityModifier: Infinity, Valid: true}},
		{typ: "timestamptz", expr: "'1900-06-15 12:34:56.789+00'", dst: ptr[time.Time](), want: date(1900, 6, 15, 12, 34, 56, 789e6)},
		{typ: "timestamptz", expr: "'2262-04-12 00:00:00+00'", dst: ptr[time.Time](), want: date(2262, 4, 12, 0, 0, 0, 0)},
		{typ: "timestamptz", expr: "'4000-01-01 12:00:00+05:30'", dst: ptr[time.Time](), want: date(4000, 1, 1, 6, 30, 0, 0)},
		{typ: "timestamptz", expr: "'2024-02-29 23:59:59.5-08'", dst: ptr[time.Time](), want: date(2024, 3, 1, 7, 59, 59, 5e8),
			enc: time.Date(2024, 2, 29, 23, 59, 59, 5e8, time.FixedZone("PST", -8*3600))},
		{typ: "timestamptz", expr: "'-infinity'", dst: ptr[Timestamp](), want: Timestamp{InfinityModifier: NegativeInfinity, Valid: true}},
		{typ: "time", expr: "'00:00:00'", dst: ptr[time.Duration](), want: time.Duration(0)},
		{typ: "time", expr: "'23:59:59.999999'", dst: ptr[Time](), want: Time{Microseconds: 86399999999, Valid: true}},
		{typ: "time", expr: "'24:00:00'", dst: ptr[time.Duration](), want: 24 * time.Hour},
		{typ: "time", expr: "'12:34:56.5'", dst: ptr[time.Duration](), want: 12*time.Hour + 34*time.Minute + 56*time.Second + 500*time.Millisecond},
		{typ: "interval", expr: "'1 day 02:03:04.5'", dst: ptr[time.Duration](), want: 26*time.Hour + 3*time.Minute + 4500*time.Millisecond,
			enc: Interval{Days: 1, Microseconds: (2*3600+3*60+4)*1e6 + 5e5, Valid: true}},
		{typ: "interval", expr: "'-00:00:01'", dst: ptr[time.Duration](), want: -time.Second},
		{typ: "interval", expr: "'1 year 2 mons -3 days +04:05:06.000007'", dst: ptr[Interval](), want: Interval{Months: 14, Days: -3, Microseconds: 4*3600e6 + 5*60e6 + 6e6 + 7, Valid: true}},
		{typ: "interval", expr: "'-1 years -2 mons'", dst: ptr[Interval](), want: Interval{Months: -14, Valid: true}},
		{typ: "interval", expr: "'1000000 hours'", dst: ptr[Interval](), want: Interval{Microseconds: 3600e12, Valid: true}},
		{typ: "interval", expr: "'0'", dst: ptr[Interval](), want: Interval{Valid: true}},
		{typ: "interval", expr: "'1 mon 1 day'", dst: ptr[Interval](), want: Interval{Months: 1, Days: 1, Valid: true}},

		{typ: "json", expr: `'{"a": [1, 2.5, "x"]}'`, dst: ptr[[]byte](), want: []byte(`{"a": [1, 2.5, "x"]}`)},
		{typ: "json", expr: `'{"a":1}'`, dst: ptr[map[string]int](), want: map[string]int{"a": 1}, noEnc: true},
		{typ: "jsonb", expr: `'{"b": "ü", "a": 1}'`, dst: ptr[string](), want: `{"a": 1, "b": "ü"}`},
		{typ: "jsonb", expr: `'[1, 2]'`, dst: ptr[json.RawMessage](), want: json.RawMessage(`[1, 2]`)},
		{typ: "jsonb", expr: `'{"name": "x", "n": 2}'`, dst: ptr[jsonThing](), want: jsonThing{Name: "x", N: 2}, noEnc: true},
		{typ: "jsonb", expr: `'{"a": [1, "x", true, null]}'`, dst: ptr[any](), want: map[string]any{"a": []any{1.0, "x", true, nil}}, noEnc: true},
		{typ: "json", expr: `'[2.5]'`, dst: ptr[any](), want: []any{2.5}, noEnc: true},
		{typ: "jsonb", expr: `'"s"'`, dst: ptr[any](), want: "s", noEnc: true},

		{typ: "int4[]", expr: "'{}'", dst: ptr[[]int32](), want: []int32{}},
		{typ: "int4[]", expr: "'{1,2,-3}'", dst: ptr[[]int32](), want: []int32{1, 2, -3}},
		{typ: "int4[]", expr: "'{1,NULL,3}'", dst: ptr[[]*int32](), want: []*int32{i32p(1), nil, i32p(3)}},
		{typ: "int8[]", expr: "'{9223372036854775807}'", dst: ptr[[]int64](), want: []int64{math.MaxInt64}},
		{typ: "int2[]", expr: "'{1,2}'", dst: ptr[[]int](), want: []int{1, 2}},
		{typ: "text[]", expr: `'{"a b",NULL,"","NULL","q\"uote","back\\slash",ü}'`, dst: ptr[[]*string](),
			want: []*string{strp("a b"), nil, strp(""), strp("NULL"), strp(`q"uote`), strp(`back\slash`), strp("ü")}},
		{typ: "text[]", expr: `'{x,y}'`, dst: ptr[[]string](), want: []string{"x", "y"}},
		{typ: "varchar[]", expr: `'{x,y}'`, dst: ptr[[]string](), want: []string{"x", "y"}},
		{typ: "bool[]", expr: "'{t,f}'", dst: ptr[[]bool](), want: []bool{true, false}},
		{typ: "float8[]", expr: "'{1.5,NaN,-Infinity}'", dst: ptr[[]float64](), want: []float64{1.5, math.NaN(), math.Inf(-1)}},
		{typ: "float4[]", expr: "'{1.5}'", dst: ptr[[]float32](), want: []float32{1.5}},
		{typ: "numeric[]", expr: "'{1.5,NaN,100}'", dst: ptr[[]string](), want: []string{"1.5", "NaN", "100"}, noEnc: true},
		{typ: "bytea[]", expr: `'{"\\x0102",NULL}'`, dst: ptr[[][]byte](), want: [][]byte{{1, 2}, nil}},
		{typ: "uuid[]", expr: "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'", dst: ptr[[]string](), want: []string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
			enc: [][16]byte{{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}}},
		{typ: "date[]", expr: "'{2000-01-01,1900-01-02}'", dst: ptr[[]time.Time](), want: []time.Time{date(2000, 1, 1, 0, 0, 0, 0), date(1900, 1, 2, 0, 0, 0, 0)}},
		{typ: "timestamptz[]", expr: "'{\"1999-12-31 23:59:59.123456+00\",infinity}'", dst: ptr[[]Timestamp](),
			want: []Timestamp{{Time: date(1999, 12, 31, 23, 59, 59, 123456000), Valid: true}, {InfinityModifier: Infinity, Valid: true}}},
		{typ: "timestamp[]", expr: "'{\"4000-01-01 00:00:00\"}'", dst: ptr[[]time.Time](), want: []time.Time{date(4000, 1, 1, 0, 0, 0, 0)}},
		{typ: "time[]", expr: "'{01:02:03}'", dst: ptr[[]time.Duration](), want: []time.Duration{time.Hour + 2*time.Minute + 3*time.Second}},
		{typ: "interval[]", expr: "'{\"1 day\",NULL}'", dst: ptr[[]*Interval](), want: []*Interval{{Days: 1, Valid: true}, nil}},
		{typ: "json[]", expr: `'{"{\"a\":1}","[]"}'`, dst: ptr[[]string](), want: []string{`{"a":1}`, "[]"}},
		{typ: "jsonb[]", expr: `'{"{\"a\":1}"}'`, dst: ptr[[]json.RawMessage](), want: []json.RawMessage{json.RawMessage(`{"a": 1}`)}},
		{typ: "oid[]", expr: "'{1,4294967295}'", dst: ptr[[]uint32](), want: []uint32{1, math.MaxUint32}},
		{typ: "name[]", expr: "'{a,b}'", dst: ptr[[]string](), want: []string{"a", "b"}},
		{typ: "bpchar[]", expr: "'{a,b}'", dst: ptr[[]string](), want: []string{"a", "b"}},
	}
}

type jsonThing struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// equal compares decoded values, treating NaN as equal to NaN, comparing
// times with Equal (and requiring UTC), and big numbers by value.
func equal(got, want any) bool {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		return ok && (g == w || math.IsNaN(g) && math.IsNaN(w))
	case float32:
		g, ok := got.(float32)
		return ok && (g == w || g != g && w != w)
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Equal(w) && g.Location() == time.UTC
	case big.Rat:
		g, ok := got.(big.Rat)
		return ok && g.Cmp(&w) == 0
	case *big.Rat:
		g, ok := got.(*big.Rat)
		return ok && g.Cmp(w) == 0
	case big.Int:
		g, ok := got.(big.Int)
		return ok && g.Cmp(&w) == 0
	case Numeric:
		g, ok := got.(Numeric)
		return ok && g.String() == w.String() && g.Exp == w.Exp
	case []float64:
		g, ok := got.([]float64)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !equal(g[i], w[i]) {
				return false
			}
		}
		return true
	case []time.Time:
		g, ok := got.([]time.Time)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !equal(g[i], w[i]) {
				return false
			}
		}
		return true
	case []Timestamp:
		g, ok := got.([]Timestamp)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if g[i].InfinityModifier != w[i].InfinityModifier || !equal(g[i].Time, w[i].Time) && w[i].InfinityModifier == Finite {
				return false
			}
		}
		return true
	}
	if reflect.DeepEqual(got, want) {
		return true
	}
	// Values holding NaN, which is not equal to itself (Point{NaN, 1}):
	// the same type printed the same way.
	return reflect.TypeOf(got) == reflect.TypeOf(want) && fmt.Sprintf("%#v", got) == fmt.Sprintf("%#v", want)
}

func TestRoundTrip(t *testing.T) { runRoundTrip(t, NewMap(), roundTripCases()) }

// runRoundTrip checks each case against the server's binary and text
// forms of its expression; a case the server is too old for is a skipped
// subtest.
func runRoundTrip(t *testing.T, m *Map, cases []rtCase) {
	var run []rtCase
	for _, c := range cases {
		if c.since*10000 > srv.Version() {
			t.Run(c.name(), func(t *testing.T) { srv.NeedVersion(t, c.since, c.typ+" "+c.expr) })
			continue
		}
		run = append(run, c)
	}
	cases = run
	pairs := make([][2]string, len(cases))
	for i, c := range cases {
		pairs[i] = [2]string{c.typ, c.expr}
	}
	vals := serverValues(t, pairs)
	for i, c := range cases {
		sv := vals[i]
		t.Run(c.name(), func(t *testing.T) {
			oid := oidOf(t, m, c.typ)
			for _, f := range []struct {
				format int16
				src    []byte
			}{{1, sv.bin}, {0, []byte(sv.text)}} {
				if f.format == 0 && c.noText {
					continue
				}
				dst := c.dst()
				plan, err := m.PlanScan(oid, f.format, dst)
				if err != nil {
					t.Fatalf("PlanScan format %d: %v", f.format, err)
				}
				if err := plan.Scan(f.src, dst); err != nil {
					t.Fatalf("Scan format %d of %x (%q): %v", f.format, f.src, f.src, err)
				}
				if got := reflect.ValueOf(dst).Elem().Interface(); !equal(got, c.want) {
					t.Errorf("format %d: got %#v, want %#v", f.format, got, c.want)
				}
				// The plan is reusable: a second scan gives the same result.
				dst2 := c.dst()
				if err := plan.Scan(f.src, dst2); err != nil || !equal(reflect.ValueOf(dst2).Elem().Interface(), c.want) {
					t.Errorf("format %d: second scan differs: %v", f.format, err)
				}
				// DecodeValue never fails on server bytes.
				if _, err := m.DecodeValue(oid, f.format, f.src); err != nil {
					t.Errorf("DecodeValue format %d: %v", f.format, err)
				}
				// The text form of a binary value is the server's text form
				// (for types whose output does not depend on settings).
				if f.format == 1 && c.typ != "float4" && c.typ != "float8" && c.typ != "float8[]" && c.typ != "bool" && !c.noText && !strings.HasPrefix(c.typ, "json") {
					var s []byte
					if err := mustPlan(t, m, oid, 1, &s).Scan(f.src, &s); err != nil || string(s) != sv.text {
						if c.typ != "bytea" && c.typ != "bytea[]" || err != nil {
							t.Errorf("text form: got %q (%v), want %q", s, err, sv.text)
						}
					}
				}
			}
			if c.noEnc {
				return
			}
			arg := c.enc
			if arg == nil {
				arg = reflect.ValueOf(c.dst()).Elem().Interface()
				arg = c.want
			}
			buf := make([]byte, 0, 64)
			buf = append(buf, "prefix"...)
			out, format, null, err := m.Encode(oid, arg, buf)
			if err != nil {
				t.Fatalf("Encode(%#v): %v", arg, err)
			}
			if !bytes.HasPrefix(out, []byte("prefix")) {
				t.Fatalf("Encode lost the buffer's contents")
			}
			wantBytes, wantFormat := sv.bin, int16(1)
			if s, ok := arg.(string); ok && !textual(m.typeOf(oid)) {
				wantBytes, wantFormat = []byte(sv.text), 0 // strings go as text for the server to parse
				if s != sv.text {
					t.Fatalf("test case: %q is not the server's text %q", s, sv.text)
				}
			}
			if null || format != wantFormat {
				t.Fatalf("Encode(%#v): null %v format %d, want format %d", arg, null, format, wantFormat)
			}
			if got := out[len("prefix"):]; !bytes.Equal(got, wantBytes) {
				t.Errorf("Encode(%#v) = %x, server %x", arg, got, sv.bin)
			}
		})
	}
}

func oidOf(t testing.TB, m *Map, typ string) uint32 {
	for oid, ti := range *m.types.Load() {
		if ti.name == typ {
			return oid
		}
	}
	t.Fatalf("no OID for %s", typ)
	return 0
}

func mustPlan(t testing.TB, m *Map, oid uint32, format int16, dst any) ScanPlan {
	t.Helper()
	p, err := m.PlanScan(oid, format, dst)
	if err != nil {
		t.Fatalf("PlanScan(%d, %d, %T): %v", oid, format, dst, err)
	}
	return p
}

// textual reports whether a Go string is sent in binary format for t.
func textual(t *typeInfo) bool {
	return t.known && (t.kind == kindText || t.kind == kindBytea || t.kind == kindJSON || t.kind == kindJSONB)
}
