package pgline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// Types for the struct row functions. Embedded types are exported where
// their fields must be settable through an embedded pointer.

type collPerson struct {
	ID        int32
	FullName  string `db:"name"`
	CreatedAt time.Time
	Note      *string
	Ignored   string `db:"-"`
	hidden    string
}

type CollAudit struct {
	CreatedBy string
	UpdatedBy string `db:"updated_by,omitempty"`
}

type CollMeta struct {
	Version int32
	*CollAudit
}

type collDoc struct {
	ID int32
	CollAudit
}

type collDocPtr struct {
	ID int32
	*CollMeta
}

type collBase struct { // unexported, embedded by value: its fields count
	ID   int32
	Kind string
}

type collShadow struct {
	collBase
	ID int32 `db:"id"` // shadows collBase.ID
}

type collLeft struct{ Name string }
type collRight struct{ Name string }

type collAmbiguous struct {
	collLeft
	collRight
	ID int32
}

type CollNode struct {
	*CollNode // a cycle: not walked
	X         int32
}

type collUnexportedPtr struct {
	*collBase // cannot be set: ignored
	X         int32
}

type collWide struct {
	ID    int32
	Name  string
	Extra string
}

func collQuery(t *testing.T, c *Conn, sql string, args ...any) *Rows {
	t.Helper()
	rows, err := c.Query(testCtx(t), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

const personSQL = `SELECT g AS id, 'p' || g AS name, '2024-01-01'::timestamptz + g * interval '1 day' AS created_at,
	CASE WHEN g % 2 = 0 THEN 'even' END AS note FROM generate_series(1, $1::int) g`

func checkPeople(t *testing.T, got []collPerson, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	day0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range got {
		g := i + 1
		if p.ID != int32(g) || p.FullName != fmt.Sprint("p", g) || !p.CreatedAt.Equal(day0.AddDate(0, 0, g)) ||
			(g%2 == 0) != (p.Note != nil) || p.Note != nil && *p.Note != "even" || p.Ignored != "" || p.hidden != "" {
			t.Fatalf("row %d: %+v", g, p)
		}
	}
}

func TestCollectRowsStructByName(t *testing.T) {
	c := connect(t, srv.DSN())
	got, err := CollectRows(collQuery(t, c, personSQL, 50), RowToStructByName[collPerson])
	if err != nil {
		t.Fatal(err)
	}
	checkPeople(t, got, 50)
	// Again: the cached plan, the pooled scratch values.
	got, err = CollectRows(collQuery(t, c, personSQL, 7), RowToStructByName[collPerson])
	if err != nil {
		t.Fatal(err)
	}
	checkPeople(t, got, 7)
	ptrs, err := CollectRows(collQuery(t, c, personSQL, 5), RowToAddrOfStructByName[collPerson])
	if err != nil || len(ptrs) != 5 || ptrs[4].ID != 5 || ptrs[3].Note == nil || ptrs[0] == ptrs[1] {
		t.Fatalf("RowToAddrOfStructByName: %v %v", ptrs, err)
	}
}

func TestCollectRowsEmptyAndErrors(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	got, err := CollectRows(collQuery(t, c, personSQL, 0), RowToStructByName[collPerson])
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no rows: %#v %v", got, err)
	}
	// An error of the statement after some rows.
	_, err = CollectRows(collQuery(t, c, "SELECT 10 / (3 - g) FROM generate_series(1, 5) g"), RowTo[int32])
	var pgErr *PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
	// An error of fn stops at once and closes the rows.
	boom := errors.New("boom")
	calls := 0
	got2, err := CollectRows(collQuery(t, c, "SELECT g FROM generate_series(1, 100) g"), func(row CollectableRow) (int, error) {
		calls++
		if calls == 3 {
			return 0, boom
		}
		return calls, nil
	})
	if !errors.Is(err, boom) || got2 != nil || calls != 3 {
		t.Fatalf("fn error: %v %v after %d calls", got2, err, calls)
	}
	// No panics on nil.
	if _, err := CollectRows[int](nil, RowTo[int]); err == nil {
		t.Error("nil rows: no error")
	}
	if _, err := CollectRows[int](collQuery(t, c, "SELECT 1"), nil); err == nil {
		t.Error("nil fn: no error")
	}
	if _, err := CollectOneRow[int](nil, RowTo[int]); err == nil {
		t.Error("CollectOneRow nil rows: no error")
	}
	if _, err := CollectExactlyOneRow[int](nil, RowTo[int]); err == nil {
		t.Error("CollectExactlyOneRow nil rows: no error")
	}
	if _, err := ForEachRow(nil, nil, func() error { return nil }); err == nil {
		t.Error("ForEachRow nil rows: no error")
	}
	if _, err := ForEachRow(collQuery(t, c, "SELECT 1"), nil, nil); err == nil {
		t.Error("ForEachRow nil fn: no error")
	}
	for name, fn := range map[string]func() error{
		"RowTo":                   func() error { _, err := RowTo[int](nil); return err },
		"RowToAddrOf":             func() error { _, err := RowToAddrOf[int](nil); return err },
		"RowToMap":                func() error { _, err := RowToMap(nil); return err },
		"RowToStructByName":       func() error { _, err := RowToStructByName[collPerson](nil); return err },
		"RowToAddrOfStructByName": func() error { _, err := RowToAddrOfStructByName[collPerson](nil); return err },
	} {
		if fn() == nil {
			t.Errorf("%s(nil): no error", name)
		}
	}
	// The connection is fine after all that.
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatal(one, err)
	}
}

