package pgline

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

// TestCodecRoundTripsThroughQueries sends each value as a parameter of its
// type and scans it back from the result, through the whole query path
// (described parameter types, binary formats, cached scan plans).
func TestCodecRoundTripsThroughQueries(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	hundred := strings.Repeat("1234567890", 10)
	bigInt, _ := new(big.Int).SetString(hundred, 10)
	old := time.Date(1900, 6, 15, 12, 34, 56, 789000000, time.UTC)
	far := time.Date(4000, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		typ  string
		in   any
		out  any // pointer to a zero destination
		want any // expected *out
	}{
		{"bool", true, new(bool), true},
		{"int2", int16(math.MinInt16), new(int16), int16(math.MinInt16)},
		{"int4", int32(math.MaxInt32), new(int32), int32(math.MaxInt32)},
		{"int8", int64(math.MinInt64), new(int64), int64(math.MinInt64)},
		{"int8", "42", new(int), 42},
		{"float4", float32(1.5), new(float32), float32(1.5)},
		{"float8", math.Inf(-1), new(float64), math.Inf(-1)},
		{"numeric", hundred + ".5", new(string), hundred + ".5"},
		{"numeric", bigInt, new(big.Int), *bigInt},
		{"numeric", 12.25, new(float64), 12.25},
		{"text", "héllo, wörld ✓", new(string), "héllo, wörld ✓"},
		{"text", "", new(string), ""},
		{"varchar", "v", new([]byte), []byte("v")},
		{"bytea", []byte{0, 1, 2, 255}, new([]byte), []byte{0, 1, 2, 255}},
		{"uuid", "123e4567-e89b-12d3-a456-426614174000", new(string), "123e4567-e89b-12d3-a456-426614174000"},
		{"date", far, new(time.Time), far},
		{"timestamp", old, new(time.Time), old},
		{"timestamptz", far, new(time.Time), far},
		{"interval", 90 * time.Minute, new(time.Duration), 90 * time.Minute},
		{"jsonb", map[string]any{"a": 1.0}, new(map[string]any), map[string]any{"a": 1.0}},
		{"json", json.RawMessage(`[1,2]`), new(json.RawMessage), json.RawMessage(`[1,2]`)},
		{"int4[]", []int32{1, 2, 3}, new([]int32), []int32{1, 2, 3}},
		{"text[]", []string{}, new([]string), []string{}},
		{"oid", uint32(4000000000), new(uint32), uint32(4000000000)},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			if err := c.QueryRow(ctx, "SELECT $1::"+tc.typ, tc.in).Scan(tc.out); err != nil {
				t.Fatal(err)
			}
			got := reflect.ValueOf(tc.out).Elem().Interface()
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}

	// NULL into pointers; NaN; infinity reported clearly.
	var p *int32
	var ns *string
	if err := c.QueryRow(ctx, "SELECT $1::int4, $2::text", nil, nil).Scan(&p, &ns); err != nil || p != nil || ns != nil {
		t.Fatalf("NULLs: %v %v %v", p, ns, err)
	}
	var f float64
	if err := c.QueryRow(ctx, "SELECT 'NaN'::float8").Scan(&f); err != nil || !math.IsNaN(f) {
		t.Fatalf("NaN: %v %v", f, err)
	}
	var ts time.Time
	if err := c.QueryRow(ctx, "SELECT 'infinity'::timestamptz").Scan(&ts); err == nil || !strings.Contains(err.Error(), "infinity") {
		t.Fatalf("infinity into time.Time: %v", err)
	}
	var its pgtype.Timestamp
	if err := c.QueryRow(ctx, "SELECT '-infinity'::timestamptz").Scan(&its); err != nil || its.InfinityModifier != pgtype.NegativeInfinity {
		t.Fatalf("-infinity into pgtype.Timestamp: %+v %v", its, err)
	}
}

// TestScanErrorNamesColumn: a value that does not fit its destination is
// an error naming the column, and the same row can then be scanned into
// other destinations.
func TestScanErrorNamesColumn(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	rows, err := c.Query(ctx, "SELECT 40000::int8 AS big, NULL::int4 AS missing")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	var small int16
	var n int32
	err = rows.Scan(&small, nil)
	if err == nil || !strings.Contains(err.Error(), "column 0 (big)") || !errors.Is(err, pgtype.ErrOutOfRange) {
		t.Fatalf("int8 40000 into int16: %v", err)
	}
	err = rows.Scan(nil, &n)
	if err == nil || !strings.Contains(err.Error(), "column 1 (missing)") || !errors.Is(err, pgtype.ErrNull) {
		t.Fatalf("NULL into int32: %v", err)
	}
	var big int64
	var np *int32
	if err := rows.Scan(&big, &np); err != nil || big != 40000 || np != nil {
		t.Fatalf("rescan: %d %v %v", big, np, err)
	}
}
