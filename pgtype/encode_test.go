package pgtype

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

type valuer struct{ v driver.Value }

func (v valuer) Value() (driver.Value, error) { return v.v, nil }

type namedInt int64

func TestEncodeAgainstServer(t *testing.T) {
	m := NewMap()
	ny := time.FixedZone("NY", -5*3600)
	cases := []struct {
		typ, expr string
		arg       any
	}{
		{"int8", "5", valuer{int64(5)}},
		{"int8", "5", sql.NullInt64{Int64: 5, Valid: true}},
		{"int4", "-7", namedInt(-7)},
		{"int2", "3", func() *int { i := 3; return &i }()},
		{"int8", "12", 12.0},
		{"float8", "3", 3},
		{"numeric", "42", int32(42)},
		{"numeric", "-0.5", -0.5},
		{"text", "'7'", 7},
		{"text", "'x'", valuer{"x"}},
		{"text", "'x'", sql.NullString{String: "x", Valid: true}},
		{"date", "'2024-03-10'", time.Date(2024, 3, 10, 23, 0, 0, 0, ny)},               // the date in the time's zone
		{"timestamp", "'2024-03-10 23:00:00'", time.Date(2024, 3, 10, 23, 0, 0, 0, ny)}, // the wall clock
		{"timestamptz", "'2024-03-11 04:00:00+00'", time.Date(2024, 3, 10, 23, 0, 0, 0, ny)},
		{"timestamptz", "'1800-01-01 00:00:00.000001+00'", time.Date(1800, 1, 1, 0, 0, 0, 1999, time.UTC)}, // ns truncated
		{"timestamptz", "'infinity'", Timestamp{InfinityModifier: Infinity, Valid: true}},
		{"date", "'-infinity'", Timestamp{InfinityModifier: NegativeInfinity, Valid: true}},
		{"interval", "'90 minutes'", 90 * time.Minute},
		{"time", "'01:30:00'", 90 * time.Minute},
		{"time", "'01:30:00'", Time{Microseconds: 5400e6, Valid: true}},
		{"time", "'23:04:05.123456'", time.Date(2024, 3, 10, 23, 4, 5, 123456789, ny)}, // the wall clock's time of day
		{"json", `'{"a":[1,2]}'`, map[string][]int{"a": {1, 2}}},
		{"json", `'{"name":"x","n":2}'`, jsonThing{Name: "x", N: 2}},
		{"jsonb", `'{"n": 2, "name": "x"}'`, `{"n": 2, "name": "x"}`},
		{"jsonb", `'[1, 2]'`, []byte(`[1, 2]`)},
		{"int8[]", "'{1,NULL,3}'", []*int64{func() *int64 { v := int64(1); return &v }(), nil, func() *int64 { v := int64(3); return &v }()}},
		{"int8[]", "'{1,NULL}'", []any{1, nil}},
		{"text[]", "'{}'", []string{}},
		{"text[]", `'{"a b",NULL,"é"}'`, []*string{strp("a b"), nil, strp("é")}},
		{"bool[]", "'{t}'", []bool{true}},
		{"interval[]", "'{\"1 day\"}'", []Interval{{Days: 1, Valid: true}}},
		{"numeric[]", "'{1.5,NaN}'", []float64{1.5, math.NaN()}},
		{"timestamptz[]", "'{\"2000-01-01 00:00:00+00\"}'", []time.Time{date(2000, 1, 1, 0, 0, 0, 0)}},
		{"jsonb[]", `'{"{\"a\": 1}"}'`, []string{`{"a": 1}`}},
		{"float4[]", "'{1.5,NaN}'", []float32{1.5, float32(math.NaN())}},
		{"bytea", `'\x0001'`, []byte{0, 1}},
		{"uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", myUUID{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}},
	}
	pairs := make([][2]string, len(cases))
	for i, c := range cases {
		pairs[i] = [2]string{c.typ, c.expr}
	}
	vals := serverValues(t, pairs)
	for i, c := range cases {
		out, format, null, err := m.Encode(oidOf(t, m, c.typ), c.arg, nil)
		if err != nil || null || format != 1 {
			t.Errorf("%s %#v: err %v null %v format %d", c.typ, c.arg, err, null, format)
			continue
		}
		if !bytes.Equal(out, vals[i].bin) {
			t.Errorf("%s %#v: got %x, server %x", c.typ, c.arg, out, vals[i].bin)
		}
	}
}