func TestAppendRows(t *testing.T) {
	c := connect(t, srv.DSN())
	dst := make([]int64, 1, 10)
	dst[0] = -1
	got, err := AppendRows(dst, collQuery(t, c, "SELECT g::int8 FROM generate_series(1, 3) g"), RowTo[int64])
	if err != nil || fmt.Sprint(got) != "[-1 1 2 3]" || &got[0] != &dst[0] {
		t.Fatalf("%v %v", got, err)
	}
	type ids []int64
	got2, err := AppendRows(ids(nil), collQuery(t, c, "SELECT 7::int8"), RowTo[int64])
	if err != nil || fmt.Sprint(got2) != "[7]" {
		t.Fatalf("%v %v", got2, err)
	}
}

func TestCollectOneRow(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	// The first of many rows; the others are discarded.
	p, err := CollectOneRow(collQuery(t, c, personSQL, 1000), RowToStructByName[collPerson])
	if err != nil || p.ID != 1 || p.FullName != "p1" {
		t.Fatalf("%+v %v", p, err)
	}
	_, err = CollectOneRow(collQuery(t, c, personSQL, 0), RowToStructByName[collPerson])
	if !errors.Is(err, ErrNoRows) {
		t.Fatalf("no rows: %v", err)
	}
	// The statement's error, not ErrNoRows.
	_, err = CollectOneRow(collQuery(t, c, "SELECT 1 / (1 - g) FROM generate_series(0, 1) g"), RowTo[int32])
	if err == nil || errors.Is(err, ErrNoRows) || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("error: %v", err)
	}
	// fn's error.
	_, err = CollectOneRow(collQuery(t, c, "SELECT 'x'::text"), RowTo[int32])
	if err == nil {
		t.Fatal("text into int32: no error")
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatal(n, err)
	}
}

