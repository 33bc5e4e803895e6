package pgtype

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The built-in type table agrees with the server's pg_type: each OID has
// that name and that array type, and the range of each built-in
// multirange type is the one multirangeRange gives.
func TestBuiltinTypesMatchServer(t *testing.T) {
	srv.NeedVersion(t, 14, "the table's multirange types")
	var oids []string
	for _, b := range builtinTypes {
		oids = append(oids, strconv.FormatUint(uint64(b.oid), 10))
	}
	out, err := srv.Query(fmt.Sprintf(`SELECT t.oid, t.typname, t.typarray, coalesce(r.rngtypid, 0)
		FROM pg_type t LEFT JOIN pg_range r ON r.rngmultitypid = t.oid
		WHERE t.oid = ANY('{%s}'::oid[])`, strings.Join(oids, ",")))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name            string
		array, rangeOID uint32
	}
	server := map[uint32]row{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "|")
		if len(f) != 4 {
			t.Fatalf("bad line %q", l)
		}
		n := make([]uint32, 3)
		for i, s := range []string{f[0], f[2], f[3]} {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				t.Fatalf("bad line %q", l)
			}
			n[i] = uint32(v)
		}
		server[n[0]] = row{f[1], n[1], n[2]}
	}
	m := NewMap()
	for _, b := range builtinTypes {
		s, ok := server[b.oid]
		switch {
		case !ok:
			t.Errorf("%s: no type with OID %d", b.name, b.oid)
		case s.name != b.name || s.array != b.arrayOID && b.oid != UnknownOID:
			t.Errorf("%s (%d, array %d) is %s (array %d) on the server", b.name, b.oid, b.arrayOID, s.name, s.array)
		case s.rangeOID != multirangeRange(b.oid):
			t.Errorf("%s: range type %d on the server, %d here", b.name, s.rangeOID, multirangeRange(b.oid))
		}
		if b.kind == kindMultirange && multirangeRange(b.oid) == 0 {
			t.Errorf("%s: no range type", b.name)
		}
		if b.kind != kindComposite && (m.ResultFormat(b.oid) != 1 || b.arrayOID != 0 && m.ResultFormat(b.arrayOID) != 1) {
			t.Errorf("%s: not requested in binary", b.name)
		}
		if !IsBuiltin(b.oid) {
			t.Errorf("%s: not IsBuiltin", b.name)
		}
	}
}

// The new types give database/sql their server text form as a string.
func TestNewTypesDriverValue(t *testing.T) {
	m := NewMap()
	pairs := [][2]string{
		{"point", "'(1.5,-2)'"}, {"path", "'[(1,2),(3,4)]'"}, {"box", "'(0,0),(1,1)'"}, {"varbit", "B'10110'"},
		{"timetz", "'23:04:05.123456-05'"}, {"circle[]", `'{"<(1,2),3>",NULL}'`},
	}
	if srv.Version() >= 140000 {
		pairs = append(pairs, [2]string{"int4multirange", "'{[1,3),(,0)}'"})
	} else {
		t.Run("int4multirange", func(t *testing.T) { srv.NeedVersion(t, 14, "multiranges") })
	}
	vals := serverValues(t, pairs)
	for i, p := range pairs {
		oid := oidOf(t, m, p[0])
		dv, err := m.DriverValue(oid, 1, vals[i].bin)
		want := any(vals[i].text)
		if m.DriverScanType(oid) == driverBytesType {
			want = []byte(vals[i].text)
		} else if m.DriverScanType(oid) != stringType {
			t.Errorf("%s: scan type %v", p[0], m.DriverScanType(oid))
		}
		if err != nil || !equal(dv, want) {
			t.Errorf("%s: DriverValue %#v, %v; want %#v", p[0], dv, err, want)
		}
	}
}
