package pgtype

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// userTypes creates the user types of the tests on the server once and
// returns a Map with them registered.
var userTypes = sync.OnceValues(func() (map[string][2]uint32, error) {
	err := srv.Exec(`CREATE EXTENSION IF NOT EXISTS hstore;
		CREATE TYPE rt_mood AS ENUM ('sad', 'ok', 'happy hour');
		CREATE DOMAIN rt_posint AS int4 CHECK (VALUE > 0);
		CREATE TYPE rt_pt AS (x int4, label text, at timestamptz);
		CREATE TYPE rt_line AS (a rt_pt, tags text[], m rt_mood)`)
	if err != nil {
		return nil, err
	}
	out, err := srv.Query(`SELECT typname, oid, typarray FROM pg_type WHERE typname IN ('hstore', 'rt_mood', 'rt_posint', 'rt_pt', 'rt_line')`)
	if err != nil {
		return nil, err
	}
	oids := map[string][2]uint32{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "|")
		a, _ := strconv.ParseUint(f[1], 10, 32)
		b, _ := strconv.ParseUint(f[2], 10, 32)
		oids[f[0]] = [2]uint32{uint32(a), uint32(b)}
	}
	sendFuncs["rt_mood"] = "enum_send"
	sendFuncs["rt_posint"] = "int4send"
	sendFuncs["rt_pt"] = "record_send"
	sendFuncs["rt_line"] = "record_send"
	sendFuncs["record"] = "record_send"
	return oids, nil
})

// userMap returns a Map with the test's user types registered.
func userMap(t testing.TB) *Map {
	t.Helper()
	oids, err := userTypes()
	if err != nil {
		t.Fatalf("creating user types: %v", err)
	}
	m := NewMap()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.RegisterName("hstore", oids["hstore"][0], oids["hstore"][1]))
	must(m.RegisterEnum("rt_mood", oids["rt_mood"][0], oids["rt_mood"][1]))
	must(m.RegisterDomain("rt_posint", oids["rt_posint"][0], oids["rt_posint"][1], Int4OID))
	must(m.RegisterComposite("rt_pt", oids["rt_pt"][0], oids["rt_pt"][1], Int4OID, TextOID, TimestamptzOID))
	must(m.RegisterComposite("rt_line", oids["rt_line"][0], oids["rt_line"][1], oids["rt_pt"][0], TextArrayOID, oids["rt_mood"][0]))
	return m
}

type point struct {
	X     int32
	Label *string
	At    time.Time
}

