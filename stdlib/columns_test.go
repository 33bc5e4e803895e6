package stdlib_test

import (
	"math"
	"reflect"
	"testing"
	"time"
)

func TestColumnTypes(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	_, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS ct_t; DROP TYPE IF EXISTS ct_mood; DROP TYPE IF EXISTS ct_pair;
		CREATE TYPE ct_mood AS ENUM ('ok', 'sad');
		CREATE TYPE ct_pair AS (a int, b text);
		CREATE TABLE ct_t (
			c_bool bool, c_int2 int2, c_int4 int4, c_int8 int8, c_oid oid,
			c_float4 float4, c_float8 float8, c_num numeric(10, 2), c_numfree numeric,
			c_text text, c_vc varchar(20), c_vcfree varchar, c_bpchar char(5), c_name name, c_bytea bytea,
			c_date date, c_ts timestamp, c_tstz timestamptz, c_time time, c_interval interval,
			c_uuid uuid, c_json json, c_jsonb jsonb,
			c_int4arr int4[], c_textarr text[],
			c_inet inet, c_cidr cidr, c_mac macaddr, c_timetz timetz, c_numarr numeric[], c_int4arr2 int4[][],
			c_i4r int4range, c_i8r int8range, c_numr numrange, c_tsr tsrange, c_tstzr tstzrange, c_dr daterange,
			c_pair ct_pair, c_mood ct_mood)`)
	if err != nil {
		t.Fatal(err)
	}
	type col struct {
		name, dbType string
		scan         reflect.Type
		length       int64
		lengthOK     bool
		prec, scale  int64
		decimalOK    bool
	}
	var (
		tBool   = reflect.TypeFor[bool]()
		tInt    = reflect.TypeFor[int64]()
		tFloat  = reflect.TypeFor[float64]()
		tString = reflect.TypeFor[string]()
		tBytes  = reflect.TypeFor[[]byte]()
		tTime   = reflect.TypeFor[time.Time]()
	)
	want := []col{
		{name: "c_bool", dbType: "BOOL", scan: tBool},
		{name: "c_int2", dbType: "INT2", scan: tInt},
		{name: "c_int4", dbType: "INT4", scan: tInt},
		{name: "c_int8", dbType: "INT8", scan: tInt},
		{name: "c_oid", dbType: "OID", scan: tInt},
		{name: "c_float4", dbType: "FLOAT4", scan: tFloat},
		{name: "c_float8", dbType: "FLOAT8", scan: tFloat},
		{name: "c_num", dbType: "NUMERIC", scan: tString, prec: 10, scale: 2, decimalOK: true},
		{name: "c_numfree", dbType: "NUMERIC", scan: tString, prec: 65535, scale: 65531, decimalOK: true},
		{name: "c_text", dbType: "TEXT", scan: tString, length: math.MaxInt64, lengthOK: true},
		{name: "c_vc", dbType: "VARCHAR", scan: tString, length: 20, lengthOK: true},
		{name: "c_vcfree", dbType: "VARCHAR", scan: tString, length: math.MaxInt64, lengthOK: true},
		{name: "c_bpchar", dbType: "BPCHAR", scan: tString, length: 5, lengthOK: true},
		{name: "c_name", dbType: "NAME", scan: tString},
		{name: "c_bytea", dbType: "BYTEA", scan: tBytes, length: math.MaxInt64, lengthOK: true},
		{name: "c_date", dbType: "DATE", scan: tTime},
		{name: "c_ts", dbType: "TIMESTAMP", scan: tTime},
		{name: "c_tstz", dbType: "TIMESTAMPTZ", scan: tTime},
		{name: "c_time", dbType: "TIME", scan: tString},
		{name: "c_interval", dbType: "INTERVAL", scan: tString},
		{name: "c_uuid", dbType: "UUID", scan: tString},
		{name: "c_json", dbType: "JSON", scan: tBytes},
		{name: "c_jsonb", dbType: "JSONB", scan: tBytes},
		{name: "c_int4arr", dbType: "_INT4", scan: tString},
		{name: "c_textarr", dbType: "_TEXT", scan: tString},
		{name: "c_inet", dbType: "INET", scan: tString},
		{name: "c_cidr", dbType: "CIDR", scan: tString},
		{name: "c_mac", dbType: "MACADDR", scan: tString},
		{name: "c_timetz", dbType: "TIMETZ", scan: tString},
		{name: "c_numarr", dbType: "_NUMERIC", scan: tString},
		{name: "c_int4arr2", dbType: "_INT4", scan: tString},
		{name: "c_i4r", dbType: "INT4RANGE", scan: tString},
		{name: "c_i8r", dbType: "INT8RANGE", scan: tString},
		{name: "c_numr", dbType: "NUMRANGE", scan: tString},
		{name: "c_tsr", dbType: "TSRANGE", scan: tString},
		{name: "c_tstzr", dbType: "TSTZRANGE", scan: tString},
		{name: "c_dr", dbType: "DATERANGE", scan: tString},
		{name: "c_pair", scan: tString}, // dbType: the composite's OID, checked below
		{name: "c_mood", scan: tString}, // dbType: the enum's OID
	}
	var pairOID, moodOID string
	if err := db.QueryRowContext(ctx, "SELECT 'ct_pair'::regtype::oid::text, 'ct_mood'::regtype::oid::text").Scan(&pairOID, &moodOID); err != nil {
		t.Fatal(err)
	}
	want[len(want)-2].dbType = pairOID
	want[len(want)-1].dbType = moodOID

	rows, err := db.QueryContext(ctx, "SELECT * FROM ct_t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if len(cts) != len(want) {
		t.Fatalf("%d columns, want %d", len(cts), len(want))
	}
	for i, ct := range cts {
		w := want[i]
		if ct.Name() != w.name || ct.DatabaseTypeName() != w.dbType || ct.ScanType() != w.scan {
			t.Errorf("column %d: %s %s %v, want %s %s %v", i, ct.Name(), ct.DatabaseTypeName(), ct.ScanType(), w.name, w.dbType, w.scan)
		}
		if l, ok := ct.Length(); l != w.length || ok != w.lengthOK {
			t.Errorf("%s: Length = %d, %v; want %d, %v", w.name, l, ok, w.length, w.lengthOK)
		}
		if p, s, ok := ct.DecimalSize(); p != w.prec || s != w.scale || ok != w.decimalOK {
			t.Errorf("%s: DecimalSize = %d, %d, %v; want %d, %d, %v", w.name, p, s, ok, w.prec, w.scale, w.decimalOK)
		}
		if _, ok := ct.Nullable(); ok {
			t.Errorf("%s: Nullable claims to know", w.name)
		}
	}
}

// The scan type of each column is the type of the values Next gives.
func TestScanTypeMatchesValues(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	rows, err := db.QueryContext(ctx, `SELECT true, 1::int2, 2::int4, 3::int8, 4::oid, 1.5::float4, 2.5::float8,
		1.25::numeric, 'x'::text, 'y'::varchar, 'z'::name, '\x01'::bytea, now()::date, now()::timestamp, now(),
		now()::time, '1 hour'::interval, gen_random_uuid(), '1'::json, '1'::jsonb, ARRAY[1], ARRAY['a'],
		'10.0.0.1/8'::inet, '10.0.0.0/8'::cidr, '08:00:2b:01:02:03'::macaddr, '12:00+02'::timetz,
		ARRAY[1.5], ARRAY[[1, 2], [3, 4]], int4range(1, 5), int8range(NULL, 5), numrange(1.5, NULL),
		tsrange(now()::timestamp, NULL), tstzrange(NULL, now()), daterange('2024-01-01', '2024-02-01'), ROW(1, 'x')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, _ := rows.ColumnTypes()
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if reflect.TypeOf(v) != cts[i].ScanType() {
			t.Errorf("column %d (%s): value %T, scan type %v", i, cts[i].DatabaseTypeName(), v, cts[i].ScanType())
		}
	}
}
