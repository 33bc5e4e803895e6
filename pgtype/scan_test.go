package pgtype

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func scanOne(t *testing.T, m *Map, oid uint32, format int16, src []byte, dst any) error {
	t.Helper()
	p, err := m.PlanScan(oid, format, dst)
	if err != nil {
		t.Fatalf("PlanScan(%d, %T): %v", oid, dst, err)
	}
	return p.Scan(src, dst)
}

func TestScanErrors(t *testing.T) {
	m := NewMap()
	vals := serverValues(t, [][2]string{
		{"int8", "40000"}, {"timestamptz", "'infinity'"}, {"date", "'-infinity'"}, {"numeric", "1.5"},
		{"numeric", "'NaN'"}, {"interval", "'1 mon'"}, {"int4[]", "'{1,NULL}'"}, {"numeric", "1e30"},
	})
	cases := []struct {
		oid  uint32
		src  []byte
		dst  any
		want string
		is   error
	}{
		{Int8OID, vals[0].bin, new(int16), "cannot scan int8 value 40000 into *int16: out of range", ErrOutOfRange},
		{Int8OID, be64(-1), new(uint32), "cannot scan int8 value -1 into *uint32: out of range", ErrOutOfRange},
		{Int4OID, nil, new(int32), "cannot scan NULL into *int32", ErrNull},
		{TextOID, nil, new(string), "cannot scan NULL into *string", ErrNull},
		{TimestamptzOID, vals[1].bin, new(time.Time), "cannot scan timestamptz value infinity into *time.Time", nil},
		{DateOID, vals[2].bin, new(time.Time), "cannot scan date value -infinity into *time.Time", nil},
		{NumericOID, vals[3].bin, new(int64), "cannot scan numeric value 1.5 into *int64: value has a fractional part", nil},
		{NumericOID, vals[3].bin, new(big.Int), "cannot scan numeric value 1.5 into *big.Int: value has a fractional part", nil},
		{NumericOID, vals[4].bin, new(big.Rat), "cannot scan numeric value NaN into *big.Rat", nil},
		{NumericOID, vals[7].bin, new(int64), "cannot scan numeric value 1000000000000000000000000000000 into *int64: out of range", ErrOutOfRange},
		{IntervalOID, vals[5].bin, new(time.Duration), "cannot scan interval value 1 mon into *time.Duration: interval with months", nil},
		{Int4ArrayOID, vals[6].bin, new([]int32), "array element 1: cannot scan NULL into *int32", ErrNull},
		{Int4OID, []byte{1, 2, 3}, new(int32), "invalid int4 value (binary format): 3 bytes, want 4", nil},
		{Int4OID, []byte("12x"), new(int32), `invalid int4 value (text format): "12x" is not an integer`, nil},
	}
	for _, c := range cases {
		format := int16(1)
		if c.oid == Int4OID && string(c.src) == "12x" {
			format = 0
		}
		err := scanOne(t, m, c.oid, format, c.src, c.dst)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s into %T: got %v, want %q", m.TypeName(c.oid), c.dst, err, c.want)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s into %T: %v is not %v", m.TypeName(c.oid), c.dst, err, c.is)
		}
	}
}

// TestScanUnknownTypeSaysRegister: a type the Map does not know is named
// once, with how to make it known; with the catalog's name set (pgline
// looks it up), by that name, with the LoadType call to make.
func TestScanUnknownTypeSaysRegister(t *testing.T) {
	type address struct{ Street string }
	_, err := NewMap().PlanScan(20481, 1, new(address))
	var ute *UnknownTypeError
	if err == nil || !errors.Is(err, ErrUnsupportedDest) || !errors.As(err, &ute) || ute.OID != 20481 || ute.Name != "" ||
		err.Error() != "pgtype: cannot scan OID 20481, a type this Map does not know (register it: Conn.LoadType for an enum, composite, domain or range), into *pgtype.address: unsupported destination type" {
		t.Fatalf("scanning an unknown type: %v", err)
	}
	ute.Name = `app."Street Address"`
	if want := `pgtype: cannot scan app."Street Address" (OID 20481), a type this Map does not know (register it: Conn.LoadType(ctx, "app.\"Street Address\"") for an enum, composite, domain or range), into *pgtype.address: unsupported destination type`; ute.Error() != want {
		t.Fatalf("named:\n %s\nwant\n %s", ute.Error(), want)
	}
}

