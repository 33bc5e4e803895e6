package pgline

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtype"
)

func TestCopyEncoderGolden(t *testing.T) {
	enc := &copyEncoder{
		types: pgtype.NewMap(),
		oids:  []uint32{23, 25, 701, 16, 17, 1184},
		names: []string{"i", "t", "f", "b", "y", "ts"},
	}
	ts := time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC) // 1 s after the PostgreSQL epoch
	buf, err := enc.appendRow([]byte("xx"), []any{42, "hi", 1.5, true, nil, ts})
	if err != nil {
		t.Fatal(err)
	}
	want := "7878" + // what buf held before
		"0006" + // 6 fields
		"00000004" + "0000002a" + // int4 42
		"00000002" + "6869" + // text "hi"
		"00000008" + "3ff8000000000000" + // float8 1.5
		"00000001" + "01" + // bool true
		"ffffffff" + // NULL
		"00000008" + "00000000000f4240" // timestamptz: 1,000,000 µs
	if got := hex.EncodeToString(buf); got != want {
		t.Fatalf("tuple\n got %s\nwant %s", got, want)
	}
	if got := hex.EncodeToString(appendCopyTrailer(nil)); got != "ffff" {
		t.Fatalf("trailer %s", got)
	}
	if got := hex.EncodeToString([]byte(copyBinaryHeader)); got != "5047434f50590aff0d0a00"+"00000000"+"00000000" {
		t.Fatalf("header %s", got)
	}
}

func TestCopyEncoderErrors(t *testing.T) {
	m := pgtype.NewMap()
	enc := &copyEncoder{types: m, oids: []uint32{23, 25}, names: []string{"num", "txt"}}
	cases := []struct {
		name string
		row  []any
		want []string
	}{
		{"text that is no int4", []any{"forty-two", "x"}, []string{`"num"`, "string", "int4"}},
		{"unsupported", []any{struct{}{}, "x"}, []string{`"num"`, "struct {}"}},
		{"out of range", []any{int64(1) << 40, "x"}, []string{`"num"`}},
		{"too few", []any{1}, []string{"1 values for 2 columns"}},
		{"too many", []any{1, "a", "b"}, []string{"3 values for 2 columns"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := []byte{1, 2, 3}
			buf, err := enc.appendRow(before, tc.row)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if len(buf) != 3 {
				t.Errorf("buffer left with %d bytes, want the 3 it had", len(buf))
			}
		})
	}
	var ee *pgtype.EncodeError
	if _, err := enc.appendRow(nil, []any{struct{}{}, "x"}); !errors.As(err, &ee) {
		t.Fatalf("unsupported type: %v is not an *EncodeError", err)
	}
}

func TestIdentifier(t *testing.T) {
	cases := []struct {
		id   Identifier
		want string
		ok   bool
	}{
		{Identifier{"users"}, `"users"`, true},
		{Identifier{"public", "Users"}, `"public"."Users"`, true},
		{Identifier{`we"ird`, "a.b"}, `"we""ird"."a.b"`, true},
		{Identifier{"x; DROP TABLE y --"}, `"x; DROP TABLE y --"`, true},
		{nil, ``, false},
		{Identifier{"a", ""}, `"a".""`, false},
		{Identifier{"a\x00b"}, "\"a\x00b\"", false},
	}
	for _, tc := range cases {
		if got := tc.id.Sanitize(); got != tc.want {
			t.Errorf("%q.Sanitize() = %s, want %s", []string(tc.id), got, tc.want)
		}
		if err := tc.id.Validate(); (err == nil) != tc.ok {
			t.Errorf("%q.Validate() = %v", []string(tc.id), err)
		}
	}
}

func TestCopyFromSQL(t *testing.T) {
	d, c, err := copyFromSQL(Identifier{"s", "t"}, []string{"a", `b"c`})
	if err != nil {
		t.Fatal(err)
	}
	if d != `SELECT "a", "b""c" FROM "s"."t"` {
		t.Errorf("describe %s", d)
	}
	if c != `COPY "s"."t" ("a", "b""c") FROM STDIN (FORMAT binary)` {
		t.Errorf("copy %s", c)
	}
	for _, bad := range []struct {
		table Identifier
		cols  []string
	}{{nil, []string{"a"}}, {Identifier{"t"}, nil}, {Identifier{"t"}, []string{""}}, {Identifier{"t"}, []string{"a\x00"}}} {
		if _, _, err := copyFromSQL(bad.table, bad.cols); err == nil {
			t.Errorf("copyFromSQL(%q, %q): no error", bad.table, bad.cols)
		}
	}
}

func TestCopySources(t *testing.T) {
	s := CopyFromRows([][]any{{1}, {2}})
	if _, err := s.Values(); err == nil {
		t.Error("Values before Next: no error")
	}
	var got []any
	for s.Next() {
		v, err := s.Values()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v[0])
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 2 || s.Err() != nil || s.Next() {
		t.Fatalf("rows source gave %v, %v", got, s.Err())
	}

	boom := errors.New("boom")
	i := 0
	f := CopyFromFunc(func() ([]any, error) {
		i++
		switch {
		case i <= 2:
			return []any{i}, nil
		case i == 3:
			return nil, boom
		}
		t.Fatal("next called after it failed")
		return nil, nil
	})
	n := 0
	for f.Next() {
		n++
	}
	if n != 2 || !errors.Is(f.Err(), boom) || f.Next() {
		t.Fatalf("func source: %d rows, %v", n, f.Err())
	}
	if _, err := f.Values(); err == nil {
		t.Error("Values after the end: no error")
	}
	end := CopyFromFunc(func() ([]any, error) { return nil, nil })
	if end.Next() || end.Err() != nil {
		t.Fatal("(nil, nil) did not end the source")
	}
}

// FuzzQuoteIdent checks that a quoted identifier reads back as itself: the
// body between the outer quotes has only doubled quotes.
func FuzzQuoteIdent(f *testing.F) {
	for _, s := range []string{"a", `"`, `a""b`, "x; DROP", "ü", `"."`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := quoteIdent(s)
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			t.Fatalf("%q not quoted: %s", s, q)
		}
		body := q[1 : len(q)-1]
		var back strings.Builder
		for i := 0; i < len(body); i++ {
			if body[i] == '"' {
				if i+1 >= len(body) || body[i+1] != '"' {
					t.Fatalf("lone quote in %s", q)
				}
				i++
			}
			back.WriteByte(body[i])
		}
		if back.String() != s {
			t.Fatalf("%q quoted as %s reads back as %q", s, q, back.String())
		}
	})
}
