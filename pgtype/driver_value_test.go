package pgtype

import (
	"bytes"
	"database/sql/driver"
	"encoding/binary"
	"math"
	"reflect"
	"testing"
	"time"
)

func dvBE16(v int16) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func dvBE32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func dvBE64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func TestDriverValue(t *testing.T) {
	m := NewMap()
	ts := time.Date(2000, 1, 2, 3, 4, 5, 6000, time.UTC)
	for _, tc := range []struct {
		name   string
		oid    uint32
		format int16
		src    []byte
		want   driver.Value
	}{
		{"null", Int4OID, 1, nil, nil},
		{"null text", TextOID, 0, nil, nil},
		{"bool", BoolOID, 1, []byte{1}, true},
		{"bool text", BoolOID, 0, []byte("f"), false},
		{"int2", Int2OID, 1, dvBE16(-2), int64(-2)},
		{"int4", Int4OID, 1, dvBE32(-40000), int64(-40000)},
		{"int8", Int8OID, 1, dvBE64(math.MinInt64), int64(math.MinInt64)},
		{"int8 text", Int8OID, 0, []byte("77"), int64(77)},
		{"oid", OIDOID, 1, []byte{0xff, 0xff, 0xff, 0xff}, int64(math.MaxUint32)},
		{"float4", Float4OID, 1, binary.BigEndian.AppendUint32(nil, math.Float32bits(0.5)), float64(0.5)},
		{"float8", Float8OID, 1, binary.BigEndian.AppendUint64(nil, math.Float64bits(-2.5)), float64(-2.5)},
		{"text", TextOID, 1, []byte("héllo"), "héllo"},
		{"varchar text", VarcharOID, 0, []byte("x"), "x"},
		{"empty text", TextOID, 0, []byte{}, ""},
		{"unknown oid text", 999999, 0, []byte("enum_val"), "enum_val"},
		{"unknown oid binary", 999999, 1, []byte{1, 2}, []byte{1, 2}},
		{"bytea", ByteaOID, 1, []byte{0, 1}, []byte{0, 1}},
		{"bytea hex", ByteaOID, 0, []byte(`\x0001`), []byte{0, 1}},
		{"timestamptz", TimestamptzOID, 1, dvBE64(int64(ts.Sub(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) / time.Microsecond)), ts},
		{"timestamptz infinity", TimestamptzOID, 1, dvBE64(math.MaxInt64), "infinity"},
		{"date -infinity", DateOID, 1, dvBE32(math.MinInt32), "-infinity"},
		{"numeric text", NumericOID, 0, []byte("1.50"), "1.50"},
		{"uuid", UUIDOID, 1, bytes.Repeat([]byte{0xab}, 16), "abababab-abab-abab-abab-abababababab"},
		{"jsonb", JSONBOID, 1, []byte("\x01{}"), []byte("{}")},
		{"int4[] empty", Int4ArrayOID, 1, append(append(dvBE32(0), dvBE32(0)...), dvBE32(Int4OID)...), "{}"},
	} {
		got, err := m.DriverValue(tc.oid, tc.format, tc.src)
		if err != nil {
			t.Errorf("%s: DriverValue: %v", tc.name, err)
			continue
		}
		dec, err := m.DriverDecoder(tc.oid, tc.format)
		if err != nil {
			t.Fatalf("%s: DriverDecoder: %v", tc.name, err)
		}
		got2, err := dec(tc.src)
		if err != nil {
			t.Errorf("%s: decoder: %v", tc.name, err)
			continue
		}
		for _, g := range []driver.Value{got, got2} {
			if !reflect.DeepEqual(g, tc.want) {
				t.Errorf("%s: got %#v, want %#v", tc.name, g, tc.want)
			}
			if g != nil && tc.want != nil && tc.format == m.ResultFormat(tc.oid) && tc.oid != TimestamptzOID && tc.oid != DateOID && reflect.TypeOf(g) != m.DriverScanType(tc.oid) {
				t.Errorf("%s: value %T, DriverScanType %v", tc.name, g, m.DriverScanType(tc.oid))
			}
		}
		// Values never alias src.
		if b, ok := got2.([]byte); ok && len(b) > 0 && len(tc.src) > 0 && &b[0] == &tc.src[len(tc.src)-len(b)] {
			t.Errorf("%s: value aliases src", tc.name)
		}
	}
}

