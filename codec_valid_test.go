package pgline

// The pgtype types with a Valid field (pgx's names): what a scan of a
// value and of NULL gives, what an argument of each sends, through a real
// server.

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// validCases are a value of each Valid type with the SQL type it goes in
// and the server's text for it.
var validCases = []struct {
	typ  string
	val  any // a Valid value
	text string
}{
	{"text", pgtype.Text{String: "héllo", Valid: true}, "héllo"},
	{"int2", pgtype.Int2{Int16: -7, Valid: true}, "-7"},
	{"int4", pgtype.Int4{Int32: math.MaxInt32, Valid: true}, "2147483647"},
	{"int8", pgtype.Int8{Int64: math.MinInt64, Valid: true}, "-9223372036854775808"},
	{"float4", pgtype.Float4{Float32: 1.5, Valid: true}, "1.5"},
	{"float8", pgtype.Float8{Float64: -0.25, Valid: true}, "-0.25"},
	{"bool", pgtype.Bool{Bool: true, Valid: true}, "true"},
	{"uuid", pgtype.UUID{Bytes: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, Valid: true}, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	{"date", pgtype.Date{Time: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), Valid: true}, "2024-02-29"},
	{"date", pgtype.Date{InfinityModifier: pgtype.Infinity, Valid: true}, "infinity"},
	{"timestamptz", pgtype.Timestamptz{Time: time.Date(2024, 2, 29, 12, 30, 0, 500000000, time.UTC), Valid: true}, "2024-02-29 12:30:00.5+00"},
	{"timestamptz", pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, "-infinity"},
	{"timestamp", pgtype.Timestamp{Time: time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC), Valid: true}, "1999-12-31 23:59:59"},
	{"numeric", pgtype.Numeric{Int: big.NewInt(-1250), Exp: -2, Valid: true}, "-12.50"},
	{"numeric", pgtype.Numeric{NaN: true, Valid: true}, "NaN"},
	{"interval", pgtype.Interval{Months: 14, Days: -3, Microseconds: 5e6, Valid: true}, "1 year 2 mons -3 days +00:00:05"},
	{"interval", pgtype.Interval{Valid: true}, "00:00:00"}, // a zero interval that is not NULL
	{"time", pgtype.Time{Microseconds: 3723e6, Valid: true}, "01:02:03"},
}

// TestValidTypesScanValuesAndNull: each type scans the server's value with
// Valid set, and NULL as its zero value, also over a value held before.
func TestValidTypesScanValuesAndNull(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	for _, tc := range validCases {
		dst := reflect.New(reflect.TypeOf(tc.val))
		var null any = reflect.New(reflect.TypeOf(tc.val)).Interface()
		if err := c.QueryRow(ctx, "SELECT $1::"+tc.typ+", NULL::"+tc.typ, tc.text).Scan(dst.Interface(), null); err != nil {
			t.Errorf("%s %q: %v", tc.typ, tc.text, err)
			continue
		}
		if got := dst.Elem().Interface(); !reflect.DeepEqual(got, tc.val) {
			t.Errorf("%s %q scanned %#v, want %#v", tc.typ, tc.text, got, tc.val)
		}
		zero := reflect.Zero(reflect.TypeOf(tc.val)).Interface()
		if got := reflect.ValueOf(null).Elem().Interface(); !reflect.DeepEqual(got, zero) {
			t.Errorf("NULL::%s scanned %#v, want the zero value", tc.typ, got)
		}
		// NULL over a value: the value goes.
		if err := c.QueryRow(ctx, "SELECT NULL::"+tc.typ).Scan(dst.Interface()); err != nil {
			t.Fatal(err)
		}
		if got := dst.Elem().Interface(); !reflect.DeepEqual(got, zero) {
			t.Errorf("NULL::%s over a value scanned %#v, want the zero value", tc.typ, got)
		}
	}
}