func TestCollectExactlyOneRow(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	v, err := CollectExactlyOneRow(collQuery(t, c, "SELECT 'one'::text"), RowTo[string])
	if err != nil || v != "one" {
		t.Fatalf("one row: %q %v", v, err)
	}
	_, err = CollectExactlyOneRow(collQuery(t, c, "SELECT 'x'::text WHERE false"), RowTo[string])
	if !errors.Is(err, ErrNoRows) {
		t.Fatalf("no rows: %v", err)
	}
	v, err = CollectExactlyOneRow(collQuery(t, c, "SELECT g::text FROM generate_series(1, 2) g"), RowTo[string])
	if !errors.Is(err, ErrTooManyRows) || v != "" || !strings.Contains(err.Error(), "too many rows") {
		t.Fatalf("two rows: %q %v", v, err)
	}
	_, err = CollectExactlyOneRow(collQuery(t, c, "SELECT g::text FROM generate_series(1, 10000) g"), RowTo[string])
	if !errors.Is(err, ErrTooManyRows) {
		t.Fatalf("many rows: %v", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT 3").Scan(&n); err != nil || n != 3 {
		t.Fatal(n, err)
	}
}

func TestForEachRow(t *testing.T) {
	c := connect(t, srv.DSN())
	var id int32
	var name string
	var sum int32
	var names []string
	tag, err := ForEachRow(collQuery(t, c, "SELECT g, 'n' || g FROM generate_series(1, 5) g"), []any{&id, &name}, func() error {
		sum += id
		names = append(names, name)
		return nil
	})
	if err != nil || sum != 15 || strings.Join(names, ",") != "n1,n2,n3,n4,n5" || tag.String() != "SELECT 5" {
		t.Fatalf("%v %d %v %v", tag, sum, names, err)
	}
	stop := errors.New("stop")
	calls := 0
	tag, err = ForEachRow(collQuery(t, c, "SELECT g, 'n' FROM generate_series(1, 5) g"), []any{&id, &name}, func() error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 || tag.String() != "" {
		t.Fatalf("fn error: %v %v %d", tag, err, calls)
	}
	_, err = ForEachRow(collQuery(t, c, "SELECT 1, 2"), []any{&id}, func() error { return nil })
	if err == nil {
		t.Fatal("2 columns into 1 destination: no error")
	}
}

func TestRowTo(t *testing.T) {
	c := connect(t, srv.DSN())
	ints, err := CollectRows(collQuery(t, c, "SELECT g FROM generate_series(1, 4) g"), RowTo[int32])
	if err != nil || fmt.Sprint(ints) != "[1 2 3 4]" {
		t.Fatalf("%v %v", ints, err)
	}
	// NULL into a pointer.
	ps, err := CollectRows(collQuery(t, c, "SELECT nullif(g, 2)::text FROM generate_series(1, 3) g"), RowTo[*string])
	if err != nil || len(ps) != 3 || *ps[0] != "1" || ps[1] != nil || *ps[2] != "3" {
		t.Fatalf("%v %v", ps, err)
	}
	// Values that own memory are not shared between rows.
	bs, err := CollectRows(collQuery(t, c, "SELECT decode(repeat(lpad(to_hex(g), 2, '0'), 4), 'hex') FROM generate_series(10, 12) g"), RowTo[[]byte])
	if err != nil || fmt.Sprintf("%x", bs) != "[0a0a0a0a 0b0b0b0b 0c0c0c0c]" {
		t.Fatalf("%x %v", bs, err)
	}
	addrs, err := CollectRows(collQuery(t, c, "SELECT g::int8 FROM generate_series(1, 3) g"), RowToAddrOf[int64])
	if err != nil || len(addrs) != 3 || *addrs[0] != 1 || *addrs[2] != 3 || addrs[0] == addrs[1] {
		t.Fatalf("%v %v", addrs, err)
	}
	if _, err := CollectRows(collQuery(t, c, "SELECT 1, 2"), RowTo[int32]); err == nil {
		t.Fatal("RowTo of 2 columns: no error")
	}
	if _, err := CollectRows(collQuery(t, c, "SELECT 1, 2"), RowToAddrOf[int32]); err == nil {
		t.Fatal("RowToAddrOf of 2 columns: no error")
	}
	if _, err := CollectRows(collQuery(t, c, "SELECT NULL::int4"), RowTo[int32]); err == nil {
		t.Fatal("NULL into int32: no error")
	}
}

func TestRowToMap(t *testing.T) {
	c := connect(t, srv.DSN())
	ms, err := CollectRows(collQuery(t, c, "SELECT g AS id, 'n' || g AS name, NULL::bool AS flag FROM generate_series(1, 2) g"), RowToMap)
	if err != nil || len(ms) != 2 {
		t.Fatalf("%v %v", ms, err)
	}
	if fmt.Sprint(ms[0]) != "map[flag:<nil> id:1 name:n1]" || fmt.Sprint(ms[1]) != "map[flag:<nil> id:2 name:n2]" {
		t.Fatalf("%v", ms)
	}
	if _, ok := ms[0]["id"].(int32); !ok {
		t.Fatalf("id is %T", ms[0]["id"])
	}
}

func TestRowToStructByNameMatching(t *testing.T) {
	c := connect(t, srv.DSN())

	// db tags with options, embedded value structs.
	docs, err := CollectRows(collQuery(t, c, "SELECT 1 AS id, 'a' AS createdby, 'b' AS updated_by"), RowToStructByName[collDoc])
	if err != nil || len(docs) != 1 || docs[0] != (collDoc{ID: 1, CollAudit: CollAudit{CreatedBy: "a", UpdatedBy: "b"}}) {
		t.Fatalf("embedded value: %+v %v", docs, err)
	}
	// snake_case and case for untagged names.
	docs, err = CollectRows(collQuery(t, c, `SELECT 1 AS "ID", 'a' AS created_by, 'b' AS updated_by`), RowToStructByName[collDoc])
	if err != nil || docs[0].CreatedBy != "a" || docs[0].ID != 1 {
		t.Fatalf("snake_case: %+v %v", docs, err)
	}
	// A db tag matches exactly.
	_, err = CollectRows(collQuery(t, c, `SELECT 1 AS id, 'a' AS created_by, 'b' AS "UPDATED_BY"`), RowToStructByName[collDoc])
	if err == nil || !strings.Contains(err.Error(), "UPDATED_BY") {
		t.Fatalf("tag in another case: %v", err)
	}

	// Embedded pointers, two deep: allocated for each row.
	ptrs, err := CollectRows(collQuery(t, c, "SELECT g AS id, g * 10 AS version, 'c' || g AS created_by, 'u' || g AS updated_by FROM generate_series(1, 3) g"),
		RowToStructByName[collDocPtr])
	if err != nil || len(ptrs) != 3 {
		t.Fatalf("embedded pointers: %v", err)
	}
	for i, d := range ptrs {
		g := int32(i + 1)
		if d.ID != g || d.CollMeta == nil || d.Version != g*10 || d.CollAudit == nil || d.CreatedBy != fmt.Sprint("c", g) || d.UpdatedBy != fmt.Sprint("u", g) {
			t.Fatalf("row %d: %+v", g, d)
		}
		if i > 0 && (d.CollMeta == ptrs[i-1].CollMeta || d.CollAudit == ptrs[i-1].CollAudit) {
			t.Fatalf("rows %d and %d share an embedded struct", i, i+1)
		}
	}
	// Lax: an embedded pointer no column goes into stays nil.
	lax, err := CollectRows(collQuery(t, c, "SELECT 5 AS id, 2 AS version"), RowToStructByNameLax[collDocPtr])
	if err != nil || lax[0].ID != 5 || lax[0].CollMeta == nil || lax[0].Version != 2 || lax[0].CollAudit != nil {
		t.Fatalf("lax embedded pointers: %+v %v", lax, err)
	}
	lax, err = CollectRows(collQuery(t, c, "SELECT 5 AS id"), RowToStructByNameLax[collDocPtr])
	if err != nil || lax[0].ID != 5 || lax[0].CollMeta != nil {
		t.Fatalf("lax embedded pointers: %+v %v", lax, err)
	}

	// A field shadows a deeper one of its name.
	sh, err := CollectRows(collQuery(t, c, "SELECT 7 AS id, 'k' AS kind"), RowToStructByName[collShadow])
	if err != nil || sh[0].ID != 7 || sh[0].collBase.ID != 0 || sh[0].Kind != "k" {
		t.Fatalf("shadow: %+v %v", sh, err)
	}
	// Cycles and unexported embedded pointers are not walked.
	nodes, err := CollectRows(collQuery(t, c, "SELECT 3 AS x"), RowToStructByName[CollNode])
	if err != nil || nodes[0].X != 3 || nodes[0].CollNode != nil {
		t.Fatalf("cycle: %+v %v", nodes, err)
	}
	up, err := CollectRows(collQuery(t, c, "SELECT 4 AS x"), RowToStructByName[collUnexportedPtr])
	if err != nil || up[0].X != 4 || up[0].collBase != nil {
		t.Fatalf("unexported embedded pointer: %+v %v", up, err)
	}
}

func TestRowToStructErrors(t *testing.T) {
	c := connect(t, srv.DSN())
	tests := []struct {
		name string
		sql  string
		fn   RowToFunc[any]
		want string // in the error
	}{
		{"missing column", "SELECT 1 AS id, 'n' AS name", anyOf(RowToStructByName[collWide]), "no column for field Extra"},
		{"missing columns", "SELECT 1 AS id", anyOf(RowToStructByName[collWide]), "no column for fields Extra, Name"},
		{"extra column", "SELECT 1 AS id, 'n' AS name, 'e' AS extra, 2 AS more", anyOf(RowToStructByName[collWide]), "column 3 (more) matches no field"},
		{"extra columns lax", "SELECT 1 AS id, 2 AS a, 3 AS b", anyOf(RowToStructByNameLax[collWide]), "columns 1 (a), 2 (b) match no field"},
		{"skipped field", "SELECT 1 AS id, 'n' AS name, now() AS created_at, NULL::text AS note, 'x' AS ignored", anyOf(RowToStructByName[collPerson]), "column 4 (ignored) matches no field"},
		{"unexported field", "SELECT 1 AS id, 'n' AS name, now() AS created_at, NULL::text AS note, 'x' AS hidden", anyOf(RowToStructByName[collPerson]), "column 4 (hidden) matches no field"},
		{"duplicate column", "SELECT 1 AS id, 'n' AS name, 'e' AS extra, 2 AS id", anyOf(RowToStructByName[collWide]), "columns 0 and 3 (id) both match field ID"},
		{"ambiguous", "SELECT 1 AS id, 'n' AS name", anyOf(RowToStructByName[collAmbiguous]), "matches fields collLeft.Name, collRight.Name at the same depth"},
		{"not a struct", "SELECT 1", anyOf(RowToStructByName[int]), "RowToStructByName[int]: int is not a struct"},
		{"pointer to struct", "SELECT 1 AS id", anyOf(RowToStructByNameLax[*collWide]), "*pgline.collWide is not a struct"},
		{"not a struct by pos", "SELECT 1", anyOf(RowToAddrOfStructByPos[string]), "string is not a struct"},
		{"pos count", "SELECT 1, 'n'", anyOf(RowToStructByPos[collWide]), "RowToStructByPos[pgline.collWide]: 3 fields for 2 columns"},
		{"scan error", "SELECT 'x'::text AS id, 'n' AS name, 'e' AS extra", anyOf(RowToStructByName[collWide]), "column 0 (id)"},
		{"scan error addr", "SELECT 1 AS id, NULL::text AS name, 'e' AS extra", anyOf(RowToAddrOfStructByNameLax[collWide]), "column 1 (name)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Twice: the second error comes from the cached plan.
			for range 2 {
				_, err := CollectRows(collQuery(t, c, tt.sql), tt.fn)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want one with %q", err, tt.want)
				}
			}
		})
	}
	var n int
	if err := c.QueryRow(testCtx(t), "SELECT 4").Scan(&n); err != nil || n != 4 {
		t.Fatal(n, err)
	}
}