func TestDriverValueErrors(t *testing.T) {
	m := NewMap()
	if _, err := m.DriverValue(Int4OID, 2, []byte{0, 0, 0, 1}); err == nil {
		t.Error("format 2 accepted")
	}
	if _, err := m.DriverDecoder(Int4OID, -1); err == nil {
		t.Error("format -1 accepted by DriverDecoder")
	}
	for _, tc := range []struct {
		oid    uint32
		format int16
		src    []byte
	}{
		{Int4OID, 1, []byte{1, 2}},
		{Int8OID, 0, []byte("12x")},
		{BoolOID, 1, []byte{1, 1}},
		{Float8OID, 1, []byte{1}},
		{TimestamptzOID, 1, []byte{1, 2, 3}},
		{UUIDOID, 1, []byte{1}},
		{Int4ArrayOID, 1, []byte{0, 0, 0, 9}},
	} {
		dec, _ := m.DriverDecoder(tc.oid, tc.format)
		if v, err := dec(tc.src); err == nil {
			t.Errorf("oid %d format %d % x: decoded %#v, want an error", tc.oid, tc.format, tc.src, v)
		}
		if v, err := m.DriverValue(tc.oid, tc.format, tc.src); err == nil {
			t.Errorf("oid %d format %d % x: DriverValue gave %#v, want an error", tc.oid, tc.format, tc.src, v)
		}
	}
}

func TestDatabaseTypeName(t *testing.T) {
	m := NewMap()
	for oid, want := range map[uint32]string{
		Int4OID: "INT4", TextOID: "TEXT", TimestamptzOID: "TIMESTAMPTZ", BPCharOID: "BPCHAR",
		Int4ArrayOID: "_INT4", TextArrayOID: "_TEXT", JSONBArrayOID: "_JSONB", 123456: "123456",
	} {
		if got := m.DatabaseTypeName(oid); got != want {
			t.Errorf("DatabaseTypeName(%d) = %q, want %q", oid, got, want)
		}
	}
}

// FuzzDriverValue: any bytes, for any type and format, decode to a value
// or an error, never a panic; the decoder and DriverValue agree.
func FuzzDriverValue(f *testing.F) {
	m := NewMap()
	f.Add(uint32(Int4OID), int16(1), dvBE32(7))
	f.Add(uint32(TimestamptzOID), int16(1), dvBE64(0))
	f.Add(uint32(NumericOID), int16(1), []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add(uint32(TextArrayOID), int16(1), []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 'a'})
	f.Add(uint32(Int4ArrayOID), int16(1), []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2})
	f.Add(uint32(Int4ArrayOID), int16(0), []byte("[0:1][1:2]={{1,2},{3,4}}"))
	f.Add(uint32(IntervalOID), int16(0), []byte("1 day"))
	f.Add(uint32(DateOID), int16(0), []byte("2020-01-01"))
	f.Add(uint32(ByteaOID), int16(0), []byte(`\x0`))
	f.Fuzz(func(t *testing.T, oid uint32, format int16, src []byte) {
		v1, err1 := m.DriverValue(oid, format, src)
		dec, err := m.DriverDecoder(oid, format)
		if err != nil {
			if err1 == nil {
				t.Fatalf("DriverDecoder refused format %d that DriverValue took", format)
			}
			return
		}
		v2, err2 := dec(src)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("DriverValue err %v, decoder err %v", err1, err2)
		}
		if err1 == nil && !reflect.DeepEqual(v1, v2) {
			// NaN floats differ from themselves.
			if f1, ok := v1.(float64); !ok || !math.IsNaN(f1) {
				t.Fatalf("DriverValue %#v, decoder %#v", v1, v2)
			}
		}
	})
}

// TestDriverValueArrayBounds: an array whose lower bounds are not 1 keeps
// its bounds decoration in its text form, as the server writes it, from
// binary and from text.
func TestDriverValueArrayBounds(t *testing.T) {
	m := NewMap()
	// int4[] '[2:3]={1,2}' in binary: ndim 1, no NULLs, int4, length 2,
	// lower bound 2, then 1 and 2.
	bin := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2}
	for _, c := range []struct {
		format int16
		src    []byte
		want   string
	}{
		{1, bin, "[2:3]={1,2}"},
		{0, []byte("[0:1][1:2]={{1,2},{3,4}}"), "[0:1][1:2]={{1,2},{3,4}}"},
		{0, []byte("{1,2}"), "{1,2}"},
	} {
		v, err := m.DriverValue(Int4ArrayOID, c.format, c.src)
		if err != nil || v != c.want {
			t.Errorf("format %d %q: %#v, %v; want %q", c.format, c.src, v, err, c.want)
		}
	}
}
