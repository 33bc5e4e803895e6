package pgtype

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The Valid types are sql.Scanners and driver.Valuers for database/sql.
var (
	_ sql.Scanner   = (*Text)(nil)
	_ driver.Valuer = Text{}
	_ sql.Scanner   = (*Numeric)(nil)
	_ driver.Valuer = Numeric{}
	_ sql.Scanner   = (*Timestamptz)(nil)
	_ driver.Valuer = Timestamptz{}
)

// TestValidScanMethods: Scan takes database/sql's driver values (and
// nil for NULL) as pgx's types do; a value that does not fit is an error.
func TestValidScanMethods(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		dst  sql.Scanner
		src  any
		want any
	}{
		{new(Text), "x", Text{String: "x", Valid: true}},
		{new(Text), []byte("y"), Text{String: "y", Valid: true}},
		{new(Int4), int64(42), Int4{Int32: 42, Valid: true}},
		{new(Int4), "42", Int4{Int32: 42, Valid: true}},
		{new(Int8), nil, Int8{}},
		{new(Float8), 2.5, Float8{Float64: 2.5, Valid: true}},
		{new(Bool), true, Bool{Bool: true, Valid: true}},
		{new(Bool), "t", Bool{Bool: true, Valid: true}},
		{new(UUID), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", UUID{Bytes: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, Valid: true}},
		{new(Timestamptz), at, Timestamptz{Time: at, Valid: true}},
		{new(Timestamptz), "infinity", Timestamptz{InfinityModifier: Infinity, Valid: true}},
		{new(Date), at, Date{Time: at, Valid: true}},
		{new(Numeric), "12.50", Numeric{Int: big.NewInt(1250), Exp: -2, Valid: true}},
		{new(Numeric), "1.5e3", Numeric{Int: big.NewInt(15), Exp: 2, Valid: true}},
		{new(Numeric), int64(-3), Numeric{Int: big.NewInt(-3), Valid: true}},
		{new(Numeric), nil, Numeric{}},
		{new(Interval), "1 day 02:00:00", Interval{Days: 1, Microseconds: 2 * 3600e6, Valid: true}},
		{new(Time), "01:02:03", Time{Microseconds: 3723e6, Valid: true}},
	}
	for _, tc := range tests {
		if err := tc.dst.Scan(tc.src); err != nil {
			t.Errorf("%T.Scan(%#v): %v", tc.dst, tc.src, err)
			continue
		}
		if got := reflect.ValueOf(tc.dst).Elem().Interface(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%T.Scan(%#v) = %#v, want %#v", tc.dst, tc.src, got, tc.want)
		}
	}
	for _, bad := range []struct {
		dst sql.Scanner
		src any
	}{
		{new(Int2), int64(40000)}, {new(Numeric), "12,5"}, {new(UUID), "nope"}, {new(Text), 1.5i}, {new(Int4), time.Now()},
	} {
		if err := bad.dst.Scan(bad.src); err == nil {
			t.Errorf("%T.Scan(%#v) succeeded, want an error", bad.dst, bad.src)
		}
	}
}

// TestValidValueMethods: Value gives a driver value, nil for the zero
// value, and the Valid error for a value set without Valid.
func TestValidValueMethods(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		v    driver.Valuer
		want driver.Value
	}{
		{Text{String: "x", Valid: true}, "x"},
		{Text{}, nil},
		{Int2{Int16: 3, Valid: true}, int64(3)},
		{Float4{Float32: 0.5, Valid: true}, 0.5},
		{UUID{Bytes: [16]byte{15: 1}, Valid: true}, "00000000-0000-0000-0000-000000000001"},
		{Timestamptz{Time: at, Valid: true}, at},
		{Date{InfinityModifier: NegativeInfinity, Valid: true}, "-infinity"},
		{Numeric{Int: big.NewInt(-5), Exp: -1, Valid: true}, "-0.5"},
		{Numeric{}, nil},
		{Interval{Months: 1, Valid: true}, "1 mon"},
		{Time{Valid: true}, "00:00:00"},
	}
	for _, tc := range tests {
		got, err := tc.v.Value()
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%#v.Value() = %#v, %v; want %#v", tc.v, got, err, tc.want)
		}
	}
	for _, v := range []driver.Valuer{Text{String: "x"}, Numeric{NaN: true}, Timestamp{Time: at}, Date{Time: at}} {
		if _, err := v.Value(); err == nil || !strings.Contains(err.Error(), "Valid is false") {
			t.Errorf("%#v.Value(): %v, want the Valid error", v, err)
		}
	}
}