func TestEncodeNull(t *testing.T) {
	m := NewMap()
	var np *int
	for _, c := range []struct {
		oid uint32
		arg any
	}{
		{Int8OID, nil}, {Int8OID, np}, {ByteaOID, []byte(nil)}, {Int8OID, valuer{nil}}, {TextOID, sql.NullString{}},
		{TimestamptzOID, sql.NullTime{}}, {Int8OID, (*valuer)(nil)}, {Int8ArrayOID, []int(nil)}, {JSONBOID, map[string]int(nil)},
		{Int4OID, sql.Null[int32]{}},
	} {
		out, _, null, err := m.Encode(c.oid, c.arg, []byte("keep"))
		if err != nil || !null || string(out) != "keep" {
			t.Errorf("%#v: null %v err %v out %q", c.arg, null, err, out)
		}
	}
}

func TestEncodeTextFallback(t *testing.T) {
	m := NewMap()
	for _, c := range []struct {
		oid  uint32
		arg  any
		want string
	}{
		{Int8OID, "123", "123"},
		{UUIDOID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{TimestamptzOID, "2000-01-01 00:00:00+00", "2000-01-01 00:00:00+00"},
		{NumericOID, "1.50", "1.50"},
		{99999, "happy", "happy"}, // an enum
		{99999, 5, "5"},
		{Int8ArrayOID, []string{"1", "2"}, "{1,2}"},
		{99998, []string{"a b", "c"}, `{"a b",c}`}, // an enum array
		{JSONOID, "[1]", "[1]"},
	} {
		out, format, null, err := m.Encode(c.oid, c.arg, nil)
		wantFormat := int16(0)
		if c.oid == JSONOID {
			wantFormat = 1 // json's binary form is its text
		}
		if err != nil || null || format != wantFormat || string(out) != c.want {
			t.Errorf("%d %#v: %q format %d null %v err %v", c.oid, c.arg, out, format, null, err)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	m := NewMap()
	for _, c := range []struct {
		oid  uint32
		arg  any
		want string
	}{
		{Int2OID, 40000, "cannot encode int as int2 (OID 21): 40000: out of range"},
		{Int4OID, int64(math.MaxInt32 + 1), "cannot encode int64 as int4 (OID 23): 2147483648: out of range"},
		{Int4OID, time.Now(), "cannot encode time.Time as int4 (OID 23): unsupported argument type"},
		{TimestamptzOID, 5, "cannot encode int as timestamptz (OID 1184)"},
		{Int8OID, 1.5, "cannot encode float64 as int8 (OID 20)"},
		{BoolOID, 1, "cannot encode int as bool (OID 16)"},
		{NumericOID, rat("1/3"), "cannot encode *big.Rat as numeric (OID 1700): not a finite decimal"},
		{Int4ArrayOID, []int64{1, 1 << 40}, "array element 1: cannot encode int64 as int4"},
		{Int4ArrayOID, 5, "cannot encode int as int4[] (OID 1007)"},
		{Float4OID, 1e300, "cannot encode float64 as float4 (OID 700)"},
		{TimeOID, 25 * time.Hour, "cannot encode time.Duration as time (OID 1083)"},
		{IntervalOID, struct{}{}, "cannot encode struct {} as interval"},
		{UUIDOID, []byte{1, 2}, "cannot encode []uint8 as uuid"},
		{JSONBOID, func() {}, "cannot encode func() as jsonb"},
		{TimestampOID, time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(1<<20, 0, 0), "cannot encode time.Time as timestamp"},
	} {
		buf := []byte("keep")
		out, _, _, err := m.Encode(c.oid, c.arg, buf)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%d %T: got %v, want %q", c.oid, c.arg, err, c.want)
		}
		var ee *EncodeError
		if !errors.As(err, &ee) {
			t.Errorf("%d %T: %v is not an *EncodeError", c.oid, c.arg, err)
		}
		if string(out) != "keep" {
			t.Errorf("%d %T: buffer changed to %q", c.oid, c.arg, out)
		}
	}
}
