package pgline

// The values CopyFrom stores: the same as a query argument would give,
// never silently changed, and text COPY escapes that round-trip.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCopyValues_AsQueryArgs: CopyFrom documents that each value "is
// encoded for its column's type as a query argument would be". For Go
// strings given to non-text columns (sent as text, parsed by the server,
// as query arguments), and a few other values, the value CopyFrom stores
// must be the one an INSERT with the same argument stores.
func TestCopyValues_AsQueryArgs(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "SET TimeZone = 'America/New_York'; SET DateStyle = 'ISO, DMY'; SET IntervalStyle = 'postgres'"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		typ string
		v   any
	}{
		{"bool", "yes"}, {"bool", "1"}, {"bool", "off"}, {"bool", " t "},
		{"int4", " 42 "}, {"int4", "+42"}, {"int8", "-9223372036854775808"},
		{"float8", "1e3"}, {"float8", "Infinity"}, {"float8", "NaN"}, {"float8", "-0"}, {"float4", "0.1"},
		{"numeric", "1e3"}, {"numeric", " 1.50 "}, {"numeric", "NaN"}, {"numeric", "-0.000"}, {"numeric", "Infinity"},
		{"date", "2024-01-02"}, {"date", "02/01/2024"}, {"date", "infinity"}, {"date", "epoch"}, {"date", "Jan 2 2024"},
		{"timestamptz", "2024-01-02 03:04:05"}, {"timestamptz", "2024-01-02 03:04:05+05:30"}, {"timestamptz", "2024-07-02T03:04:05Z"},
		{"timestamptz", "2024-01-02"}, {"timestamptz", "infinity"}, {"timestamptz", "2024-01-02 03:04:05.1234567"},
		{"timestamp", "2024-01-02 03:04:05.123456789"}, {"timestamp", "2024-01-02 03:04:05+05"}, {"timestamp", "-infinity"},
		{"time", "03:04:05.1234567"}, {"time", "24:00:00"}, {"timetz", "03:04:05+02"},
		{"interval", "1 day"}, {"interval", "P1DT2H"}, {"interval", "1 mon 2 days 03:00"}, {"interval", "-1 day +2 hours"}, {"interval", "1.5 years"},
		{"uuid", "{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}"}, {"uuid", "a0eebc999c0b4ef8bb6d6bb9bd380a11"},
		{"inet", "192.168.0.1/24"}, {"cidr", "10.1"}, {"macaddr", "08-00-2b-01-02-03"},
		{"jsonb", ` {"b":1, "a":[1,2]} `}, {"json", ` {"b":1, "a":2} `},
		{"int4[]", "{1,2,3}"}, {"text[]", `{"a b",NULL,"\\"q"}`}, {"int4[]", "[0:1]={5,6}"},
		{"bytea", `\x0102`}, {"bytea", "abc"}, {"bytea", []byte(`\x0102`)},
		{"char(3)", "a"}, {"varchar(3)", "abc"}, {"name", strings.Repeat("n", 70)},
		{"money", "$1.50"}, {"oid", "42"}, {"point", "(1,2)"}, {"int4range", "[1,5)"},
		{"int4", int64(1) << 40}, {"int2", 70000}, {"float4", 1e300},
		{"timestamptz", time.Date(2024, 1, 2, 3, 4, 5, 999, time.UTC)},
		{"date", time.Date(2024, 1, 2, 23, 0, 0, 0, time.FixedZone("x", -5*3600))},
		{"timestamp", time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))},
		{"text", "a\x00b"},
		{"int4[]", "{{1,2},{3,4}}"}, {"int4[]", "{}"}, {"int4[]", "[1:2][3:4]={{1,2},{3,4}}"}, {"int4[]", "{NULL,1}"},
		{"text[]", `{"",""}`}, {"text[]", `{a,b}`}, {"text[]", `{"NULL",null}`}, {"text[]", `{ a , b }`},
		{"float8[]", "{1e3,NaN,-Infinity}"}, {"numeric[]", "{1.50,NaN}"}, {"bool[]", "{t,f,NULL}"},
		{"int4range", "empty"}, {"int4range", "(,5]"}, {"int4range", "[1,1)"}, {"numrange", "[1.5,2.50]"},
		{"tstzrange", "[2024-01-02 03:04:05+00,)"}, {"daterange", "[2024-01-01,2024-01-01]"},
		{"numeric", "1234567890.123456789012345678901234567890"}, {"numeric", "0.10"}, {"numeric", "1e-20"},
		{"numeric(5,2)", "1.005"}, {"numeric", "-Infinity"},
		{"float8", "4.9e-324"}, {"float4", "3.4028236e38"}, {"float8", "0.1"},
		{"jsonb", `"\u00e9"`}, {"jsonb", `{"a":1,"a":2}`}, {"json", `"\u0000"`},
		{"timestamptz", "2024-01-02 03:04:05-08"}, {"timestamptz", "0001-01-01 00:00:00+00 BC"},
		{"date", "0001-01-01 BC"}, {"date", "5874897-12-31"}, {"timestamp", "294276-12-31 23:59:59"},
		{"interval", "1 day 02:03:04.5"}, {"interval", "-00:00:01"}, {"interval", "3 mons -2 days"},
		{"uuid", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"},
		{"inet", "::ffff:1.2.3.4"}, {"inet", "1.2.3.4/32"}, {"cidr", "192.168.0.0/24"},
		{"bit(4)", "1010"}, {"varbit", "101"}, {"xml", "<a/>"}, {"tsvector", "a b"},
		{"int2", "32767"}, {"int8", "007"},
		{"float8", "1e400"}, {"float8", "1e-400"}, {"float4", "1e-50"}, {"numeric[]", "[2:2]={1.5}"},
	}
	for i, tc := range cases {
		name := fmt.Sprintf("%d %s %T(%v)", i, tc.typ, tc.v, tc.v)
		tbl := fmt.Sprintf("cl_val%d", i)
		if _, err := c.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE %s(k int4, v %s)", tbl, tc.typ)); err != nil {
			t.Fatal(err)
		}
		_, ierr := c.Exec(ctx, "INSERT INTO "+tbl+" VALUES (1, $1)", tc.v)
		_, cerr := c.CopyFrom(ctx, Identifier{tbl}, []string{"k", "v"}, CopyFromRows([][]any{{2, tc.v}}))
		var a, b *string
		rows, err := c.Query(ctx, "SELECT k, v::text FROM "+tbl+" ORDER BY k")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k int
			var s *string
			if err := rows.Scan(&k, &s); err != nil {
				t.Fatal(err)
			}
			if k == 1 {
				a = s
			} else {
				b = s
			}
		}
		rows.Close()
		str := func(p *string) string {
			if p == nil {
				return "<none>"
			}
			return *p
		}
		switch {
		case ierr == nil && cerr == nil && str(a) != str(b):
			t.Errorf("%s: INSERT stored %q, CopyFrom stored %q", name, str(a), str(b))
		case ierr != nil && cerr == nil:
			t.Errorf("%s: INSERT refused (%v), CopyFrom stored %q", name, ierr, str(b))
		case ierr != nil && cerr != nil && i >= 0:
			t.Logf("%s: both refused: INSERT %v", name, ierr)
		case ierr == nil && cerr != nil:
			t.Logf("%s: INSERT stored %q, CopyFrom refused: %v", name, str(a), cerr)
		}
	}
}

