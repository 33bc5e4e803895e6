package pgtype

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// Fake OIDs for fuzzing registered types without a server.
const (
	fuzzHstoreOID = 900100 + iota
	fuzzHstoreArrayOID
	fuzzPointOID
	fuzzPointArrayOID
)

func fuzzMap(t testing.TB) *Map {
	m := NewMap()
	for _, err := range []error{
		m.RegisterName("hstore", fuzzHstoreOID, fuzzHstoreArrayOID),
		m.RegisterComposite("pt", fuzzPointOID, fuzzPointArrayOID, Int4OID, TextOID, TimestamptzOID),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func FuzzMultiDimArray(f *testing.F) {
	for _, h := range []string{
		// {{1,2},{3,4}}
		"000000020000000000000017000000020000000100000002000000010000000400000001000000040000000200000004000000030000000400000004",
		// dims [2,0]: no elements
		"00000002000000000000001700000002000000010000000000000001",
		// dims [0x7fffffff, 0]
		"0000000200000000000000177fffffff000000010000000000000001",
		// 7 dimensions, negative length, flags 2, NULL element, -2 length
		"00000007000000000000001700000001000000010000000100000001",
		"0000000100000000000000178000000000000001",
		"000000010000000200000017000000010000000100000004",
		"000000010000000100000017000000010000000100000001ffffffff",
		"000000010000000000000017000000010000000100000000fffffffe",
	} {
		hexSeed(f, h)
	}
	for _, s := range []string{`{{1,2},{3,4}}`, `[1:2][0:1]={{1,NULL},{3,4}}`, `{{{{{{1}}}}}}`, `{{{{{{{1}}}}}}}`, `{{1},{2,3}}`, `{{}}`, `{ { 1 } , { 2 } }`, `{{1}`, `{1}}`} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, Int4ArrayOID, format, src, new([][]int32), new([][][]*int32), new([][][][][][]int64), new([]int32))
			decodeAll(t, m, TextArrayOID, format, src, new([][]string), new([][]*string))
		}
		// Decoded arrays re-encode to the same bytes (lower bounds aside).
		var v [][]*int32
		if err := mustPlan(t, m, Int4ArrayOID, 1, &v).Scan(src, &v); err == nil && len(v) > 0 {
			if _, _, _, err := m.Encode(Int4ArrayOID, v, nil); err != nil {
				t.Fatalf("re-encode %v: %v", v, err)
			}
		}
	})
}

func FuzzInet(f *testing.F) {
	for _, h := range []string{"02180004c0a80105", "0380011000000000000000000000000000000001", "02200004", "022100040a000001", "0400000400000000", "02000105", ""} {
		hexSeed(f, h)
	}
	for _, s := range []string{"192.168.1.5/24", "::1", "10/8", "1.2.3.4/33", "fe80::1%eth0", "", "/"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			for _, oid := range []uint32{InetOID, CIDROID} {
				decodeAll(t, m, oid, format, src, new(netip.Prefix), new(netip.Addr), new(net.IPNet))
			}
			decodeAll(t, m, InetArrayOID, format, src, new([]netip.Prefix), new([]*netip.Addr))
		}
	})
}

func FuzzMacaddr(f *testing.F) {
	for _, h := range []string{"08002b010203", "08002b0102030405", "08", ""} {
		hexSeed(f, h)
	}
	for _, s := range []string{"08:00:2b:01:02:03", "0800.2b01.0203", "08-00-2b-01-02-03-04-05", "zz"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			for _, oid := range []uint32{MacaddrOID, Macaddr8OID} {
				decodeAll(t, m, oid, format, src, new(net.HardwareAddr))
			}
			decodeAll(t, m, MacaddrArrayOID, format, src, new([]net.HardwareAddr))
		}
	})
}

