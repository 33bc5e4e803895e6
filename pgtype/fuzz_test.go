package pgtype

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"testing"
	"time"
)

// decodeAll runs every decoder path for (oid, format, src): DecodeValue,
// the driver value, the text form and scans into dsts. It must not panic.
func decodeAll(t *testing.T, m *Map, oid uint32, format int16, src []byte, dsts ...any) {
	ti := m.typeOf(oid)
	_, _ = m.DecodeValue(oid, format, src)
	_, _ = m.driverValue(ti, format, src)
	_, _ = m.appendText(nil, ti, format, src)
	var s string
	var a any
	for _, d := range append([]any{&s, &a}, dsts...) {
		p, err := m.PlanScan(oid, format, d)
		if err != nil {
			t.Fatalf("PlanScan(%s, %T): %v", ti.name, d, err)
		}
		_ = p.Scan(src, d)
	}
}

func hexSeed(f *testing.F, h string) {
	b, err := hex.DecodeString(h)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

func FuzzNumeric(f *testing.F) {
	for _, h := range []string{
		"0000000000000000", "00010000000000010001", "0002ffff000000040001000a", "00000000c0000000", "00000000d0000020",
		"001a00110000001e000c0d801ed204d2162e23340d801ed204d2162e23340d801ed204d2162e23340d801ed204d2162e23340d801ed204d2162e2328",
		"0001000040000002270f", "0001800000003fff0001", "ffff0000000000000000", "00017fff0000000000010001",
	} {
		hexSeed(f, h)
	}
	m := NewMap()
	ti := m.typeOf(NumericOID)
	f.Fuzz(func(t *testing.T, src []byte) {
		decodeAll(t, m, NumericOID, 1, src, new(float64), new(big.Rat), new(big.Int), new(int64), new(Numeric), new(float32))
		decodeAll(t, m, NumericOID, 0, src, new(float64), new(big.Rat), new(big.Int), new(int64), new(Numeric))
		// Whatever decodes re-encodes to bytes that decode to the same text.
		text, err := appendNumericText(nil, ti, src)
		if err != nil {
			return
		}
		bin, err := appendNumericBinary(nil, text)
		if err != nil {
			t.Fatalf("re-encode %q: %v", text, err)
		}
		text2, err := appendNumericText(nil, ti, bin)
		if err != nil || string(text2) != string(text) {
			t.Fatalf("%q re-encoded as %x decodes to %q (%v)", text, bin, text2, err)
		}
	})
}

func FuzzArray(f *testing.F) {
	for _, h := range []string{
		"00000000000000000000001700", "0000000100000000000000170000000300000001000000040000000100000004000000020000000400000003",
		"00000001000000010000001700000002000000010000000400000001ffffffff", "ffffffff0000000000000017", "000000010000000000000017" + "7fffffff00000001",
		"0000000200000000000000170000000100000001000000010000000100000004000000ff",
	} {
		hexSeed(f, h)
	}
	for _, s := range []string{`{}`, `{1,2,NULL}`, `{"a b","c\"d",NULL,""}`, `[0:1]={1,2}`, `{{1,2},{3,4}}`, `{"unterminated`, `{a,,b}`} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, Int4ArrayOID, format, src, new([]int32), new([]*int32), new([]string))
			decodeAll(t, m, TextArrayOID, format, src, new([]string), new([]*string), new([][]byte))
			decodeAll(t, m, TimestamptzArrayOID, format, src, new([]time.Time))
		}
	})
}

func FuzzTime(f *testing.F) {
	for _, h := range []string{"0000000000000000", "7fffffffffffffff", "8000000000000000", "fffffffffffffff0", "00000000", "7fffffff", "80000000",
		"000000000000000100000002fffffff0", "0000000000000000"} {
		hexSeed(f, h)
	}
	for _, s := range []string{"2000-01-01", "0044-03-15 BC", "2000-01-01 12:34:56.789", "2000-01-01 12:34:56+05:30", "infinity",
		"294276-12-31 23:59:59.999999", "24:00:00", "1 year 2 mons -3 days +04:05:06.5", "-00:00:01", "2000-02-30", "9999999-12-31"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, DateOID, format, src, new(time.Time), new(Timestamp))
			decodeAll(t, m, TimestampOID, format, src, new(time.Time), new(Timestamp))
			decodeAll(t, m, TimestamptzOID, format, src, new(time.Time), new(Timestamp))
			decodeAll(t, m, TimeOID, format, src, new(time.Duration), new(Time))
			decodeAll(t, m, IntervalOID, format, src, new(time.Duration), new(Interval))
		}
	})
}

func FuzzUUID(f *testing.F) {
	hexSeed(f, "a0eebc999c0b4ef8bb6d6bb9bd380a11")
	for _, s := range []string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "--", "x"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, format := range []int16{0, 1} {
			decodeAll(t, m, UUIDOID, format, src, new([16]byte), new(myUUID))
		}
	})
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{"\x01{\"a\":1}", "\x02{}", "", "\x01", "{\"a\":[1,2]}", "\x01null"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, oid := range []uint32{JSONOID, JSONBOID} {
			for _, format := range []int16{0, 1} {
				decodeAll(t, m, oid, format, src, new([]byte), new(json.RawMessage), new(map[string]any), new(jsonThing), new(int))
			}
		}
	})
}

func FuzzTextNumbers(f *testing.F) {
	for _, s := range []string{"0", "-9223372036854775808", "9223372036854775808", "18446744073709551616", "+5", "-", "1e5", "NaN",
		"-Infinity", "0x10", "1_000", "1.5", ".5", "5.", "t", "off", "00000000000000000000000001", "\\x0a0b", "\\001\\\\"} {
		f.Add([]byte(s))
	}
	m := NewMap()
	f.Fuzz(func(t *testing.T, src []byte) {
		decodeAll(t, m, Int2OID, 0, src, new(int16), new(uint8))
		decodeAll(t, m, Int4OID, 0, src, new(int32))
		decodeAll(t, m, Int8OID, 0, src, new(int64), new(uint64))
		decodeAll(t, m, OIDOID, 0, src, new(uint32))
		decodeAll(t, m, Float4OID, 0, src, new(float32))
		decodeAll(t, m, Float8OID, 0, src, new(float64))
		decodeAll(t, m, BoolOID, 0, src, new(bool))
		decodeAll(t, m, ByteaOID, 0, src, new([]byte))
		decodeAll(t, m, TextOID, 0, src, new(int64), new(float64), new(bool))
		// Binary forms of the fixed-size types refuse wrong lengths.
		decodeAll(t, m, Int8OID, 1, src, new(int64), new(int8))
		decodeAll(t, m, Float4OID, 1, src, new(float32))
		decodeAll(t, m, BoolOID, 1, src, new(bool))
		// Text integers that parse agree with strconv.
		if v, err := parseInt(m.typeOf(Int8OID), src); err == nil {
			if got := string(appendPadded(nil, 0, 1)); got != "0" {
				t.Fatal("appendPadded")
			}
			if itoa64(v) != trimPlusZeros(string(src)) {
				t.Fatalf("parseInt(%q) = %d", src, v)
			}
		}
	})
}

// trimPlusZeros normalises a decimal integer text: no '+', no leading
// zeros, no "-0".
func trimPlusZeros(s string) string {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	if neg && s != "0" {
		return "-" + s
	}
	return s
}