// TestCopyValues_TextNotSilentlyChanged: Go strings that CopyFrom parses
// itself (the text-only path of copyEncoder.appendRow: DecodeValue then
// binary Encode) must be stored as the server would store them, or
// refused: array lower bounds kept (or a clear error), out-of-range
// floats refused as the server refuses them, never silently turned into
// Infinity or 0.
func TestCopyValues_TextNotSilentlyChanged(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	cases := []struct{ typ, in, want string }{
		{"int4[]", "[0:1]={5,6}", "[0:1]={5,6}"},
		{"int4[]", "[1:2][3:4]={{1,2},{3,4}}", "[1:2][3:4]={{1,2},{3,4}}"},
		{"float8", "1e400", "<error>"},
		{"float8", "1e-400", "<error>"},
		{"float4", "3.4028236e38", "<error>"},
		{"float4", "1e-50", "<error>"},
	}
	for i, tc := range cases {
		tbl := fmt.Sprintf("cl_silent%d", i)
		if _, err := c.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE %s(v %s)", tbl, tc.typ)); err != nil {
			t.Fatal(err)
		}
		_, err := c.CopyFrom(ctx, Identifier{tbl}, []string{"v"}, CopyFromRows([][]any{{tc.in}}))
		got := "<error>"
		if err == nil {
			if err := c.QueryRow(ctx, "SELECT v::text FROM "+tbl).Scan(&got); err != nil {
				t.Fatal(err)
			}
		}
		if got != tc.want && !(got == "<error>" && strings.HasPrefix(tc.in, "[")) { // bounds: kept, or a clear error
			t.Errorf("CopyFrom of %q into %s stored %q; the server's input (an INSERT of the same argument) gives %s", tc.in, tc.typ, got, tc.want)
		}
	}
}

// TestCopyValues_TextEscapesRoundTrip: text COPY of backslashes, \N, tabs
// and unicode through CopyFromReader, then back through CopyTo.
func TestCopyValues_TextEscapesRoundTrip(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyKeyedTable(t, c, "cl_text")
	data := "1\t\\\\N\n2\t\\N\n3\ta\\tb\\nc\n4\tдобрый день ✓\n5\t\\\\\\\\\n"
	tag, err := c.CopyFromReader(ctx, "COPY cl_text FROM STDIN", strings.NewReader(data))
	if err != nil || tag.RowsAffected() != 5 {
		t.Fatalf("%v %v", tag, err)
	}
	rows, err := c.Query(ctx, "SELECT a, b FROM cl_text ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]*string{}
	s := func(v string) *string { return &v }
	want[1], want[2], want[3], want[4], want[5] = s(`\N`), nil, s("a\tb\nc"), s("добрый день ✓"), s(`\\`)
	for rows.Next() {
		var a int
		var b *string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		w := want[a]
		if (w == nil) != (b == nil) || (w != nil && *w != *b) {
			t.Errorf("row %d: got %v want %v", a, b, w)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, err := c.CopyTo(ctx, &out, "COPY cl_text TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if out.String() != data {
		t.Errorf("CopyTo: %q want %q", out.String(), data)
	}
}