// anyOf adapts a RowToFunc to return any.
func anyOf[T any](fn RowToFunc[T]) RowToFunc[any] {
	return func(row CollectableRow) (any, error) { return fn(row) }
}

func TestRowToStructByNameLax(t *testing.T) {
	c := connect(t, srv.DSN())
	got, err := CollectRows(collQuery(t, c, "SELECT 'n' AS name, 9 AS id"), RowToStructByNameLax[collWide])
	if err != nil || got[0] != (collWide{ID: 9, Name: "n"}) {
		t.Fatalf("%+v %v", got, err)
	}
	ptrs, err := CollectRows(collQuery(t, c, "SELECT 'n' AS name"), RowToAddrOfStructByNameLax[collWide])
	if err != nil || *ptrs[0] != (collWide{Name: "n"}) {
		t.Fatalf("%+v %v", ptrs, err)
	}
}

func TestRowToStructByPos(t *testing.T) {
	c := connect(t, srv.DSN())
	// Names do not matter; order does.
	got, err := CollectRows(collQuery(t, c, "SELECT g AS a, 'n' || g AS b, 'x' AS c FROM generate_series(1, 2) g"), RowToStructByPos[collWide])
	if err != nil || len(got) != 2 || got[1] != (collWide{ID: 2, Name: "n2", Extra: "x"}) {
		t.Fatalf("%+v %v", got, err)
	}
	// Embedded structs flattened in place; db:"-" and unexported fields
	// left out.
	docs, err := CollectRows(collQuery(t, c, "SELECT 1, 'a', 'b'"), RowToStructByPos[collDoc])
	if err != nil || docs[0] != (collDoc{ID: 1, CollAudit: CollAudit{"a", "b"}}) {
		t.Fatalf("%+v %v", docs, err)
	}
	people, err := CollectRows(collQuery(t, c, "SELECT 3, 'p', now(), 'n'"), RowToStructByPos[collPerson])
	if err != nil || people[0].ID != 3 || people[0].FullName != "p" || *people[0].Note != "n" {
		t.Fatalf("%+v %v", people, err)
	}
	ptrs, err := CollectRows(collQuery(t, c, "SELECT g, g + 1, 'c', 'u' FROM generate_series(1, 2) g"), RowToAddrOfStructByPos[collDocPtr])
	if err != nil || ptrs[1].ID != 2 || ptrs[1].Version != 3 || ptrs[1].UpdatedBy != "u" || ptrs[0].CollMeta == ptrs[1].CollMeta {
		t.Fatalf("%+v %v", ptrs, err)
	}
	// Shadowed fields count by position.
	sh, err := CollectRows(collQuery(t, c, "SELECT 1, 'k', 2"), RowToStructByPos[collShadow])
	if err != nil || sh[0].collBase != (collBase{1, "k"}) || sh[0].ID != 2 {
		t.Fatalf("%+v %v", sh, err)
	}
}

