package pgline

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sameFloatText reports whether a and b are the same text but for the
// spelling of their numbers, which must denote the same float (float4
// when bits is 32).
func sameFloatText(a, b string, bits int) bool {
	na, nb := acodecNum.FindAllString(a, -1), acodecNum.FindAllString(b, -1)
	if acodecNum.ReplaceAllString(a, "#") != acodecNum.ReplaceAllString(b, "#") || len(na) != len(nb) {
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

var acodecNum = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?`)

// TestAuditCodecTextFormDifferential scans random server-generated values
// (read in binary) into *string, which pgline fills with its own
// rendering of the type's text form, and compares that with the server's
// own value::text (TimeZone UTC, default styles).
func TestAuditCodecTextFormDifferential(t *testing.T) {
	ctx := context.Background()
	c := acodecConn(t)
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