// TestValidJSON: null for NULL, the value otherwise (pgx's forms), and
// back.
func TestValidJSON(t *testing.T) {
	type row struct {
		Name  Text
		N     Int8
		Price Numeric
		At    Timestamptz
		ID    UUID
	}
	in := row{
		Name:  Text{String: "a", Valid: true},
		Price: Numeric{Int: big.NewInt(1250), Exp: -2, Valid: true},
		At:    Timestamptz{InfinityModifier: Infinity, Valid: true},
		ID:    UUID{Bytes: [16]byte{15: 2}, Valid: true},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Name":"a","N":null,"Price":12.50,"At":"infinity","ID":"00000000-0000-0000-0000-000000000002"}`
	if string(b) != want {
		t.Fatalf("json %s, want %s", b, want)
	}
	var out row
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("back from json %#v, want %#v", out, in)
	}
}

// TestNumericPgxMethods: Float64Value and Int64Value, as pgx's.
func TestNumericPgxMethods(t *testing.T) {
	var n Numeric
	if err := n.Scan("12.50"); err != nil {
		t.Fatal(err)
	}
	f, err := n.Float64Value()
	if err != nil || f != (Float8{Float64: 12.5, Valid: true}) {
		t.Errorf("Float64Value = %v, %v", f, err)
	}
	if _, err := n.Int64Value(); err == nil {
		t.Errorf("Int64Value of 12.50 succeeded, want an error")
	}
	if err := n.Scan("1.2e3"); err != nil {
		t.Fatal(err)
	}
	if i, err := n.Int64Value(); err != nil || i != (Int8{Int64: 1200, Valid: true}) {
		t.Errorf("Int64Value of 1.2e3 = %v, %v", i, err)
	}
	if f, err := (Numeric{}).Float64Value(); err != nil || f.Valid {
		t.Errorf("Float64Value of NULL = %v, %v; want not Valid", f, err)
	}
}

// FuzzValidScan: the Scan and UnmarshalJSON methods of the Valid types
// take any text without a panic, and a value they accept goes back
// through Value.
func FuzzValidScan(f *testing.F) {
	for _, s := range []string{"12.50", "1.5e3", "NaN", "-Infinity", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "infinity", "2024-01-02 03:04:05+00", "1 year 2 mons", "24:00:00", "t", "-32768", "1e400", `"x"`, "null"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, dst := range []sql.Scanner{new(Text), new(Int2), new(Int4), new(Int8), new(Float4), new(Float8), new(Bool), new(UUID), new(Date), new(Timestamptz), new(Timestamp), new(Numeric), new(Interval), new(Time)} {
			if dst.Scan(s) == nil {
				if _, err := dst.(driver.Valuer).Value(); err != nil {
					t.Errorf("%T.Scan(%q) accepted, then Value: %v", dst, s, err)
				}
			}
			if u, ok := dst.(json.Unmarshaler); ok {
				_ = u.UnmarshalJSON([]byte(s))
			}
		}
	})
}

// TestValidPlanNamesTheDestination: a column that cannot go into a Valid
// type's value names the Valid type, once.
func TestValidPlanNamesTheDestination(t *testing.T) {
	m := NewMap()
	_, err := m.PlanScan(PointOID, 1, new(Int4))
	if err == nil || !strings.Contains(err.Error(), "*pgtype.Int4") || strings.Count(err.Error(), "cannot scan") != 1 {
		t.Errorf("point into *Int4: %v, want one error naming *pgtype.Int4", err)
	}
	_, err = m.PlanScan(20481, 1, new(Int4))
	var ute *UnknownTypeError
	if !errors.As(err, &ute) || ute.Dest != "*pgtype.Int4" {
		t.Errorf("unknown OID into *Int4: %v, want an UnknownTypeError naming *pgtype.Int4", err)
	}
}
