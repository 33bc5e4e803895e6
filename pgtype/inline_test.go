package pgtype

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// inlineCases are the plans Inline.Scan stands in for, with a fresh
// destination of each.
var inlineCases = []struct {
	oid uint32
	dst func() any
}{
	{Int2OID, func() any { return new(int16) }},
	{Int4OID, func() any { return new(int32) }},
	{Int8OID, func() any { return new(int64) }},
	{Float4OID, func() any { return new(float32) }},
	{Float8OID, func() any { return new(float64) }},
	{BoolOID, func() any { return new(bool) }},
	{TimestampOID, func() any { return new(time.Time) }},
	{TimestamptzOID, func() any { return new(time.Time) }},
}

// checkInline checks that Inline.Scan of src into a destination of the
// plan for (oid, binary, dst) agrees with the plan: when it reports that
// it decoded, the plan decodes the same value without an error; when it
// does not, it left the destination alone.
func checkInline(t *testing.T, m *Map, oid uint32, newDst func() any, src []byte) {
	t.Helper()
	plan, err := m.PlanScan(oid, 1, newDst())
	if err != nil {
		t.Fatal(err)
	}
	k := InlineOf(plan)
	if k == InlineNone {
		t.Fatalf("%s into %T: no Inline", m.TypeName(oid), newDst())
	}
	viaInline, viaPlan := newDst(), newDst()
	zero := newDst()
	ok := k.Scan(src, viaInline)
	planErr := plan.Scan(src, viaPlan)
	if !ok {
		if !reflect.DeepEqual(viaInline, zero) {
			t.Fatalf("%s % x: Inline.Scan reported false but wrote %v", m.TypeName(oid), src, reflect.ValueOf(viaInline).Elem())
		}
		return
	}
	if planErr != nil {
		t.Fatalf("%s % x: Inline.Scan decoded %v, the plan failed: %v", m.TypeName(oid), src, reflect.ValueOf(viaInline).Elem(), planErr)
	}
	a, b := reflect.ValueOf(viaInline).Elem().Interface(), reflect.ValueOf(viaPlan).Elem().Interface()
	switch a := a.(type) {
	case float32:
		if b := b.(float32); a != b && !(a != a && b != b) {
			t.Fatalf("%s % x: Inline.Scan %v, the plan %v", m.TypeName(oid), src, a, b)
		}
		return
	case float64:
		if b := b.(float64); a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
			t.Fatalf("%s % x: Inline.Scan %v, the plan %v", m.TypeName(oid), src, a, b)
		}
		return
	case time.Time:
		// Same instant and the same location (UTC), as == would not
		// say for two equal times built differently.
		if b := b.(time.Time); !a.Equal(b) || a.Location() != b.Location() {
			t.Fatalf("%s % x: Inline.Scan %v, the plan %v", m.TypeName(oid), src, a, b)
		}
		return
	}
	if a != b {
		t.Fatalf("%s % x: Inline.Scan %v, the plan %v", m.TypeName(oid), src, a, b)
	}
}

// TestInlineMatchesPlan: on common values and on every edge the plan
// handles itself (NULL, a wrong length, a bool byte of 2, ±infinity,
// NaN), Inline.Scan agrees with the plan or leaves the work to it.
func TestInlineMatchesPlan(t *testing.T) {
	m := NewMap()
	srcs := [][]byte{
		nil, {}, {0}, {1}, {2}, {0xff},
		{0x80, 0x00}, {0x12, 0x34}, {0, 0, 0x12, 0x67}, {0x7f, 0xff, 0xff, 0xff}, {0x7f, 0xc0, 0, 0}, {0x7f, 0x80, 0, 0},
		{0, 0, 0, 0, 0, 0, 0, 0}, {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0x80, 0, 0, 0, 0, 0, 0, 0},
		{0x80, 0, 0, 0, 0, 0, 0, 1}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0x7f, 0xf8, 0, 0, 0, 0, 0, 1},
		{0, 2, 0x1d, 0x6e, 0x8a, 0x2b, 0xf0, 0x00}, {1, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9},
	}
	for _, c := range inlineCases {
		for _, src := range srcs {
			checkInline(t, m, c.oid, c.dst, src)
		}
	}
}

// TestInlineOnlyForBuiltinBinary: Inline is there for the built-in binary
// plans into their own Go type (a domain's included), and for nothing
// else: not the text format, not a widening or named destination, not
// oid (unsigned), not a user Codec's type.
func TestInlineOnlyForBuiltinBinary(t *testing.T) {
	type myInt int32
	m := NewMap()
	if err := m.RegisterDomain("posint", 90001, 0, Int4OID); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterType(Type{Name: "userpoint", OID: 90002, Codec: pointCodec{}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		oid    uint32
		format int16
		dst    any
		inline bool
	}{
		{Int4OID, 1, new(int32), true},
		{90001, 1, new(int32), true},
		{Int4OID, 0, new(int32), false},
		{Int4OID, 1, new(int64), false},
		{Int4OID, 1, new(myInt), false},
		{Int4OID, 1, new(any), false},
		{Int4OID, 1, new(*int32), false},
		{OIDOID, 1, new(uint32), false},
		{OIDOID, 1, new(int32), false},
		{Int8OID, 1, new(int32), false},
		{Float4OID, 1, new(float64), false},
		{DateOID, 1, new(time.Time), false},
		{TextOID, 1, new(string), false},
		{90002, 1, new(string), false},
		{BoolOID, 1, new(bool), true},
		{TimestamptzOID, 1, new(time.Time), true},
	}
	for _, c := range cases {
		plan, err := m.PlanScan(c.oid, c.format, c.dst)
		if err != nil {
			t.Fatalf("%s into %T: %v", m.TypeName(c.oid), c.dst, err)
		}
		if got := InlineOf(plan) != InlineNone; got != c.inline {
			t.Errorf("%s (format %d) into %T: Inline %v, want %v", m.TypeName(c.oid), c.format, c.dst, got, c.inline)
		}
	}
	if InlineNone.Scan([]byte{0, 0, 0, 1}, new(int32)) {
		t.Error("InlineNone decoded a value")
	}
	var nilInt *int32
	plan, _ := m.PlanScan(Int4OID, 1, new(int32))
	if InlineOf(plan).Scan([]byte{0, 0, 0, 1}, nilInt) {
		t.Error("Inline.Scan wrote through a nil pointer")
	}
	if InlineOf(plan).Scan([]byte{0, 0, 0, 1}, new(int64)) {
		t.Error("Inline.Scan decoded into a destination of another type")
	}
}

// FuzzInline: for any bytes, each Inline agrees with its plan (see
// checkInline).
func FuzzInline(f *testing.F) {
	for _, s := range [][]byte{{}, {1}, {2}, {0, 7}, {0, 0, 0, 7}, {0x7f, 0xc0, 0, 0}, {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0x80, 0, 0, 0, 0, 0, 0, 0}, {0, 2, 0x1d, 0x6e, 0x8a, 0x2b, 0xf0, 0x00}} {
		f.Add(s)
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, c := range inlineCases {
			checkInline(t, m, c.oid, c.dst, src)
		}
	})
}
