package pgtype

import (
	"encoding/binary"
	"errors"
	"math"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestNewTypesNull scans SQL NULL into the new destinations and encodes
// nil values as NULL.
func TestNewTypesNull(t *testing.T) {
	m := userMap(t)
	hstore := oidOf(t, m, "hstore")
	for _, c := range []struct {
		oid     uint32
		dst     any
		wantErr bool
	}{
		{Int4ArrayOID, new([][]int32), false},
		{InetOID, new(netip.Prefix), true},
		{InetOID, new(*netip.Prefix), false},
		{CIDROID, new(netip.Addr), true},
		{MacaddrOID, new(net.HardwareAddr), false},
		{Int4RangeOID, new(Range[int32]), true},
		{Int4RangeOID, new(*Range[int32]), false},
		{hstore, new(map[string]*string), false},
		{oidOf(t, m, "rt_pt"), new(point), true},
		{oidOf(t, m, "rt_pt"), new(*point), false},
		{oidOf(t, m, "rt_pt"), new(any), false},
	} {
		for _, format := range []int16{0, 1} {
			err := mustPlan(t, m, c.oid, format, c.dst).Scan(nil, c.dst)
			if c.wantErr != (err != nil) || err != nil && !errors.Is(err, ErrNull) {
				t.Errorf("NULL %s into %T: %v", m.TypeName(c.oid), c.dst, err)
			}
		}
	}
	for _, c := range []struct {
		oid uint32
		arg any
	}{
		{InetOID, (*net.IPNet)(nil)}, {InetOID, net.IP(nil)}, {InetOID, (*netip.Prefix)(nil)},
		{MacaddrOID, net.HardwareAddr(nil)}, {Int4RangeOID, (*Range[int32])(nil)},
		{hstore, map[string]*string(nil)}, {oidOf(t, m, "rt_pt"), (*point)(nil)}, {Int4ArrayOID, [][]int32(nil)},
	} {
		out, _, null, err := m.Encode(c.oid, c.arg, nil)
		if err != nil || !null || len(out) != 0 {
			t.Errorf("Encode(%s, %#v) = %x, null %v, %v; want NULL", m.TypeName(c.oid), c.arg, out, null, err)
		}
	}
}

// TestNewTypesErrors checks that bad values and mismatches are clear
// errors.
func TestNewTypesErrors(t *testing.T) {
	m := userMap(t)
	encErrs := []struct {
		oid  uint32
		arg  any
		want string
	}{
		{Int4ArrayOID, [][]int32{{1, 2}, {3}}, "rectangular"},
		{Int4ArrayOID, [][]int32{{}, {3}}, "rectangular"},
		{Int4ArrayOID, []any{[]int32{1}, int32(2)}, "rectangular"},
		{Int4ArrayOID, [][][][][][][]int32{{{{{{{1}}}}}}}, "more than 6 dimensions"},
		{CIDROID, pfx("10.1.0.0/8"), "bits set right of its mask"},
		{InetOID, netip.Addr{}, "invalid"},
		{InetOID, netip.MustParseAddr("fe80::1%eth0"), "zoned"},
		{MacaddrOID, mac("08:00:2b:01:02:03:04:05"), "8-byte address, want 6"},
		{Int4RangeOID, Range[int32]{Lower: 1, Upper: 2}, "invalid bound type"},
		{Int4RangeOID, Range[*int32]{LowerType: Inclusive, UpperType: Unbounded}, "a bound is NULL"},
		{Int4OID, Range[int32]{Empty: true}, "unsupported"},
		{oidOf(t, m, "rt_pt"), []any{1, "x"}, "2 fields, want 3"},
		{RecordOID, []any{1}, "register it with RegisterComposite"},
		{oidOf(t, m, "hstore"), map[string]int{"a": 1}, "unsupported"},
	}
	for _, c := range encErrs {
		_, _, _, err := m.Encode(c.oid, c.arg, nil)
		var ee *EncodeError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ee) {
			t.Errorf("Encode(%s, %#v): %v, want an EncodeError with %q", m.TypeName(c.oid), c.arg, err, c.want)
		}
	}

	scanErrs := []struct {
		oid    uint32
		format int16
		src    string
		dst    any
		want   string
	}{
		{Int4ArrayOID, 0, "{{1,2},{3,4}}", new([]int32), "has 2 dimensions, the destination 1"},
		{Int4ArrayOID, 0, "{1,2}", new([][]int32), "has 1 dimensions, the destination 2"},
		{Int4ArrayOID, 0, "{{1,2},{3}}", new([][]int32), "different lengths"},
		{Int4ArrayOID, 0, "{{1,2},3}", new([][]int32), "sub-array was expected"},
		{Int4ArrayOID, 0, "{{{{{{{1}}}}}}}", new([]int32), "more than 6 dimensions"},
		{Int4ArrayOID, 0, "{{}}", new([][]int32), "empty sub-array"},
		{InetOID, 0, "10.0.0.1/8", new(netip.Addr), "has a netmask"},
		{InetOID, 0, "10.0.0.300", new(netip.Prefix), "invalid inet value (text format)"},
		{MacaddrOID, 0, "08:00:2b:01:02:03:04:05", new(net.HardwareAddr), "invalid macaddr value (text format)"},
		{Int4RangeOID, 0, "[1,2", new(Range[int32]), "missing ] or )"},
		{Int4RangeOID, 0, "[x,2)", new(Range[int32]), "lower bound"},
		{oidOf(t, m, "hstore"), 0, `"a"=>NULL`, new(map[string]string), "cannot scan NULL"},
		{oidOf(t, m, "hstore"), 0, `"a"=>`, new(map[string]*string), "malformed value"},
		{oidOf(t, m, "rt_pt"), 0, `(1,x)`, new(point), "2 fields, want 3"},
		{oidOf(t, m, "rt_pt"), 0, `(1,x,2000-01-01)`, new(struct{ A, B int }), "3 fields) into"},
		{oidOf(t, m, "rt_pt"), 0, `(x,y,2000-01-01 00:00:00+00)`, new(point), "field 1"},
	}
	for _, c := range scanErrs {
		p, err := m.PlanScan(c.oid, c.format, c.dst)
		if err == nil {
			err = p.Scan([]byte(c.src), c.dst)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("scan %s %q into %T: %v, want %q", m.TypeName(c.oid), c.src, c.dst, err, c.want)
		}
	}
}

