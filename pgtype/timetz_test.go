package pgtype

import (
	"errors"
	"testing"
	"time"
)

func timetzCases() []rtCase {
	ny := time.FixedZone("NY", -5*3600)
	return []rtCase{
		{typ: "timetz", expr: "'23:04:05.123456-05'", dst: ptr[Timetz](), want: Timetz{Microseconds: (23*3600+4*60+5)*1e6 + 123456, Offset: -5 * 3600}},
		{typ: "timetz", expr: "'23:04:05.123456-05'", dst: ptr[string](), want: "23:04:05.123456-05",
			enc: time.Date(2024, 3, 10, 23, 4, 5, 123456789, ny)},
		{typ: "timetz", expr: "'24:00:00+00'", dst: ptr[Timetz](), want: Timetz{Microseconds: 24 * 3600e6}},
		{typ: "timetz", expr: "'00:00:00+00'", dst: ptr[any](), want: Timetz{}},
		{typ: "timetz", expr: "'00:00:01+05:30:15'", dst: ptr[Timetz](), want: Timetz{Microseconds: 1e6, Offset: 5*3600 + 30*60 + 15}},
		{typ: "timetz", expr: "'12:00-03:30'", dst: ptr[string](), want: "12:00:00-03:30", enc: Timetz{Microseconds: 12 * 3600e6, Offset: -(3*3600 + 30*60)}},
		{typ: "timetz", expr: "'12:00:00.5+15:59:59'", dst: ptr[Timetz](), want: Timetz{Microseconds: 12*3600e6 + 5e5, Offset: 16*3600 - 1}},
		{typ: "timetz", expr: "'23:59:59.999999-15:59'", dst: ptr[Timetz](), want: Timetz{Microseconds: 24*3600e6 - 1, Offset: -(15*3600 + 59*60)}},
		{typ: "timetz", expr: "'13:14:15.5+00'", dst: ptr[time.Time](), want: time.Date(0, 1, 1, 13, 14, 15, 5e8, time.UTC)},
		{typ: "timetz", expr: "'13:14:15.5+00'", dst: ptr[string](), want: "13:14:15.5+00", enc: "13:14:15.5+00"},
		{typ: "timetz[]", expr: `'{"12:00:00+01",NULL,"24:00:00-00:30"}'`, dst: ptr[[]*Timetz](),
			want: []*Timetz{{Microseconds: 12 * 3600e6, Offset: 3600}, nil, {Microseconds: 24 * 3600e6, Offset: -1800}}},
		{typ: "timetz[]", expr: `'{"01:02:03+04"}'`, dst: ptr[[]string](), want: []string{"01:02:03+04"},
			enc: []Timetz{{Microseconds: 3723e6, Offset: 4 * 3600}}},
	}
}

func TestRoundTripTimetz(t *testing.T) { runRoundTrip(t, NewMap(), timetzCases()) }

// TestTimetzIntoTime: a timetz into *time.Time is that time of day on
// 0000-01-01 in a zone of the value's offset, and encodes back as the same
// timetz (24:00:00 aside, which is the next day's midnight).
func TestTimetzIntoTime(t *testing.T) {
	m := NewMap()
	exprs := []string{"'23:04:05.123456-05'", "'00:00:01+05:30:15'", "'12:00-03:30'", "'24:00:00+02'", "'00:00:00+00'"}
	pairs := make([][2]string, len(exprs))
	for i, e := range exprs {
		pairs[i] = [2]string{"timetz", e}
	}
	vals := serverValues(t, pairs)
	for i, sv := range vals {
		for _, f := range []struct {
			format int16
			src    []byte
		}{{1, sv.bin}, {0, []byte(sv.text)}} {
			var tm time.Time
			if err := mustPlan(t, m, TimetzOID, f.format, &tm).Scan(f.src, &tm); err != nil {
				t.Fatalf("%s format %d: %v", exprs[i], f.format, err)
			}
			var tz Timetz
			if err := mustPlan(t, m, TimetzOID, f.format, &tz).Scan(f.src, &tz); err != nil {
				t.Fatal(err)
			}
			_, off := tm.Zone()
			day := 1
			if tz.Microseconds == 24*3600e6 {
				day = 2
			}
			if y, mo, d := tm.Date(); y != 0 || mo != 1 || d != day || off != int(tz.Offset) || wallMicros(tm) != tz.Microseconds%(24*3600e6) {
				t.Errorf("%s format %d: %v, want %v", exprs[i], f.format, tm, tz)
			}
			if off == 0 && tm.Location() != time.UTC {
				t.Errorf("%s: location %v, want UTC", exprs[i], tm.Location())
			}
			if tz.Microseconds == 24*3600e6 {
				continue
			}
			if out, _, _, err := m.Encode(TimetzOID, tm, nil); err != nil || string(out) != string(sv.bin) {
				t.Errorf("Encode(%v) = %x, %v; server %x", tm, out, err, sv.bin)
			}
		}
	}
	// timetz[] into []time.Time.
	arr := serverValues(t, [][2]string{{"timetz[]", `'{"01:02:03+04","05:06:07-08"}'`}})[0]
	var ts []time.Time
	if err := mustPlan(t, m, TimetzArrayOID, 1, &ts).Scan(arr.bin, &ts); err != nil || len(ts) != 2 || ts[1].Hour() != 5 {
		t.Fatalf("timetz[]: %v, %v", ts, err)
	}
	if _, off := ts[1].Zone(); off != -8*3600 {
		t.Errorf("timetz[]: offset %d", off)
	}
	if timeTimetz(ts[0]).String() != "01:02:03+04" {
		t.Errorf("String: %q", timeTimetz(ts[0]).String())
	}
}