type line struct {
	A    point
	Tags []string
	M    string
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func mac(s string) net.HardwareAddr {
	a, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return a
}

func newTypeCases() []rtCase {
	return []rtCase{
		// Multi-dimensional arrays.
		{typ: "int4[]", expr: "'{{1,2,3},{4,5,6}}'", dst: ptr[[][]int32](), want: [][]int32{{1, 2, 3}, {4, 5, 6}}},
		{typ: "int4[]", expr: "'{{{1},{2}},{{3},{NULL}}}'", dst: ptr[[][][]*int32](), want: [][][]*int32{{{i32p(1)}, {i32p(2)}}, {{i32p(3)}, {nil}}}},
		{typ: "int4[]", expr: "'{{{{{{7}}}}}}'", dst: ptr[[][][][][][]int64](), want: [][][][][][]int64{{{{{{7}}}}}}},
		{typ: "int4[]", expr: "'{}'", dst: ptr[[][]int32](), want: [][]int32{}},
		{typ: "text[]", expr: `'{{a,"b c"},{NULL,""}}'`, dst: ptr[[][]*string](), want: [][]*string{{strp("a"), strp("b c")}, {nil, strp("")}}},
		{typ: "text[]", expr: `'{{a,b}}'`, dst: ptr[[][]string](), want: [][]string{{"a", "b"}}},
		{typ: "int8[]", expr: "'{{1},{2}}'", dst: ptr[any](), want: []any{[]any{int64(1)}, []any{int64(2)}}},
		{typ: "bytea[]", expr: `'{{"\\x01"},{NULL}}'`, dst: ptr[[][][]byte](), want: [][][]byte{{{1}}, {nil}}},
		{typ: "int2[]", expr: "'{{1,2},{3,4}}'", dst: ptr[[][]int16](), want: [][]int16{{1, 2}, {3, 4}}, enc: []any{[]int16{1, 2}, []any{int16(3), int16(4)}}},

		// inet, cidr.
		{typ: "inet", expr: "'192.168.1.5/24'", dst: ptr[netip.Prefix](), want: pfx("192.168.1.5/24")},
		{typ: "inet", expr: "'192.168.1.5'", dst: ptr[netip.Addr](), want: netip.MustParseAddr("192.168.1.5"), noText: true},
		{typ: "inet", expr: "'2001:db8::1'", dst: ptr[netip.Addr](), want: netip.MustParseAddr("2001:db8::1"), noText: true},
		{typ: "inet", expr: "'::ffff:1.2.3.4/120'", dst: ptr[netip.Prefix](), want: pfx("::ffff:1.2.3.4/120")},
		{typ: "inet", expr: "'10.0.0.1/8'", dst: ptr[string](), want: "10.0.0.1/8", enc: pfx("10.0.0.1/8")},
		{typ: "inet", expr: "'0.0.0.0/0'", dst: ptr[netip.Prefix](), want: pfx("0.0.0.0/0")},
		{typ: "inet", expr: "'10.1.2.3'", dst: ptr[net.IPNet](), want: net.IPNet{IP: net.IP{10, 1, 2, 3}, Mask: net.CIDRMask(32, 32)}, enc: net.IP{10, 1, 2, 3}, noText: true},
		{typ: "cidr", expr: "'10.0.0.0/8'", dst: ptr[netip.Prefix](), want: pfx("10.0.0.0/8")},
		{typ: "cidr", expr: "'2001:db8::/32'", dst: ptr[string](), want: "2001:db8::/32", enc: pfx("2001:db8::/32")},
		{typ: "cidr", expr: "'1.2.3.4/32'", dst: ptr[netip.Addr](), want: netip.MustParseAddr("1.2.3.4")},
		{typ: "inet[]", expr: "'{1.2.3.4,NULL,::1/64}'", dst: ptr[[]*netip.Prefix](), want: []*netip.Prefix{ptrTo(pfx("1.2.3.4/32")), nil, ptrTo(pfx("::1/64"))}},
		{typ: "cidr[]", expr: "'{}'", dst: ptr[[]netip.Prefix](), want: []netip.Prefix{}},

		// macaddr, macaddr8.
		{typ: "macaddr", expr: "'08:00:2b:01:02:03'", dst: ptr[net.HardwareAddr](), want: mac("08:00:2b:01:02:03")},
		{typ: "macaddr", expr: "'08:00:2B:01:02:0A'", dst: ptr[string](), want: "08:00:2b:01:02:0a", enc: mac("08:00:2b:01:02:0a")},
		{typ: "macaddr8", expr: "'08:00:2b:01:02:03:04:05'", dst: ptr[net.HardwareAddr](), want: mac("08:00:2b:01:02:03:04:05")},
		{typ: "macaddr8", expr: "'08:00:2b:01:02:03'", dst: ptr[string](), want: "08:00:2b:ff:fe:01:02:03", enc: mac("08:00:2b:01:02:03")},
		{typ: "macaddr[]", expr: "'{08:00:2b:01:02:03,NULL}'", dst: ptr[[]net.HardwareAddr](), want: []net.HardwareAddr{mac("08:00:2b:01:02:03"), nil}},

		// Ranges.
		{typ: "int4range", expr: "'[1,5)'", dst: ptr[Range[int32]](), want: Range[int32]{Lower: 1, Upper: 5, LowerType: Inclusive, UpperType: Exclusive}},
		{typ: "int4range", expr: "'[1,5]'", dst: ptr[Range[int32]](), want: Range[int32]{Lower: 1, Upper: 6, LowerType: Inclusive, UpperType: Exclusive}},
		{typ: "int4range", expr: "'(,5)'", dst: ptr[Range[int32]](), want: Range[int32]{Upper: 5, LowerType: Unbounded, UpperType: Exclusive}},
		{typ: "int4range", expr: "'[3,)'", dst: ptr[Range[int64]](), want: Range[int64]{Lower: 3, LowerType: Inclusive, UpperType: Unbounded}},
		{typ: "int4range", expr: "'(,)'", dst: ptr[Range[int32]](), want: Range[int32]{LowerType: Unbounded, UpperType: Unbounded}},
		{typ: "int4range", expr: "'empty'", dst: ptr[Range[int32]](), want: Range[int32]{Empty: true}},
		{typ: "int4range", expr: "'[2,2)'", dst: ptr[any](), want: Range[any]{Empty: true}},
		{typ: "int4range", expr: "'[2,9)'", dst: ptr[any](), want: Range[any]{Lower: int32(2), Upper: int32(9), LowerType: Inclusive, UpperType: Exclusive}},
		{typ: "int8range", expr: "'[-9223372036854775808,0)'", dst: ptr[Range[int64]](), want: Range[int64]{Lower: -1 << 63, LowerType: Inclusive, UpperType: Exclusive}},
		{typ: "numrange", expr: "'(1.5,2.25]'", dst: ptr[Range[string]](), want: Range[string]{Lower: "1.5", Upper: "2.25", LowerType: Exclusive, UpperType: Inclusive}, noEnc: true},
		{typ: "numrange", expr: "'(1.5,2.25]'", dst: ptr[Range[Numeric]](), want: Range[Numeric]{Lower: Numeric{Int: bigInt("15"), Exp: -1, Valid: true}, Upper: Numeric{Int: bigInt("225"), Exp: -2, Valid: true}, LowerType: Exclusive, UpperType: Inclusive}},
		{typ: "numrange", expr: "'(,0]'", dst: ptr[Range[float64]](), want: Range[float64]{LowerType: Unbounded, UpperType: Inclusive}},
		{typ: "tsrange", expr: "'[2020-01-01 00:00:00,2020-02-01 12:30:00)'", dst: ptr[Range[time.Time]](),
			want: Range[time.Time]{Lower: date(2020, 1, 1, 0, 0, 0, 0), Upper: date(2020, 2, 1, 12, 30, 0, 0), LowerType: Inclusive, UpperType: Exclusive}},
		{typ: "tstzrange", expr: "'[2020-01-01 00:00:00+00,infinity)'", dst: ptr[Range[Timestamp]](),
			want: Range[Timestamp]{Lower: Timestamp{Time: date(2020, 1, 1, 0, 0, 0, 0), Valid: true}, Upper: Timestamp{InfinityModifier: Infinity, Valid: true}, LowerType: Inclusive, UpperType: Exclusive}},
		{typ: "tstzrange", expr: "'(,2021-06-01 10:00:00+02]'", dst: ptr[Range[time.Time]](),
			want: Range[time.Time]{Upper: date(2021, 6, 1, 8, 0, 0, 0), LowerType: Unbounded, UpperType: Inclusive}},
		{typ: "daterange", expr: "'[2000-01-01,2000-01-31]'", dst: ptr[Range[time.Time]](),
			want: Range[time.Time]{Lower: date(2000, 1, 1, 0, 0, 0, 0), Upper: date(2000, 2, 1, 0, 0, 0, 0), LowerType: Inclusive, UpperType: Exclusive}},
		{typ: "int4range[]", expr: "'{\"[1,2)\",NULL,empty}'", dst: ptr[[]*Range[int32]](),
			want: []*Range[int32]{{Lower: 1, Upper: 2, LowerType: Inclusive, UpperType: Exclusive}, nil, {Empty: true}}},

		// Registered types: hstore, an enum, a domain, composites.
		{typ: "hstore", expr: `'a=>1, "b c"=>NULL, "q\"x"=>"", long_key=>"v\\w"'`, dst: ptr[map[string]*string](),
			want: map[string]*string{"a": strp("1"), "b c": nil, `q"x`: strp(""), "long_key": strp(`v\w`)}},
		{typ: "hstore", expr: `''`, dst: ptr[map[string]string](), want: map[string]string{}},
		{typ: "hstore", expr: `'k=>v'`, dst: ptr[any](), want: map[string]*string{"k": strp("v")}},
		{typ: "hstore[]", expr: `'{"a=>1",NULL}'`, dst: ptr[[]map[string]string](), want: []map[string]string{{"a": "1"}, nil}},
		{typ: "rt_mood", expr: "'happy hour'", dst: ptr[string](), want: "happy hour"},
		{typ: "rt_mood[]", expr: "'{sad,NULL,\"happy hour\"}'", dst: ptr[[]*string](), want: []*string{strp("sad"), nil, strp("happy hour")}},
		{typ: "rt_posint", expr: "42", dst: ptr[int32](), want: int32(42)},
		{typ: "rt_posint[]", expr: "'{1,2}'", dst: ptr[[]int64](), want: []int64{1, 2}},
		{typ: "rt_pt", expr: "ROW(7, 'a b', '2020-01-01 00:00:00+00')", dst: ptr[point](), want: point{X: 7, Label: strp("a b"), At: date(2020, 1, 1, 0, 0, 0, 0)}},
		{typ: "rt_pt", expr: "ROW(-1, NULL, '1999-12-31 23:59:59+00')", dst: ptr[point](), want: point{X: -1, At: date(1999, 12, 31, 23, 59, 59, 0)}},
		{typ: "rt_pt", expr: "ROW(1, '', '2000-01-01 00:00:00+00')", dst: ptr[[]any](), want: []any{int32(1), "", date(2000, 1, 1, 0, 0, 0, 0)}},
		{typ: "rt_line", expr: "ROW(ROW(2, 'q\"(),', '2000-01-01 00:00:00+00'), '{x,\"y z\"}', 'ok')::rt_line", dst: ptr[line](),
			want: line{A: point{X: 2, Label: strp(`q"(),`), At: date(2000, 1, 1, 0, 0, 0, 0)}, Tags: []string{"x", "y z"}, M: "ok"}},
		{typ: "rt_pt[]", expr: "ARRAY[ROW(1, 'x', '2000-01-01 00:00:00+00')::rt_pt, NULL]", dst: ptr[[]*point](),
			want: []*point{{X: 1, Label: strp("x"), At: date(2000, 1, 1, 0, 0, 0, 0)}, nil}},
		{typ: "record", expr: "ROW(1, 'a b', NULL::int8, 2.5::float8)", dst: ptr[[]any](), want: []any{int32(1), "a b", nil, 2.5}, noEnc: true, noText: true},
		{typ: "record", expr: "ROW(3, 'x')", dst: ptr[struct {
			N int64
			S string
		}](), want: struct {
			N int64
			S string
		}{3, "x"}, noEnc: true},
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestRoundTripNewTypes(t *testing.T) { runRoundTrip(t, userMap(t), newTypeCases()) }

func TestCompositeArrayOfAny(t *testing.T) {
	m := userMap(t)
	vals := serverValues(t, [][2]string{{"rt_pt[]", "ARRAY[ROW(1, 'x', '2000-01-01 00:00:00+00')::rt_pt]"}})
	var got [][]any
	if err := mustPlan(t, m, oidOf(t, m, "rt_pt[]"), 1, &got).Scan(vals[0].bin, &got); err != nil ||
		len(got) != 1 || len(got[0]) != 3 || got[0][0] != int32(1) || got[0][1] != "x" {
		t.Fatalf("got %#v, %v", got, err)
	}
	out, _, _, err := m.Encode(oidOf(t, m, "rt_pt[]"), got, nil)
	if err != nil || string(out) != string(vals[0].bin) {
		t.Errorf("Encode(%v) = %x, %v; server %x", got, out, err, vals[0].bin)
	}
}
