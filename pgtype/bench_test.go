package pgtype

import (
	"reflect"
	"testing"
	"time"
)

// benchRow is a row of (int4, text, float8, timestamptz, text, bool) in
// binary, as a DataRow carries it.
func benchRow(tb testing.TB, m *Map) (oids []uint32, row [][]byte) {
	oids = []uint32{Int4OID, TextOID, Float8OID, TimestamptzOID, TextOID, BoolOID}
	args := []any{int32(12345), "a short name", 3.25, time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC), "some longer description text", true}
	for i, a := range args {
		b, format, null, err := m.Encode(oids[i], a, nil)
		if err != nil || null || format != 1 {
			tb.Fatalf("encode %v: %v", a, err)
		}
		row = append(row, b)
	}
	return oids, row
}

// cachedPlan mimics the caller's cache: a plan is reused while the
// destination type matches.
type cachedPlan struct {
	typ  reflect.Type
	plan ScanPlan
}

func TestRowScanAllocs(t *testing.T) {
	m := NewMap()
	oids, row := benchRow(t, m)
	var (
		id    int32
		name  string
		score float64
		at    time.Time
		desc  string
		ok    bool
	)
	dsts := []any{&id, &name, &score, &at, &desc, &ok}
	plans := make([]cachedPlan, len(dsts))
	scan := func() {
		for i, d := range dsts {
			if plans[i].typ != reflect.TypeOf(d) {
				plans[i] = cachedPlan{reflect.TypeOf(d), mustPlan(t, m, oids[i], 1, d)}
			}
			if err := plans[i].plan.Scan(row[i], d); err != nil {
				t.Fatal(err)
			}
		}
	}
	scan()
	if id != 12345 || name != "a short name" || score != 3.25 || !at.Equal(time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)) || desc != "some longer description text" || !ok {
		t.Fatalf("scanned %v %q %v %v %q %v", id, name, score, at, desc, ok)
	}
	if n := testing.AllocsPerRun(100, scan); n != 2 {
		t.Errorf("%v allocations per row, want 2 (the two strings)", n)
	}
	buf := make([]byte, 0, 256)
	for _, a := range []any{int64(5), "text", time.Now()} {
		for _, oid := range []uint32{Int8OID, TextOID, TimestamptzOID} {
			if _, _, _, err := m.Encode(oid, a, buf[:0]); err != nil {
				continue
			}
			if n := testing.AllocsPerRun(100, func() { _, _, _, _ = m.Encode(oid, a, buf[:0]) }); n != 0 {
				t.Errorf("Encode(%d, %T): %v allocations, want 0", oid, a, n)
			}
		}
	}
}

func BenchmarkScanRow(b *testing.B) {
	m := NewMap()
	oids, row := benchRow(b, m)
	var (
		id    int32
		name  string
		score float64
		at    time.Time
		desc  string
		ok    bool
	)
	dsts := []any{&id, &name, &score, &at, &desc, &ok}
	plans := make([]cachedPlan, len(dsts))
	b.ReportAllocs()
	for b.Loop() {
		for i, d := range dsts {
			if plans[i].typ != reflect.TypeOf(d) {
				p, err := m.PlanScan(oids[i], 1, d)
				if err != nil {
					b.Fatal(err)
				}
				plans[i] = cachedPlan{reflect.TypeOf(d), p}
			}
			if err := plans[i].plan.Scan(row[i], d); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	m := NewMap()
	for _, c := range []struct {
		name string
		oid  uint32
		arg  any
	}{
		{"int64", Int8OID, any(int64(123456789))},
		{"string", TextOID, any("a short name")},
		{"time", TimestamptzOID, any(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				buf, _, _, err = m.Encode(c.oid, c.arg, buf[:0])
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPlanScan(b *testing.B) {
	m := NewMap()
	var v int64
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.PlanScan(Int8OID, 1, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDriverValueText: a value database/sql gets as its text (a
// uuid, an int4[] read in binary) costs one allocation, the string.
func BenchmarkDriverValueText(b *testing.B) {
	m := NewMap()
	uuid := []byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}
	arr := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 4, 0, 0, 0, 8}
	for _, c := range []struct {
		name string
		oid  uint32
		src  []byte
		want string
	}{{"uuid", UUIDOID, uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}, {"int4[]", Int4ArrayOID, arr, "{7,8}"}} {
		b.Run(c.name, func(b *testing.B) {
			dec, err := m.DriverDecoder(c.oid, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				v, err := dec(c.src)
				if err != nil || v != c.want {
					b.Fatalf("%#v, %v", v, err)
				}
			}
		})
	}
}