// TestValidTypesAsArguments: a Valid value is sent as its value (the
// server's text of it matches), a pointer to one too, the zero value and
// a nil pointer as NULL.
func TestValidTypesAsArguments(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	for _, tc := range validCases {
		ptr := reflect.New(reflect.TypeOf(tc.val))
		ptr.Elem().Set(reflect.ValueOf(tc.val))
		nilPtr := reflect.Zero(ptr.Type()).Interface()
		zero := reflect.Zero(reflect.TypeOf(tc.val)).Interface()
		var got, gotPtr string
		var isNull, nilIsNull bool
		err := c.QueryRow(ctx, "SELECT $1::"+tc.typ+"::text, $2::"+tc.typ+"::text, $3::"+tc.typ+" IS NULL, $4::"+tc.typ+" IS NULL",
			tc.val, ptr.Interface(), zero, nilPtr).Scan(&got, &gotPtr, &isNull, &nilIsNull)
		if err != nil {
			t.Errorf("%#v: %v", tc.val, err)
			continue
		}
		if got != tc.text || gotPtr != tc.text {
			t.Errorf("%#v sent as %q (pointer: %q), want %q", tc.val, got, gotPtr, tc.text)
		}
		if !isNull || !nilIsNull {
			t.Errorf("%T: the zero value sent as NULL %v, a nil pointer %v; want both NULL", tc.val, isNull, nilIsNull)
		}
	}
}

// TestValidFalseWithValueRefused: a value set without Valid is an error,
// never a NULL stored in its place, and the connection goes on.
func TestValidFalseWithValueRefused(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	for _, arg := range []any{
		pgtype.Text{String: "x"},
		pgtype.Int4{Int32: 1},
		pgtype.Float8{Float64: math.Copysign(0, -1)},
		pgtype.UUID{Bytes: [16]byte{1}},
		pgtype.Timestamptz{Time: time.Now()},
		pgtype.Numeric{Int: big.NewInt(5)},
		pgtype.Timestamp{InfinityModifier: pgtype.Infinity},
		pgtype.Interval{Days: 1},
		pgtype.Time{Microseconds: 1},
	} {
		_, err := c.Exec(ctx, "SELECT $1", arg)
		if err == nil || !strings.Contains(err.Error(), "Valid is false") {
			t.Errorf("%#v: error %v, want one saying Valid is false", arg, err)
		}
	}
	if n := rowCount(t, c, "generate_series(1, 3)"); n != 3 {
		t.Fatalf("after the refusals: %d rows", n)
	}
}

// TestValidTypesInArraysAndCopy: Valid types as array elements (NULL
// elements from the zero value) and in CopyFrom.
func TestValidTypesInArraysAndCopy(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	in := []pgtype.Text{{String: "a", Valid: true}, {}, {String: "", Valid: true}}
	var out []pgtype.Text
	var text string
	if err := c.QueryRow(ctx, "SELECT $1::text[], $1::text[]::text", in).Scan(&out, &text); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) || text != `{a,NULL,""}` {
		t.Fatalf("array round trip %#v (%s), want %#v", out, text, in)
	}
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE valid_copy (n int4, m numeric, at timestamptz)"); err != nil {
		t.Fatal(err)
	}
	rows := [][]any{
		{pgtype.Int4{Int32: 1, Valid: true}, pgtype.Numeric{Int: big.NewInt(15), Exp: -1, Valid: true}, pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}},
		{pgtype.Int4{}, pgtype.Numeric{}, pgtype.Timestamptz{}},
	}
	if _, err := c.CopyFrom(ctx, Identifier{"valid_copy"}, []string{"n", "m", "at"}, CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := c.QueryRow(ctx, "SELECT string_agg(concat_ws('|', coalesce(n::text, 'null'), coalesce(m::text, 'null'), coalesce(at::text, 'null')), ';' ORDER BY n NULLS LAST) FROM valid_copy").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "1|1.5|infinity;null|null|null"; got != want {
		t.Fatalf("copied %q, want %q", got, want)
	}
	if _, err := c.CopyFrom(ctx, Identifier{"valid_copy"}, []string{"n"}, CopyFromRows([][]any{{pgtype.Int4{Int32: 2}}})); err == nil || !strings.Contains(err.Error(), "Valid is false") {
		t.Fatalf("CopyFrom of a value without Valid: %v, want the Valid error", err)
	}
}

// TestValidTypesOutOfRangeIsAnError: the inner value's range rules hold.
func TestValidTypesOutOfRangeIsAnError(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	var v pgtype.Int2
	err := c.QueryRow(ctx, "SELECT 40000::int4").Scan(&v)
	if !errors.Is(err, pgtype.ErrOutOfRange) {
		t.Fatalf("int4 40000 into pgtype.Int2: %v, want ErrOutOfRange", err)
	}
}