func TestScanUnsupported(t *testing.T) {
	m := NewMap()
	for _, c := range []struct {
		oid uint32
		dst any
	}{{Int4OID, new(time.Time)}, {BoolOID, new(int)}, {TimestamptzOID, new(int64)}, {UUIDOID, new(float64)}} {
		if _, err := m.PlanScan(c.oid, 1, c.dst); err == nil || !strings.Contains(err.Error(), m.TypeName(c.oid)) {
			t.Errorf("PlanScan(%s, %T): %v", m.TypeName(c.oid), c.dst, err)
		}
	}
	var i int
	if _, err := m.PlanScan(Int4OID, 1, i); err == nil {
		t.Error("non-pointer destination accepted")
	}
	if _, err := m.PlanScan(Int4OID, 1, (*int)(nil)); err == nil {
		t.Error("nil pointer destination accepted")
	}
	if _, err := m.PlanScan(Int4OID, 2, &i); err == nil {
		t.Error("format 2 accepted")
	}
	// A plan used with another destination type errs instead of panicking.
	p := mustPlan(t, m, Int4OID, 1, new(int32))
	if err := p.Scan(be32(1), new(int64)); err == nil {
		t.Error("plan accepted a destination of another type")
	}
	if err := p.Scan(be32(1), (*int32)(nil)); err == nil {
		t.Error("plan accepted a nil destination")
	}
}

type myInt int16
type myString string
type myUUID [16]byte

type upperScanner struct{ got any }

func (s *upperScanner) Scan(v any) error { s.got = v; return nil }

