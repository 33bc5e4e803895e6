package pgtype

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// bitDomains creates domains over bit(n) on the server once, so that the
// round trips can name a bit type of each length (bit alone is bit(1)),
// and returns their OIDs and array OIDs.
var bitDomains = sync.OnceValues(func() (map[string][2]uint32, error) {
	lengths := []int{7, 8, 9, 64}
	var sql strings.Builder
	var names []string
	for _, n := range lengths {
		name := "rt_bit" + strconv.Itoa(n)
		names = append(names, "'"+name+"'")
		sql.WriteString("CREATE DOMAIN " + name + " AS bit(" + strconv.Itoa(n) + ");\n")
		sendFuncs[name] = "bit_send"
	}
	if err := srv.Exec(sql.String()); err != nil {
		return nil, err
	}
	out, err := srv.Query("SELECT typname, oid, typarray FROM pg_type WHERE typname IN (" + strings.Join(names, ",") + ")")
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
	return oids, nil
})

// bitMap returns a Map with the bit(n) domains registered.
func bitMap(t testing.TB) *Map {
	t.Helper()
	oids, err := bitDomains()
	if err != nil {
		t.Fatalf("creating bit domains: %v", err)
	}
	m := NewMap()
	for name, o := range oids {
		if err := m.RegisterDomain(name, o[0], o[1], BitOID); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func bitsCases() []rtCase {
	return []rtCase{
		{typ: "varbit", expr: "B''", dst: ptr[Bits](), want: Bits{Bytes: []byte{}, Len: 0}},
		{typ: "varbit", expr: "B''", dst: ptr[string](), want: "", enc: Bits{Bytes: []byte{}}},
		{typ: "bit", expr: "B'1'", dst: ptr[Bits](), want: Bits{Bytes: []byte{0x80}, Len: 1}},
		{typ: "bit", expr: "B'0'", dst: ptr[string](), want: "0", enc: "0"},
		{typ: "rt_bit7", expr: "B'1011001'", dst: ptr[Bits](), want: Bits{Bytes: []byte{0xb2}, Len: 7}},
		{typ: "rt_bit8", expr: "B'10110011'", dst: ptr[Bits](), want: Bits{Bytes: []byte{0xb3}, Len: 8}},
		{typ: "rt_bit9", expr: "B'101100111'", dst: ptr[Bits](), want: Bits{Bytes: []byte{0xb3, 0x80}, Len: 9}},
		{typ: "rt_bit9", expr: "B'000000001'", dst: ptr[string](), want: "000000001", enc: Bits{Bytes: []byte{0, 0xff}, Len: 9}}, // unused bits cleared
		{typ: "rt_bit64", expr: "X'DEADBEEF01234567'", dst: ptr[Bits](), want: Bits{Bytes: []byte{0xde, 0xad, 0xbe, 0xef, 1, 0x23, 0x45, 0x67}, Len: 64}},
		{typ: "rt_bit64", expr: "X'8000000000000001'", dst: ptr[string](), want: "1" + strings.Repeat("0", 62) + "1",
			enc: Bits{Bytes: []byte{0x80, 0, 0, 0, 0, 0, 0, 1}, Len: 64}},
		{typ: "varbit", expr: "B'10110'", dst: ptr[Bits](), want: Bits{Bytes: []byte{0xb0}, Len: 5}},
		{typ: "varbit", expr: "B'1011'", dst: ptr[string](), want: "1011", enc: "1011"},
		{typ: "varbit", expr: "B'110'", dst: ptr[any](), want: Bits{Bytes: []byte{0xc0}, Len: 3}},
		{typ: "varbit", expr: "repeat('10', 100)::varbit", dst: ptr[Bits](), want: Bits{Bytes: []byte(strings.Repeat("\xaa", 25)), Len: 200}},
		{typ: "varbit", expr: "B'1'", dst: ptr[[]byte](), want: []byte("1"), noEnc: true},
		{typ: "varbit[]", expr: `'{101,NULL,""}'`, dst: ptr[[]*Bits](), want: []*Bits{{Bytes: []byte{0xa0}, Len: 3}, nil, {Bytes: []byte{}}}},
		{typ: "varbit[]", expr: `'{1,01}'`, dst: ptr[[]string](), want: []string{"1", "01"}, enc: []Bits{{Bytes: []byte{0x80}, Len: 1}, {Bytes: []byte{0x40}, Len: 2}}},
		{typ: "bit[]", expr: `'{1,0}'`, dst: ptr[[]Bits](), want: []Bits{{Bytes: []byte{0x80}, Len: 1}, {Bytes: []byte{0}, Len: 1}}},
		{typ: "rt_bit9[]", expr: `ARRAY[B'101100111']::rt_bit9[]`, dst: ptr[[]Bits](), want: []Bits{{Bytes: []byte{0xb3, 0x80}, Len: 9}}},
	}
}

func TestRoundTripBits(t *testing.T) { runRoundTrip(t, bitMap(t), bitsCases()) }

func TestBitsMalformed(t *testing.T) {
	m := NewMap()
	for _, src := range [][]byte{
		nil, {}, {0, 0, 0}, {0, 0, 0, 1}, // one bit, no byte
		{0, 0, 0, 8, 1, 2}, // 8 bits, 2 bytes
		{0, 0, 0, 0, 0},    // no bits, 1 byte
		{0xff, 0xff, 0xff, 0xff}, {0x7f, 0xff, 0xff, 0xff, 1}, {0x80, 0, 0, 0},
	} {
		_, err := m.DecodeValue(VarbitOID, 1, src)
		var de *DecodeError
		if src != nil && !errors.As(err, &de) {
			t.Errorf("%x: %v, want a DecodeError", src, err)
		}
	}
	for _, s := range []string{"2", "10 1", "B101", " 1", "x"} {
		if _, err := m.DecodeValue(BitOID, 0, []byte(s)); err == nil {
			t.Errorf("%q decoded", s)
		}
	}
	for _, b := range []Bits{{Len: 1}, {Bytes: []byte{1}}, {Bytes: []byte{1, 2}, Len: 8}, {Len: -1}, {Bytes: []byte{1}, Len: -8}} {
		var ee *EncodeError
		if _, _, _, err := m.Encode(VarbitOID, b, nil); !errors.As(err, &ee) {
			t.Errorf("Encode(%#v): %v, want an EncodeError", b, err)
		}
	}
	// The unused bits of the last byte are cleared on decoding.
	v, err := m.DecodeValue(VarbitOID, 1, []byte{0, 0, 0, 3, 0xff})
	if err != nil || v.(Bits).Bytes[0] != 0xe0 {
		t.Errorf("padding kept: %#v %v", v, err)
	}
	// Bits go as their text to text parameters.
	if out, f, _, err := m.Encode(TextOID, Bits{Bytes: []byte{0xa0}, Len: 3}, nil); err != nil || f != 1 || string(out) != "101" {
		t.Errorf("bits as text: %q %d %v", out, f, err)
	}
}

func FuzzBits(f *testing.F) {
	for _, h := range []string{"00000000", "0000000180", "00000007b2", "00000009b380", "0000000900", "00000001", "ffffffff", "7fffffff00", "0000000fffff", ""} {
		hexSeed(f, h)
	}
	for _, s := range []string{"", "1", "1011", "102", `{101,NULL,""}`, "{1,0}"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			for _, oid := range []uint32{BitOID, VarbitOID} {
				decodeAll(t, m, oid, format, src, new(Bits), new(*Bits))
			}
			decodeAll(t, m, VarbitArrayOID, format, src, new([]Bits), new([]*Bits), new([]string))
			v, err := m.DecodeValue(VarbitOID, format, src)
			if err != nil {
				continue
			}
			out, f, _, err := m.Encode(VarbitOID, v, nil)
			if err != nil || f != 1 {
				t.Fatalf("%#v: re-encode: format %d, %v", v, f, err)
			}
			v2, err := m.DecodeValue(VarbitOID, 1, out)
			if err != nil || !equal(v2, v) {
				t.Fatalf("%#v re-encoded as %x decodes to %#v (%v)", v, out, v2, err)
			}
			var s string
			if err := mustPlan(t, m, VarbitOID, 1, &s).Scan(out, &s); err != nil {
				t.Fatal(err)
			}
			if v3, err := m.DecodeValue(VarbitOID, 0, []byte(s)); err != nil || !equal(v3, v) {
				t.Fatalf("%#v: text %q decodes to %#v (%v)", v, s, v3, err)
			}
		}
	})
}