func FuzzRange(f *testing.F) {
	for _, h := range []string{
		"0200000004000000010000000400000005", "01", "08", "18", "1800", "020000000400000001", "02ffffffff", "02fffffffe00000004",
		"0600000008000000000000000100000008000000000000000a", "ff",
	} {
		hexSeed(f, h)
	}
	for _, s := range []string{"[1,5)", "empty", "(,)", `["2020-01-01 00:00:00","2020-02-01")`, `[1,`, `("a""b",\)]`, `[,]`, ` [ 1 , 2 ] `, `["unterminated,2)`} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, Int4RangeOID, format, src, new(Range[int32]), new(Range[int64]), new(Range[string]))
			decodeAll(t, m, Int8RangeOID, format, src, new(Range[int64]))
			decodeAll(t, m, NumRangeOID, format, src, new(Range[Numeric]), new(Range[float64]))
			decodeAll(t, m, TstzRangeOID, format, src, new(Range[time.Time]), new(Range[Timestamp]))
			decodeAll(t, m, DateRangeOID, format, src, new(Range[time.Time]))
			decodeAll(t, m, Int4RangeArrayOID, format, src, new([]Range[int32]))
		}
	})
}

func FuzzHstore(f *testing.F) {
	for _, h := range []string{
		"00000002000000016100000001310000000162ffffffff", "00000000", "ffffffff", "7fffffff", "0000000100000001", "00000001fffffffe",
		"0000000100000001610000000000", "00000001ffffffffffffffff",
	} {
		hexSeed(f, h)
	}
	for _, s := range []string{`"a"=>"1", "b"=>NULL`, ``, `a=>b`, `"a"=>`, `"a\"b"=>"c\\d"`, `a=>b,`, `=>`, `"a"`, `a=>NULL, a=>x`} {
		f.Add([]byte(s))
	}
	m := fuzzMap(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, fuzzHstoreOID, format, src, new(map[string]*string), new(map[string]string))
			decodeAll(t, m, fuzzHstoreArrayOID, format, src, new([]map[string]*string))
		}
		// Decoded maps re-encode and decode to the same map.
		var h map[string]*string
		if err := mustPlan(t, m, fuzzHstoreOID, 1, &h).Scan(src, &h); err == nil && h != nil {
			out, _, _, err := m.Encode(fuzzHstoreOID, h, nil)
			if err != nil {
				t.Fatal(err)
			}
			var h2 map[string]*string
			if err := mustPlan(t, m, fuzzHstoreOID, 1, &h2).Scan(out, &h2); err != nil || !equalHstore(h, h2) {
				t.Fatalf("%v re-encoded as %x decodes to %v (%v)", h, out, h2, err)
			}
		}
	})
}

func equalHstore(a, b map[string]*string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || (v == nil) != (w == nil) || v != nil && *v != *w {
			return false
		}
	}
	return true
}

func FuzzComposite(f *testing.F) {
	for _, h := range []string{
		"00000003000000170000000400000001000002c10000000361206200000019ffffffff",
		"00000003000000170000000400000001000000190000000161000004a0ffffffff",
		"00000000", "ffffffff", "7fffffff", "0000000100000017fffffffe", "00000001000008c10000000400000000",
		// a record holding a record holding a record
		"00000001000008c10000001400000001000008c100000008000000000000000000",
	} {
		hexSeed(f, h)
	}
	for _, s := range []string{`(1,"a b",)`, `()`, `(1,x,"2000-01-01 00:00:00+00")`, `("unterminated)`, `(1,\`, `(,,)`, `((1,2),3)`, `x`} {
		f.Add([]byte(s))
	}
	m := fuzzMap(f)
	type pt struct {
		X int32
		L *string
		T time.Time
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, RecordOID, format, src, new([]any), new(struct{ A, B any }), new(pt))
			decodeAll(t, m, fuzzPointOID, format, src, new([]any), new(pt), new(*pt))
			decodeAll(t, m, fuzzPointArrayOID, format, src, new([]pt), new([]*pt))
			decodeAll(t, m, RecordArrayOID, format, src, new([][]any))
		}
	})
}