func TestScanDestinations(t *testing.T) {
	m := NewMap()
	vals := serverValues(t, [][2]string{
		{"int4", "7"}, {"text", "'héllo'"}, {"numeric", "2.50"}, {"timestamptz", "'2001-02-03 04:05:06+00'"},
		{"uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"}, {"int4[]", "'{1,NULL}'"}, {"bool", "true"},
		{"float8", "2.5"}, {"interval", "'1 day 01:00:00'"}, {"timestamptz", "'infinity'"},
	})
	i4, text, num, ts, uuid, arr, bl, f8, iv, inf := vals[0].bin, vals[1].bin, vals[2].bin, vals[3].bin, vals[4].bin, vals[5].bin, vals[6].bin, vals[7].bin, vals[8].bin, vals[9].bin

	t.Run("pointer to pointer", func(t *testing.T) {
		p := new(int32)
		pp := &p
		if err := scanOne(t, m, Int4OID, 1, nil, pp); err != nil || *pp != nil {
			t.Fatalf("NULL: %v %v", err, *pp)
		}
		if err := scanOne(t, m, Int4OID, 1, i4, pp); err != nil || *pp == nil || **pp != 7 {
			t.Fatalf("7: %v", err)
		}
		var ps *string
		if err := scanOne(t, m, TextOID, 1, text, &ps); err != nil || *ps != "héllo" {
			t.Fatalf("text: %v", err)
		}
	})
	t.Run("sql.Null", func(t *testing.T) {
		var ns sql.NullString
		if err := scanOne(t, m, TextOID, 1, text, &ns); err != nil || ns != (sql.NullString{String: "héllo", Valid: true}) {
			t.Errorf("NullString: %v %+v", err, ns)
		}
		if err := scanOne(t, m, TextOID, 1, nil, &ns); err != nil || ns.Valid {
			t.Errorf("NullString NULL: %v %+v", err, ns)
		}
		var ni sql.NullInt64
		if err := scanOne(t, m, Int4OID, 1, i4, &ni); err != nil || ni != (sql.NullInt64{Int64: 7, Valid: true}) {
			t.Errorf("NullInt64: %v %+v", err, ni)
		}
		var n16 sql.NullInt16
		if err := scanOne(t, m, Int4OID, 1, i4, &n16); err != nil || n16 != (sql.NullInt16{Int16: 7, Valid: true}) {
			t.Errorf("NullInt16: %v %+v", err, n16)
		}
		var nb sql.NullBool
		if err := scanOne(t, m, BoolOID, 1, bl, &nb); err != nil || !nb.Bool || !nb.Valid {
			t.Errorf("NullBool: %v %+v", err, nb)
		}
		var nf sql.NullFloat64
		if err := scanOne(t, m, Float8OID, 1, f8, &nf); err != nil || nf.Float64 != 2.5 {
			t.Errorf("NullFloat64: %v %+v", err, nf)
		}
		var nt sql.NullTime
		if err := scanOne(t, m, TimestamptzOID, 1, ts, &nt); err != nil || !nt.Time.Equal(date(2001, 2, 3, 4, 5, 6, 0)) {
			t.Errorf("NullTime: %v %+v", err, nt)
		}
		var g sql.Null[float64]
		if err := scanOne(t, m, NumericOID, 1, num, &g); err != nil || g.V != 2.5 {
			t.Errorf("Null[float64] from numeric: %v %+v", err, g)
		}
		var nby sql.NullByte
		if err := scanOne(t, m, Int4OID, 1, i4, &nby); err != nil || nby.Byte != 7 {
			t.Errorf("NullByte: %v %+v", err, nby)
		}
	})
	t.Run("scanner gets driver values", func(t *testing.T) {
		for _, c := range []struct {
			oid  uint32
			src  []byte
			want any
		}{
			{Int4OID, i4, int64(7)}, {TextOID, text, "héllo"}, {NumericOID, num, "2.50"}, {BoolOID, bl, true},
			{UUIDOID, uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}, {IntervalOID, iv, "1 day 01:00:00"},
			{TimestamptzOID, inf, "infinity"}, {Int4OID, nil, nil},
		} {
			var s upperScanner
			if err := scanOne(t, m, c.oid, 1, c.src, &s); err != nil || s.got != c.want {
				t.Errorf("%s: %v, got %#v want %#v", m.TypeName(c.oid), err, s.got, c.want)
			}
		}
		var s upperScanner
		if err := scanOne(t, m, Int4ArrayOID, 1, arr, &s); err != nil || s.got != "{1,NULL}" {
			t.Errorf("array: %v %#v", err, s.got)
		}
	})
	t.Run("any", func(t *testing.T) {
		var v any
		if err := scanOne(t, m, Int4OID, 1, i4, &v); err != nil || v != int32(7) {
			t.Errorf("int4: %v %#v", err, v)
		}
		if err := scanOne(t, m, Int4ArrayOID, 1, arr, &v); err != nil || len(v.([]any)) != 2 || v.([]any)[0] != int32(1) || v.([]any)[1] != nil {
			t.Errorf("int4[]: %v %#v", err, v)
		}
		if err := scanOne(t, m, NumericOID, 1, num, &v); err != nil || v.(Numeric).String() != "2.50" {
			t.Errorf("numeric: %v %#v", err, v)
		}
		if err := scanOne(t, m, TimestamptzOID, 1, inf, &v); err != nil || v != (Timestamp{InfinityModifier: Infinity, Valid: true}) {
			t.Errorf("infinity: %v %#v", err, v)
		}
	})
	t.Run("raw bytes alias, []byte copies", func(t *testing.T) {
		src := []byte("abc")
		var rb sql.RawBytes
		if err := scanOne(t, m, TextOID, 1, src, &rb); err != nil || &rb[0] != &src[0] {
			t.Errorf("RawBytes: %v", err)
		}
		var b []byte
		if err := scanOne(t, m, TextOID, 1, src, &b); err != nil || &b[0] == &src[0] || string(b) != "abc" {
			t.Errorf("[]byte: %v", err)
		}
		if err := scanOne(t, m, ByteaOID, 1, src, &b); err != nil || &b[0] == &src[0] {
			t.Errorf("bytea []byte: %v", err)
		}
		if err := scanOne(t, m, ByteaOID, 1, nil, &b); err != nil || b != nil {
			t.Errorf("bytea NULL: %v %v", err, b)
		}
	})
	t.Run("named types", func(t *testing.T) {
		var mi myInt
		if err := scanOne(t, m, Int4OID, 1, i4, &mi); err != nil || mi != 7 {
			t.Errorf("myInt: %v %v", err, mi)
		}
		if err := scanOne(t, m, Int4OID, 1, be32(40000), &mi); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("myInt overflow: %v", err)
		}
		var ms myString
		if err := scanOne(t, m, TextOID, 1, text, &ms); err != nil || ms != "héllo" {
			t.Errorf("myString: %v %v", err, ms)
		}
		var mu myUUID
		if err := scanOne(t, m, UUIDOID, 1, uuid, &mu); err != nil || mu[0] != 0xa0 {
			t.Errorf("myUUID: %v %v", err, mu)
		}
	})
	t.Run("any type into string", func(t *testing.T) {
		var s string
		if err := scanOne(t, m, TimestamptzOID, 1, ts, &s); err != nil || s != "2001-02-03 04:05:06+00" {
			t.Errorf("timestamptz: %v %q", err, s)
		}
		if err := scanOne(t, m, BoolOID, 1, bl, &s); err != nil || s != "t" {
			t.Errorf("bool: %v %q", err, s)
		}
	})
	t.Run("unknown OID is text", func(t *testing.T) {
		if m.ResultFormat(99999) != 0 || m.ResultFormat(Int4OID) != 1 || m.ResultFormat(Int4ArrayOID) != 1 {
			t.Error("ResultFormat")
		}
		var s string
		if err := scanOne(t, m, 99999, 0, []byte("happy"), &s); err != nil || s != "happy" {
			t.Errorf("enum: %v %q", err, s)
		}
		var v any
		if err := scanOne(t, m, 99999, 0, []byte("happy"), &v); err != nil || v != "happy" {
			t.Errorf("enum any: %v %#v", err, v)
		}
	})
}
