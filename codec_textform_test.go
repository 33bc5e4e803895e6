package pgline

// pgline's text forms against the server's: random values rendered into
// *string, time.Time parameters, composites read in text under session
// settings that change the server's output, and a client_encoding other
// than UTF8.

import (
	"context"
	"fmt"
	"math/rand"
	"net/netip"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pgline/pgline/pgtype"
)

// sameFloatText reports whether a and b are the same text but for the
// spelling of their numbers, which must denote the same float (float4
// when bits is 32).
func sameFloatText(a, b string, bits int) bool {
	na, nb := floatNumRE.FindAllString(a, -1), floatNumRE.FindAllString(b, -1)
	if floatNumRE.ReplaceAllString(a, "#") != floatNumRE.ReplaceAllString(b, "#") || len(na) != len(nb) {
		return false
	}
	for i := range na {
		x, err1 := strconv.ParseFloat(na[i], bits)
		y, err2 := strconv.ParseFloat(nb[i], bits)
		if err1 != nil || err2 != nil || x != y {
			return false
		}
	}
	return true
}

var floatNumRE = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?`)

// TestCodecTextFormMatchesServer scans random server-generated values
// (read in binary) into *string, which pgline fills with its own
// rendering of the type's text form, and compares that with the server's
// own value::text (TimeZone UTC, default styles).
func TestCodecTextFormMatchesServer(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	r := "random()"
	sr := "(random()-0.5)"
	mag := "10^((random()*60-30)::int)"
	exprs := []string{
		fmt.Sprintf("(%s * %s)::float8", sr, mag),
		fmt.Sprintf("(%s * 10^((random()*600-300)::int))::float8", sr),
		fmt.Sprintf("(%s * %s)::float4", sr, "10^((random()*70-35)::int)"),
		fmt.Sprintf("((%s * 10^((random()*40-20)::int))::float4)", sr),
		fmt.Sprintf("(%s * 10^((random()*40-20)::int))::numeric", sr),
		fmt.Sprintf("round((%s * 10^((random()*40-20)::int))::numeric, (random()*30)::int)", sr),
		fmt.Sprintf("make_interval(years => (%s*200)::int, months => (%s*30)::int, days => (%s*100)::int, hours => (%s*100)::int, secs => %s*10000)", sr, sr, sr, sr, sr),
		fmt.Sprintf("make_interval(days => (%s*100)::int, secs => %s*1e7)", sr, sr),
		fmt.Sprintf("make_interval(months => (%s*3000)::int)", sr),
		fmt.Sprintf("('00:00'::time + %s * interval '24 hours')", r),
		fmt.Sprintf("(('00:00'::time + %s * interval '24 hours')::text || (CASE WHEN %s < 0.5 THEN '+' ELSE '-' END) || lpad(((%s*15)::int)::text, 2, '0') || ':' || lpad(((%s*59)::int)::text, 2, '0') || ':' || lpad(((%s*59)::int)::text, 2, '0'))::timetz", r, r, r, r, r),
		fmt.Sprintf("('2000-01-01'::timestamp + %s * interval '8000 years')", sr),
		fmt.Sprintf("('2000-01-01'::timestamptz + %s * interval '8000 years')", sr),
		fmt.Sprintf("('2000-01-01'::date + (%s * 3000000)::int)", sr),
		fmt.Sprintf("point(%s * %s, %s * %s)", sr, mag, sr, mag),
		fmt.Sprintf("box(point(%s * %s, %s), point(%s, %s * %s))", sr, mag, sr, sr, sr, mag),
		fmt.Sprintf("lseg(point(%s, %s * %s), point(%s * %s, %s))", sr, sr, mag, sr, mag, sr),
		fmt.Sprintf("line(point(%s, %s * %s), point(%s * %s, %s))", sr, sr, mag, sr, mag, sr),
		fmt.Sprintf("circle(point(%s * %s, %s), %s * %s)", sr, mag, sr, r, mag),
		fmt.Sprintf("path(polygon(box(point(%s, %s), point(%s * %s, %s))))", sr, sr, sr, mag, sr),
		fmt.Sprintf("polygon(box(point(%s, %s), point(%s * %s, %s)))", sr, sr, sr, mag, sr),
		fmt.Sprintf("ARRAY[(%s * 10^((random()*30-15)::int))::float8, %s::float8, 'NaN', '-Infinity', -0.0::float8]", sr, sr),
		fmt.Sprintf("ARRAY[box(point(%s, %s), point(%s, %s)), box(point(1,2),point(3,4))]", sr, sr, sr, sr),
		fmt.Sprintf("numrange(((%s)*100)::numeric, ((%s)*100+100)::numeric, (ARRAY['[)','(]','[]','()'])[1+(%s*3)::int])", sr, r, r),
		fmt.Sprintf("tstzrange('2000-01-01'::timestamptz + %s * interval '100 years', 'infinity')", sr),
		fmt.Sprintf("tsrange(NULL, '2000-01-01'::timestamp + %s * interval '100 years', '(]')", sr),
		fmt.Sprintf("daterange('2000-01-01'::date + (%s*1000)::int, '2010-01-01'::date, '[]')", sr),
		fmt.Sprintf("int8multirange(int8range((%s*100)::int8, 200), int8range(300, NULL))", sr),
		fmt.Sprintf("nummultirange(numrange((%s*100)::numeric(10,3), 200.5))", sr),
		fmt.Sprintf("(lpad(((%s*1000000)::int::bit(20))::text, (1+%s*19)::int, '1'))::varbit", r, r),
		fmt.Sprintf("network((((%s*255)::int) || '.' || ((%s*255)::int) || '.0.0/' || (%s*32)::int)::inet)", r, r, r),
		fmt.Sprintf("('::ffff:' || ((%s*255)::int) || '.1.2.3/' || (96+%s*31)::int)::inet", r, r),
		fmt.Sprintf("ROW((%s*100)::int, (%s * %s)::float8, 'a\"b\\c (x)', NULL::text, ''::text, '2000-01-01'::date + (%s*1000)::int, ARRAY[1,2])", sr, sr, mag, sr),
		fmt.Sprintf("jsonb_build_object('a', %s * %s, 'b', ARRAY[%s], 'c', E'\\u00e9\\t\"')", sr, mag, sr),
		fmt.Sprintf("ARRAY[[%s::numeric(10,4), NULL],[1e-20::numeric, -0.0::numeric]]", sr),
		fmt.Sprintf("('[2:3]={' || (%s*10)::int || ',' || (%s*10)::int || '}')::int4[]", sr, sr),
		fmt.Sprintf("ARRAY[make_interval(secs => %s*1e6), NULL]", sr),
		"'-0'::float8",
		"ARRAY['-0'::float4, 1e-45::float4, 3.4028235e38::float4]",
		"'1e-320'::float8",
	}
	const n = 60
	bad := 0
	for k, e := range exprs {
		if strings.Contains(e, "multirange(") && srv.Version() < 140000 {
			t.Run(fmt.Sprint("expr ", k), func(t *testing.T) { srv.NeedVersion(t, 14, "multiranges") })
			continue
		}
		// Float text may spell the same float differently (PostgreSQL
		// prints exact integer digits above 2^53): compare floats, and the
		// geometric types made of them, by value.
		float, bits := k < 4 || k >= 14 && k <= 22 || strings.HasPrefix(e, "ROW("), 64
		if k == 2 || k == 3 {
			bits = 32
		}
		rows, err := c.Query(ctx, fmt.Sprintf("SELECT v, v::text FROM (SELECT %s AS v FROM generate_series(1, %d)) s", e, n))
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		shown := 0
		for rows.Next() {
			var got, want string
			if err := rows.Scan(&got, &want); err != nil {
				t.Errorf("%s: scan: %v", e, err)
				break
			}
			if got != want && !(float && sameFloatText(got, want, bits)) {
				bad++
				if shown < 3 {
					t.Errorf("%s:\n  pgline %q\n  server %q", e, got, want)
				}
				shown++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", e, err)
		}
	}
	if bad > 0 {
		t.Logf("%d values differ", bad)
	}
}

// TestCodecTimeParamsMatchServer sends random time.Time values in
// odd locations (half-hour, 45-minute and LMT offsets with seconds, DST)
// as date, timestamp, timestamptz, time and timetz parameters, and checks
// the server's text of what arrived against what pgline documents:
// timestamptz the instant, timestamp and time the wall clock, date the
// wall date, timetz the wall clock with the zone's offset (nanoseconds
// truncated to microseconds).
func TestCodecTimeParamsMatchServer(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	var locs []*time.Location
	for _, n := range []string{"America/St_Johns", "Asia/Kathmandu", "Europe/Amsterdam", "Pacific/Chatham", "America/Sao_Paulo", "Australia/Lord_Howe", "Africa/Monrovia"} {
		l, err := time.LoadLocation(n)
		if err != nil {
			t.Skip(err)
		}
		locs = append(locs, l)
	}
	locs = append(locs, time.FixedZone("odd", -(3*3600+25*60+7)), time.FixedZone("odd2", 15*3600+59*60+59), time.UTC)
	rng := rand.New(rand.NewSource(7))
	bad := 0
	for i := 0; i < 300; i++ {
		loc := locs[rng.Intn(len(locs))]
		sec := rng.Int63n(int64(200*365*86400)) - int64(100*365*86400) + 946684800
		tm := time.Unix(sec, rng.Int63n(1e9)).In(loc)
		if rng.Intn(4) == 0 {
			tm = time.Now().In(loc) // with a monotonic reading
		}
		trunc := tm.Truncate(time.Microsecond)
		if tm.Nanosecond()%1000 != 0 {
			trunc = time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond()/1000*1000, loc)
		}
		_, off := tm.Zone()
		frac := func(x time.Time) string {
			s := x.Format(".999999")
			return s
		}
		tzs := func(off int) string {
			sign := "+"
			if off < 0 {
				sign, off = "-", -off
			}
			s := fmt.Sprintf("%s%02d", sign, off/3600)
			if off%3600 != 0 {
				s += fmt.Sprintf(":%02d", off/60%60)
				if off%60 != 0 {
					s += fmt.Sprintf(":%02d", off%60)
				}
			}
			return s
		}
		u := trunc.UTC()
		cases := []struct{ typ, want string }{
			{"timestamptz", u.Format("2006-01-02 15:04:05") + frac(u) + "+00"},
			{"timestamp", trunc.Format("2006-01-02 15:04:05") + frac(trunc)},
			{"date", trunc.Format("2006-01-02")},
			{"time", trunc.Format("15:04:05") + frac(trunc)},
			{"timetz", trunc.Format("15:04:05") + frac(trunc) + tzs(off)},
		}
		for _, cs := range cases {
			var got string
			if err := c.QueryRow(ctx, "SELECT $1::"+cs.typ+"::text", tm).Scan(&got); err != nil {
				t.Errorf("%s %v: %v", cs.typ, tm, err)
				continue
			}
			if got != cs.want {
				bad++
				if bad < 10 {
					t.Errorf("%s %v (%s): server got %s, want %s", cs.typ, tm, loc, got, cs.want)
				}
			}
		}
		// And back: the instant read from timestamptz is the same instant.
		var back time.Time
		if err := c.QueryRow(ctx, "SELECT $1::timestamptz", tm).Scan(&back); err != nil || !back.Equal(trunc) {
			t.Errorf("timestamptz %v came back %v, %v", tm, back, err)
		}
		var ts pgtype.Timetz
		if err := c.QueryRow(ctx, "SELECT $1::timetz", tm).Scan(&ts); err != nil || int(ts.Offset) != off {
			t.Errorf("timetz %v came back %+v, %v", tm, ts, err)
		}
	}
}

// compositeAll is the Go form of audc_all; its money field makes pgline
// read the composite in text format, so every other field is parsed from
// the server's text output, which session settings change.
type compositeAll struct {
	M   string
	B   []byte
	F8  float64
	F4  float32
	TS  pgtype.Timestamp
	TZ  pgtype.Timestamp
	D   pgtype.Timestamp
	TM  time.Duration
	TTZ pgtype.Timetz
	IV  pgtype.Interval
	N   string
	Bo  bool
	J   string
	U   string
	IP  netip.Prefix
	VB  pgtype.Bits
	IA  []int32
	R   pgtype.Range[int32]
	Tx  string
	Pt  pgtype.Point
	TA  []*pgtype.Timestamp
	TR  pgtype.Range[pgtype.Timestamp]
	NR  pgtype.Range[pgtype.Numeric]
	IVA []*pgtype.Interval
	BA  [][]byte
	TTA []pgtype.Timetz
}

const compositeAllType = `CREATE TYPE audc_all AS (m money, b bytea, f8 float8, f4 float4, ts timestamp,
	tz timestamptz, d date, tm time, ttz timetz, iv interval, n numeric, bo bool, j jsonb, u uuid,
	ip inet, vb varbit, ia int4[], r int4range, tx text, pt point,
	ta timestamptz[], tr tstzrange, nr numrange, iva interval[], ba bytea[], tta timetz[])`

// compositeAllRows makes audc_rows: n random rows of audc_all fields as SQL
// expressions, generated by the server from a seed.
const compositeAllRows = `SELECT setseed(%f);
CREATE TEMP TABLE audc_rows AS SELECT i,
  (random()*1000)::numeric(10,2)::money AS m,
  decode(md5(random()::text) || '5c00ff27', 'hex') AS b,
  (random()-0.5) * 10^((random()*40-20)::int) AS f8,
  ((random()-0.5) * 10^((random()*20-10)::int))::float4 AS f4,
  ('2000-01-01'::timestamp + (random()-0.5) * interval '4000 years' ) AS ts,
  ('2000-01-01'::timestamptz + (random()-0.5) * interval '4000 years') AS tz,
  ('2000-01-01'::date + ((random()-0.5) * 2000000)::int) AS d,
  ('00:00'::time + random() * interval '24 hours') AS tm,
  (('00:00'::time + random() * interval '24 hours')::text || (CASE WHEN random() < 0.5 THEN '+' ELSE '-' END) || lpad(((random()*14)::int)::text, 2, '0') || ':' || lpad(((random()*59)::int)::text, 2, '0'))::timetz AS ttz,
  make_interval(years => ((random()-0.5)*200)::int, months => ((random()-0.5)*30)::int, days => ((random()-0.5)*100)::int, secs => (random()-0.5)*1000000) AS iv,
  ((random()-0.5) * 10^((random()*30-10)::int))::numeric(40,12) AS n,
  random() < 0.5 AS bo,
  jsonb_build_object('k', random(), 'é', 'x"y\z') AS j,
  md5(random()::text)::uuid AS u,
  ((random()*255)::int || '.' || (random()*255)::int || '.1.2/' || (random()*32)::int)::inet AS ip,
  (lpad(((random()*1000000)::int::bit(20))::text, 20, '0'))::varbit AS vb,
  ARRAY[(random()*100)::int, -(random()*100)::int] AS ia,
  int4range((random()*10)::int, (random()*10)::int + 10) AS r,
  'tx ' || md5(random()::text) AS tx,
  point((random()-0.5)*1e6, (random()-0.5)*1e-6) AS pt,
  ARRAY['2000-01-01'::timestamptz + (random()-0.5) * interval '4000 years', 'infinity', NULL] AS ta,
  tstzrange('2000-01-01'::timestamptz + (random()-0.5) * interval '400 years', '2300-01-01', '(]') AS tr,
  numrange(-(random()*1e6)::numeric(20,7), NULL) AS nr,
  ARRAY[make_interval(days => ((random()-0.5)*100)::int, secs => (random()-0.5)*1e5), NULL] AS iva,
  ARRAY[decode(md5(random()::text) || '5c22272c7b7d00', 'hex'), '', NULL] AS ba,
  ARRAY[('00:00'::time + random() * interval '24 hours')::text || '-03:25:07', '24:00:00+15:59']::timetz[] AS tta
