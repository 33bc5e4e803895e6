package pgtype

import (
	"reflect"
	"testing"
	"time"
)

func TestDecodeValueTypes(t *testing.T) {
	m := NewMap()
	cases := []struct {
		typ, expr string
		want      any
	}{
		{"bool", "true", true},
		{"int2", "1", int16(1)},
		{"int4", "1", int32(1)},
		{"int8", "1", int64(1)},
		{"oid", "1", uint32(1)},
		{"float4", "1.5", float32(1.5)},
		{"float8", "1.5", 1.5},
		{"text", "'é'", "é"},
		{"bytea", `'\x01'`, []byte{1}},
		{"uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}},
		{"date", "'1960-01-02'", date(1960, 1, 2, 0, 0, 0, 0)},
		{"timestamptz", "'1960-01-02 03:04:05+00'", date(1960, 1, 2, 3, 4, 5, 0)},
		{"time", "'01:02:03'", Time{Microseconds: 3723e6, Valid: true}},
		{"interval", "'1 mon'", Interval{Months: 1, Valid: true}},
		{"jsonb", `'{"a": 1}'`, map[string]any{"a": 1.0}},
		{"text[]", "'{a,NULL}'", []any{"a", nil}},
		{"int4", "NULL", nil},
	}
	pairs := make([][2]string, len(cases))
	for i, c := range cases {
		pairs[i] = [2]string{c.typ, c.expr}
	}
	vals := serverValues(t, pairs)
	for i, c := range cases {
		oid := oidOf(t, m, c.typ)
		srcs := map[int16][]byte{1: vals[i].bin, 0: []byte(vals[i].text)}
		if vals[i].null {
			srcs = map[int16][]byte{1: nil, 0: nil}
		}
		for format, src := range srcs {
			got, err := m.DecodeValue(oid, format, src)
			if err != nil {
				t.Errorf("%s format %d: %v", c.typ, format, err)
				continue
			}
			if tm, ok := c.want.(time.Time); ok {
				if g, ok := got.(time.Time); !ok || !g.Equal(tm) {
					t.Errorf("%s format %d: got %#v", c.typ, format, got)
				}
				continue
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s format %d: got %#v (%T), want %#v (%T)", c.typ, format, got, got, c.want, c.want)
			}
		}
	}
}