func TestTimetzMalformed(t *testing.T) {
	m := NewMap()
	for _, src := range [][]byte{
		{}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // short
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, // negative time
		{0, 0, 0, 0x14, 0x1d, 0xd7, 0x60, 1, 0, 0, 0, 0},             // 24:00:00.000001
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xe1, 0x00},                   // 16 hours west
		{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x1f, 0x00},             // 16 hours east
		{0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0},                      // -2^31
	} {
		_, err := m.DecodeValue(TimetzOID, 1, src)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%x: %v, want a DecodeError", src, err)
		}
	}
	for _, s := range []string{"12:00", "12:00:00", "12:00:00+16", "12:00:00-16:00", "25:00:00+00", "12:00:00+00 ", "12:00:00+1", "x"} {
		if _, err := m.DecodeValue(TimetzOID, 0, []byte(s)); err == nil {
			t.Errorf("%q decoded", s)
		}
	}
	for _, arg := range []any{
		Timetz{Microseconds: -1}, Timetz{Microseconds: 24*3600e6 + 1}, Timetz{Offset: 16 * 3600}, Timetz{Offset: -16 * 3600},
		time.Date(2000, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 17*3600)), Timestamp{InfinityModifier: Infinity, Valid: true},
	} {
		var ee *EncodeError
		if _, _, _, err := m.Encode(TimetzOID, arg, nil); !errors.As(err, &ee) {
			t.Errorf("Encode(%v): %v, want an EncodeError", arg, err)
		}
	}
	if out, f, _, err := m.Encode(TextOID, Timetz{Microseconds: 1, Offset: -1}, nil); err != nil || f != 1 || string(out) != "00:00:00.000001-00:00:01" {
		t.Errorf("timetz as text: %q %d %v", out, f, err)
	}
}

func FuzzTimetz(f *testing.F) {
	for _, h := range []string{
		"0000001355e0058000004650", "000000141dd7600000000000", "00000000000f4240ffffb299", "", "00", "ffffffffffffffff00000000",
		"000000141dd7600100000000", "0000000000000000000000e100", "00000000000000007fffffff",
	} {
		hexSeed(f, h)
	}
	for _, s := range []string{"23:04:05.123456-05", "24:00:00+00", "00:00:01+05:30:15", "12:00:00+16", `{"12:00:00+01",NULL}`, "12:00:00.1234567+00", "12:00:60+00"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, TimetzOID, format, src, new(Timetz), new(time.Time), new(*time.Time))
			decodeAll(t, m, TimetzArrayOID, format, src, new([]Timetz), new([]*time.Time), new([]string))
			v, err := m.DecodeValue(TimetzOID, format, src)
			if err != nil {
				continue
			}
			out, f, _, err := m.Encode(TimetzOID, v, nil)
			if err != nil || f != 1 {
				t.Fatalf("%#v: re-encode: format %d, %v", v, f, err)
			}
			v2, err := m.DecodeValue(TimetzOID, 1, out)
			if err != nil || v2 != v {
				t.Fatalf("%#v re-encoded as %x decodes to %#v (%v)", v, out, v2, err)
			}
			if v3, err := m.DecodeValue(TimetzOID, 0, []byte(v.(Timetz).String())); err != nil || v3 != v {
				t.Fatalf("%#v: text %q decodes to %#v (%v)", v, v.(Timetz).String(), v3, err)
			}
			// As a time.Time it encodes to the same bytes, but for 24:00:00.
			var tm time.Time
			if err := mustPlan(t, m, TimetzOID, 1, &tm).Scan(out, &tm); err != nil {
				t.Fatal(err)
			}
			if out2, _, _, err := m.Encode(TimetzOID, tm, nil); v.(Timetz).Microseconds != 24*3600e6 && (err != nil || string(out2) != string(out)) {
				t.Fatalf("%#v as %v encodes as %x, %v; want %x", v, tm, out2, err, out)
			}
		}
	})
}