FROM generate_series(1, %d) i`

// TestCodecCompositeTextUnderSettings reads the same random values
// once per field in binary and once inside a composite that pgline reads
// in text, under session settings that change the server's text output.
// Every value must either come back equal or fail; never differ.
func TestCodecCompositeTextUnderSettings(t *testing.T) {
	ctx := context.Background()
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, `DROP TYPE IF EXISTS audc_all CASCADE`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, compositeAllType); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadType(ctx, "audc_all"); err != nil {
		t.Fatal(err)
	}
	if f := c.TypeMap().ResultFormat(c.typeOIDForTest(t, "audc_all")); f != 0 {
		t.Fatalf("audc_all is read in format %d, want text", f)
	}
	settings := []string{
		"",
		"SET DateStyle = 'SQL, DMY'",
		"SET DateStyle = 'German'",
		"SET DateStyle = 'Postgres, MDY'",
		"SET DateStyle = 'ISO, DMY'",
		"SET IntervalStyle = 'postgres_verbose'",
		"SET IntervalStyle = 'sql_standard'",
		"SET IntervalStyle = 'iso_8601'",
		"SET TimeZone = 'Asia/Kolkata'",
		"SET TimeZone = '+05:30'",
		"SET TimeZone = 'America/St_Johns'",
		"SET TimeZone = 'Europe/Amsterdam'",
		// Not below 1: the server then rounds floats in its text output,
		// which pgline reads for these types (documented in pgtype).
		"SET extra_float_digits = 3",
		"SET bytea_output = 'escape'",
		"SET lc_monetary = 'C'",
	}
	const n = 40
	if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS audc_rows"); err != nil {
		t.Fatal(err)
	}
	for _, s := range splitStatements(fmt.Sprintf(compositeAllRows, 0.42, n)) {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range settings {
		t.Run(set, func(t *testing.T) {
			if _, err := c.Exec(ctx, "RESET ALL"); err != nil {
				t.Fatal(err)
			}
			if set != "" {
				if _, err := c.Exec(ctx, set); err != nil {
					t.Fatal(err)
				}
			}
			wrong, errs := 0, 0
			for i := 1; i <= n; i++ {
				var bin compositeAll
				rv := reflect.ValueOf(&bin).Elem()
				dst := make([]any, rv.NumField())
				for k := range dst {
					dst[k] = rv.Field(k).Addr().Interface()
				}
				if err := c.QueryRow(ctx, `SELECT m, b, f8, f4, ts, tz, d, tm, ttz, iv, n, bo, j, u, ip, vb, ia, r, tx, pt, ta, tr, nr, iva, ba, tta FROM audc_rows WHERE i = $1`, i).Scan(dst...); err != nil {
					t.Fatalf("binary row %d: %v", i, err)
				}
				var txt compositeAll
				err := c.QueryRow(ctx, `SELECT ROW(m, b, f8, f4, ts, tz, d, tm, ttz, iv, n, bo, j, u, ip, vb, ia, r, tx, pt, ta, tr, nr, iva, ba, tta)::audc_all FROM audc_rows WHERE i = $1`, i).Scan(&txt)
				if err != nil {
					errs++
					if errs == 1 {
						t.Logf("row %d: error (fine): %v", i, err)
					}
					continue // a clear error is fine
				}
				tv := reflect.ValueOf(txt)
				for k := 0; k < rv.NumField(); k++ {
					a, b := rv.Field(k).Interface(), tv.Field(k).Interface()
					if !compositeSame(a, b) {
						wrong++
						if wrong <= 8 {
							t.Errorf("row %d field %s: text path %#v, binary %#v", i, rv.Type().Field(k).Name, b, a)
						}
					}
				}
			}
		})
	}
}

func compositeSame(a, b any) bool {
	switch x := a.(type) {
	case pgtype.Timestamp:
		y := b.(pgtype.Timestamp)
		return x.InfinityModifier == y.InfinityModifier && x.Time.Equal(y.Time)
	case []*pgtype.Timestamp:
		y := b.([]*pgtype.Timestamp)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if (x[i] == nil) != (y[i] == nil) || x[i] != nil && !compositeSame(*x[i], *y[i]) {
				return false
			}
		}
		return true
	case pgtype.Range[pgtype.Timestamp]:
		y := b.(pgtype.Range[pgtype.Timestamp])
		return x.LowerType == y.LowerType && x.UpperType == y.UpperType && x.Empty == y.Empty &&
			compositeSame(x.Lower, y.Lower) && compositeSame(x.Upper, y.Upper)
	case pgtype.Range[pgtype.Numeric]:
		y := b.(pgtype.Range[pgtype.Numeric])
		return x.LowerType == y.LowerType && x.UpperType == y.UpperType && x.Empty == y.Empty &&
			x.Lower.String() == y.Lower.String() && x.Upper.String() == y.Upper.String()
	}
	return reflect.DeepEqual(a, b)
}

func splitStatements(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ';' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func (c *Conn) typeOIDForTest(t *testing.T, name string) uint32 {
	var oid uint32
	if err := c.QueryRow(context.Background(), "SELECT $1::regtype::oid", name).Scan(&oid); err != nil {
		t.Fatal(err)
	}
	return oid
}

// TestCodecClientEncodingChanged runs a session whose
// client_encoding is not UTF8 (SET client_encoding, or client_encoding in
// the DSN, which pgline passes on). Go strings are UTF-8: pgline must
// either keep the session in UTF8 or fail, never hand the server UTF-8
// bytes as LATIN1 (é stored as "Ã©") nor hand Go LATIN1 bytes as a
// string (é read as "\xe9").
func TestCodecClientEncodingChanged(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"SET", "DSN"} {
		t.Run(how, func(t *testing.T) {
			dsn := srv.DSN()
			if how == "DSN" {
				dsn = srv.DSN("client_encoding=LATIN1")
			}
			c, err := Connect(ctx, dsn)
			if err != nil {
				t.Logf("connect: error (fine): %v", err)
				return
			}
			defer c.Close()
			if how == "SET" {
				if _, err := c.Exec(ctx, "SET client_encoding = 'LATIN1'"); err != nil {
					t.Logf("SET: error (fine): %v", err)
					return
				}
			}
			var s string
			if err := c.QueryRow(ctx, "SELECT chr(233)").Scan(&s); err == nil && s != "é" {
				t.Errorf("SELECT chr(233) (é) read as %q (valid UTF-8: %v)", s, utf8.ValidString(s))
			}
			var n int
			if err := c.QueryRow(ctx, "SELECT ascii($1::text)", "é").Scan(&n); err == nil && n != 233 {
				t.Errorf("parameter \"é\" reached the server as a string whose first character is %d, want 233", n)
			}
		})
	}
}