// TestInetText checks the text form of inet values without a mask, which
// inet_out prints bare (value::text adds the mask).
func TestInetText(t *testing.T) {
	out, err := srv.Query("SELECT '192.168.1.5'::inet, '2001:db8::1'::inet, '::ffff:1.2.3.4'::inet, '10.0.0.0/8'::cidr, '1.2.3.4/32'::cidr")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMap()
	var got []string
	for _, v := range []struct {
		oid uint32
		p   netip.Prefix
	}{{InetOID, pfx("192.168.1.5/32")}, {InetOID, pfx("2001:db8::1/128")}, {InetOID, pfx("::ffff:1.2.3.4/128")}, {CIDROID, pfx("10.0.0.0/8")}, {CIDROID, pfx("1.2.3.4/32")}} {
		bin, _, _, err := m.Encode(v.oid, v.p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var s string
		if err := mustPlan(t, m, v.oid, 1, &s).Scan(bin, &s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if strings.Join(got, "|") != out {
		t.Errorf("text forms %q, server %q", strings.Join(got, "|"), out)
	}
}

// TestDomains checks that domains over known types need no registration
// for results (the server describes their columns with the base type's
// OID and sends the base type's bytes), that an unregistered domain OID
// falls back to text, and that registration makes it binary.
func TestDomains(t *testing.T) {
	oids, err := userTypes()
	if err != nil {
		t.Fatal(err)
	}
	domain := oids["rt_posint"][0]
	out, err := srv.Query("SELECT typsend::text, typbasetype FROM pg_type WHERE oid = " + itoa(int(domain)))
	if err != nil || out != "int4send|23" {
		t.Fatalf("domain send function and base type: %q, %v", out, err)
	}
	vals := serverValues(t, [][2]string{{"rt_posint", "7"}})
	plain := NewMap()
	var n int32
	if err := mustPlan(t, plain, Int4OID, 1, &n).Scan(vals[0].bin, &n); err != nil || n != 7 {
		t.Errorf("domain bytes as int4: %d, %v", n, err)
	}
	if f := plain.ResultFormat(domain); f != 0 {
		t.Errorf("unregistered domain: format %d, want text", f)
	}
	if err := mustPlan(t, plain, domain, 0, &n).Scan([]byte(vals[0].text), &n); err != nil || n != 7 {
		t.Errorf("unregistered domain as text: %d, %v", n, err)
	}
	m := userMap(t)
	if f := m.ResultFormat(domain); f != 1 || m.TypeName(domain) != "rt_posint" {
		t.Errorf("registered domain: format %d, name %q", f, m.TypeName(domain))
	}
	if got, _ := m.ArrayElem(oids["rt_posint"][1]); got != domain {
		t.Errorf("domain array element %d, want %d", got, domain)
	}
}

// TestUnknownTypesText checks that unregistered enums, composites and
// hstore are requested as text and scan into *string.
func TestUnknownTypesText(t *testing.T) {
	oids, err := userTypes()
	if err != nil {
		t.Fatal(err)
	}
	m := NewMap()
	for _, name := range []string{"rt_mood", "rt_pt", "hstore"} {
		oid := oids[name][0]
		if f := m.ResultFormat(oid); f != 0 {
			t.Errorf("%s: format %d, want 0", name, f)
		}
		var s string
		if err := mustPlan(t, m, oid, 0, &s).Scan([]byte("(1,x)"), &s); err != nil || s != "(1,x)" {
			t.Errorf("%s as text: %q, %v", name, s, err)
		}
	}
	// A composite with a field of an unknown type is text too.
	if err := m.RegisterComposite("c", 900001, 0, Int4OID, oids["rt_mood"][0]); err != nil {
		t.Fatal(err)
	}
	if f := m.ResultFormat(900001); f != 0 {
		t.Errorf("composite with an unknown field: format %d", f)
	}
}

func TestRegisterErrors(t *testing.T) {
	m := NewMap()
	for _, err := range []error{
		m.RegisterEnum("x", Int4OID, 0),
		m.RegisterEnum("x", 0, 0),
		m.RegisterEnum("x", 900001, TextArrayOID),
		m.RegisterEnum("x", 900001, 900001),
		m.RegisterDomain("d", 900002, 0, 900999),
		m.RegisterArray(900003, 900999),
		m.RegisterName("postgis", 900004, 0),
		m.RegisterType(Type{Name: "t", OID: 900005}),
	} {
		if err == nil {
			t.Error("registration accepted")
		}
	}
	if err := m.RegisterArray(900010, UUIDOID); err != nil {
		t.Fatal(err)
	}
	if e, ok := m.ArrayElem(900010); !ok || e != UUIDOID || m.TypeName(900010) != "uuid[]" {
		t.Errorf("RegisterArray: %d %v %q", e, ok, m.TypeName(900010))
	}
}

// pointCodec is a user Codec for a type with the binary form of point
// (x, y float8), registered at a made-up OID (userPointOID).
type pointCodec struct{}

// Made-up OIDs of the user type of pointCodec.
const (
	userPointOID      = 900050
	userPointArrayOID = 900051
)

// withElemOID returns a copy of a binary array with its element type OID
// set to oid.
func withElemOID(arr []byte, oid uint32) []byte {
	out := append([]byte(nil), arr...)
	binary.BigEndian.PutUint32(out[8:], oid)
	return out
}

type pgPoint struct{ X, Y float64 }

func (pointCodec) ResultFormat() int16 { return 1 }

func (pointCodec) decode(format int16, src []byte) (pgPoint, error) {
	if format != 1 || len(src) != 16 {
		return pgPoint{}, errors.New("bad point")
	}
	return pgPoint{math.Float64frombits(binary.BigEndian.Uint64(src)), math.Float64frombits(binary.BigEndian.Uint64(src[8:]))}, nil
}

func (c pointCodec) PlanScan(format int16, dst any) ScanPlan {
	if _, ok := dst.(*pgPoint); !ok {
		return nil
	}
	return valuePlan(func(src []byte) (pgPoint, error) { return c.decode(format, src) })
}

func (c pointCodec) DecodeValue(format int16, src []byte) (any, error) { return c.decode(format, src) }

func (pointCodec) Encode(arg any, buf []byte) ([]byte, int16, error) {
	p, ok := arg.(pgPoint)
	if !ok {
		return buf, 0, errors.ErrUnsupported
	}
	buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(p.X))
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(p.Y)), 1, nil
}

func TestRegisterType(t *testing.T) {
	m := NewMap()
	if err := m.RegisterType(Type{Name: "userpoint", OID: userPointOID, ArrayOID: userPointArrayOID, Codec: pointCodec{}}); err != nil {
		t.Fatal(err)
	}
	// The server's point values, whose bytes the user codec decodes.
	vals := serverValues(t, [][2]string{{"point", "'(1.5,-2)'"}, {"point[]", "'{\"(1,2)\",NULL}'"}})
	vals[1].bin = withElemOID(vals[1].bin, userPointOID)
	var p pgPoint
	if err := mustPlan(t, m, userPointOID, 1, &p).Scan(vals[0].bin, &p); err != nil || p != (pgPoint{1.5, -2}) {
		t.Errorf("point: %v, %v", p, err)
	}
	for _, arg := range []any{pgPoint{1.5, -2}, &pgPoint{1.5, -2}} {
		out, format, null, err := m.Encode(userPointOID, arg, nil)
		if err != nil || format != 1 || null || string(out) != string(vals[0].bin) {
			t.Errorf("Encode(%v) = %x %d %v %v, server %x", arg, out, format, null, err, vals[0].bin)
		}
	}
	if out, format, _, err := m.Encode(userPointOID, "(1,2)", nil); err != nil || format != 0 || string(out) != "(1,2)" {
		t.Errorf("string for point: %q %d %v", out, format, err)
	}
	if _, _, _, err := m.Encode(userPointOID, 42, nil); err == nil {
		t.Error("int for point accepted")
	}
	var ps []*pgPoint
	if err := mustPlan(t, m, userPointArrayOID, 1, &ps).Scan(vals[1].bin, &ps); err != nil || len(ps) != 2 || *ps[0] != (pgPoint{1, 2}) || ps[1] != nil {
		t.Errorf("point[]: %v, %v", ps, err)
	}
	var a any
	if err := mustPlan(t, m, userPointOID, 1, &a).Scan(vals[0].bin, &a); err != nil || a != (pgPoint{1.5, -2}) {
		t.Errorf("point into any: %v, %v", a, err)
	}
	if m.ResultFormat(userPointOID) != 1 || m.ResultFormat(userPointArrayOID) != 1 {
		t.Error("point is not binary")
	}
	// point itself is a built-in type: its OIDs cannot be registered.
	for _, oid := range []uint32{PointOID, PointArrayOID} {
		if err := m.RegisterType(Type{Name: "point", OID: oid, Codec: pointCodec{}}); !errors.Is(err, errBuiltin) {
			t.Errorf("RegisterType at OID %d: %v, want a built-in type error", oid, err)
		}
	}
}

// TestRangeScanResets checks that a reused Range destination does not keep
// the bounds of an earlier value on a side that is now unbounded.
func TestRangeScanResets(t *testing.T) {
	m := NewMap()
	r := Range[int32]{Lower: 9, Upper: 9, LowerType: Inclusive, UpperType: Inclusive}
	p := mustPlan(t, m, Int4RangeOID, 0, &r)
	if err := p.Scan([]byte("(,5)"), &r); err != nil || r != (Range[int32]{Upper: 5, LowerType: Unbounded, UpperType: Exclusive}) {
		t.Errorf("got %+v, %v", r, err)
	}
	if err := p.Scan([]byte("empty"), &r); err != nil || r != (Range[int32]{Empty: true}) {
		t.Errorf("got %+v, %v", r, err)
	}
	if BoundType(0).String() != "BoundType(0)" || Unbounded.String() != "unbounded" {
		t.Error("BoundType.String")
	}
	// A text bound for a binary range goes as a text literal.
	out, format, _, err := m.Encode(TsRangeOID, Range[string]{Lower: "2020-01-01", LowerType: Inclusive, UpperType: Unbounded}, nil)
	if err != nil || format != 0 || string(out) != `[2020-01-01,)` {
		t.Errorf("text range: %q %d %v", out, format, err)
	}
	_ = time.Time{}
}