// A row larger than the read buffer is scanned column by column.
func TestCollectRowsBigRow(t *testing.T) {
	c := connect(t, srv.DSN())
	type big struct {
		ID   int32
		Body string
		Tail string
	}
	got, err := CollectRows(collQuery(t, c, "SELECT g AS id, repeat('x', 200000 * g) AS body, 't' || g AS tail FROM generate_series(1, 2) g"),
		RowToStructByName[big])
	if err != nil || len(got) != 2 || len(got[1].Body) != 400000 || got[1].Tail != "t2" || got[0].ID != 1 {
		t.Fatalf("%d rows, %v", len(got), err)
	}
}

// The columns of a statement change (ALTER TABLE) between two runs of the
// same SQL on the same connection: the new description gets its own plan.
func TestCollectColumnsChange(t *testing.T) {
	for _, mode := range []string{"prepare", "describe"} {
		t.Run(mode, func(t *testing.T) {
			c := connect(t, srv.DSN("statement_cache_mode="+mode))
			ctx := testCtx(t)
			if _, err := c.Exec(ctx, `CREATE TEMP TABLE coll_alter (id int4, name text);
				INSERT INTO coll_alter VALUES (1, 'one'), (2, 'two')`); err != nil {
				t.Fatal(err)
			}
			const q = "SELECT * FROM coll_alter ORDER BY 1"
			type row struct {
				ID   int32
				Name string
			}
			want := "[{1 one} {2 two}]"
			for run := range 3 {
				got, err := CollectRows(collQuery(t, c, q), RowToStructByName[row])
				if err != nil || fmt.Sprint(got) != want {
					t.Fatalf("run %d: %v %v, want %s", run, got, err, want)
				}
				switch run {
				case 0: // the columns swap places
					_, err = c.Exec(ctx, `ALTER TABLE coll_alter DROP COLUMN id; ALTER TABLE coll_alter ADD COLUMN id int4;
						UPDATE coll_alter SET id = CASE name WHEN 'one' THEN 10 ELSE 20 END`)
					want = "[{10 one} {20 two}]"
				case 1: // a column changes type
					_, err = c.Exec(ctx, `ALTER TABLE coll_alter ALTER COLUMN id TYPE int8`)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			// A column more: by name it needs a field, lax it does not.
			if _, err := c.Exec(ctx, "ALTER TABLE coll_alter ADD COLUMN extra text"); err != nil {
				t.Fatal(err)
			}
			if _, err := CollectRows(collQuery(t, c, q), RowToStructByName[row]); err == nil || !strings.Contains(err.Error(), "(extra) matches no field") {
				t.Fatalf("extra column: %v", err)
			}
			type wide struct {
				ID    int64
				Name  string
				Extra *string
				More  int
			}
			got, err := CollectRows(collQuery(t, c, q), RowToStructByNameLax[wide])
			if err != nil || len(got) != 2 || got[1].ID != 20 || got[1].Name != "two" || got[1].Extra != nil {
				t.Fatalf("lax: %+v %v", got, err)
			}
		})
	}
}

// Many goroutines share one pipelined Conn and the plan cache, with two
// statements and three struct types, and every description change.
func TestCollectConcurrentPlans(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	type a struct {
		ID   int32
		Name string
	}
	type b struct {
		Name string `db:"name"`
		Num  int32  `db:"id"`
	}
	type bp struct {
		Num  int32
		Name string
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				n := 1 + (g+i)%20
				sql := "SELECT g AS id, 'n' || g AS name FROM generate_series(1, $1::int) g"
				if i%2 == 1 {
					sql = "SELECT g AS id, 'n' || g AS name FROM generate_series(1, $1::int) g WHERE g > 0"
				}
				rows, err := c.Query(ctx, sql, n)
				if err != nil {
					errs <- err
					return
				}
				var got string
				switch i % 3 {
				case 0:
					vs, err := CollectRows(rows, RowToStructByName[a])
					if err != nil {
						errs <- err
						return
					}
					got = fmt.Sprint(vs[n-1].ID, vs[n-1].Name, len(vs))
				case 1:
					vs, err := CollectRows(rows, RowToAddrOfStructByName[b])
					if err != nil {
						errs <- err
						return
					}
					got = fmt.Sprint(vs[n-1].Num, vs[n-1].Name, len(vs))
				default:
					vs, err := CollectRows(rows, RowToStructByPos[bp])
					if err != nil {
						errs <- err
						return
					}
					got = fmt.Sprint(vs[n-1].Num, vs[n-1].Name, len(vs))
				}
				if want := fmt.Sprint(n, fmt.Sprint("n", n), n); got != want {
					errs <- fmt.Errorf("goroutine %d run %d: %s, want %s", g, i, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A struct row costs no allocation beyond its values: collecting 1000 rows
// of integers allocates about what the Scan loop does, plus the slice.
func TestCollectRowsAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("under the race detector sync.Pool drops values at random")
	}
	c := connect(t, srv.DSN())
	ctx := context.Background()
	const q = "SELECT g AS id, g * 2 AS twice, g % 2 = 0 AS even FROM generate_series(1, 1000) g"
	type row struct {
		ID    int32
		Twice int32
		Even  bool
	}
	manual := testing.AllocsPerRun(20, func() {
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var r row
		for rows.Next() {
			if err := rows.Scan(&r.ID, &r.Twice, &r.Even); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
	dst := make([]row, 0, 1000)
	for name, fn := range map[string]RowToFunc[row]{
		"RowToStructByName": RowToStructByName[row],
		"RowToStructByPos":  RowToStructByPos[row],
	} {
		collect := testing.AllocsPerRun(20, func() {
			rows, err := c.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := AppendRows(dst[:0], rows, fn)
			if err != nil || len(got) != 1000 || got[999].Twice != 2000 {
				t.Fatal(len(got), err)
			}
		})
		t.Logf("%s: %.0f allocations, Scan loop %.0f", name, collect, manual)
		if collect > manual+10 {
			t.Errorf("%s: %.0f allocations for 1000 rows, the Scan loop %.0f", name, collect, manual)
		}
	}
	ints := testing.AllocsPerRun(20, func() {
		rows, err := c.Query(ctx, "SELECT g FROM generate_series(1, 1000) g")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := AppendRows(make([]int32, 0, 1000), rows, RowTo[int32]); err != nil {
			t.Fatal(err)
		}
	})
	if ints > manual+10 {
		t.Errorf("RowTo: %.0f allocations for 1000 rows, the Scan loop %.0f", ints, manual)
	}
}

// The plan cache keeps at most maxPlans plans per type.
func TestCollectPlanCacheBound(t *testing.T) {
	type row struct{ X int32 }
	ct := collectTypeOf[row]()
	for i := range 3 * maxPlans {
		fds := []FieldDescription{{Name: "x", DataTypeOID: 23}}
		if _, err := ct.plan(planKey{desc: &fds[0], n: 1, mode: byName}, fds); err != nil {
			t.Fatal(i, err)
		}
		if m := ct.plans.Load(); len(*m) > maxPlans {
			t.Fatalf("%d plans", len(*m))
		}
	}
	if reflect.TypeFor[row]() != ct.t {
		t.Fatal(ct.t)
	}
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

type CollIface interface{ M() }

type collOdd struct {
	CollIface // an embedded interface is a field like another
	Fn        func()
	Ch        chan int
	M         map[string]string
	Arr       [2]int32
}

// Odd types give errors, never panics.
func TestRowToOddTypes(t *testing.T) {
	c := connect(t, srv.DSN())
	tests := []struct {
		name string
		sql  string
		fn   RowToFunc[any]
	}{
		{"RowTo func", "SELECT 1", anyOf(RowTo[func()])},
		{"RowTo chan", "SELECT 1", anyOf(RowToAddrOf[chan int])},
		{"struct of odd fields", "SELECT 1 AS colliface", anyOf(RowToStructByNameLax[collOdd])},
		{"func field", "SELECT 1 AS fn", anyOf(RowToStructByNameLax[collOdd])},
		{"by pos", "SELECT 1, 2, 3, 4, 5", anyOf(RowToStructByPos[collOdd])},
		{"interface T", "SELECT 1", anyOf(RowToStructByName[CollIface])},
		{"map T", "SELECT 1", anyOf(RowToStructByName[map[string]any])},
		{"empty struct", "SELECT 1", anyOf(RowToStructByName[struct{}])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := CollectRows(collQuery(t, c, tt.sql), tt.fn); err == nil {
				t.Fatal("no error")
			}
		})
	}
	vs, err := CollectRows(collQuery(t, c, "SELECT 1::int8"), RowTo[any])
	if err != nil || len(vs) != 1 || vs[0] != int64(1) {
		t.Fatalf("RowTo[any]: %v %v", vs, err)
	}
	es, err := CollectRows(collQuery(t, c, "SELECT FROM generate_series(1, 2)"), RowToStructByName[struct{}])
	if err != nil || len(es) != 2 {
		t.Fatalf("no columns into struct{}: %v %v", es, err)
	}
}
