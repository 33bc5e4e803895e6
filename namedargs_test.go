package pgline

import (
	"database/sql"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/sqllex"
)

// TestNamedArgsRewrite: the pure rewrite, one case per skip rule.
func TestNamedArgsRewrite(t *testing.T) {
	args := NamedArgs{"a": 1, "b": "two", "c": 3.0, "d": true, "A": "upper", "_b": 5, "a_1": 6, "e": 7}
	for _, tc := range []struct {
		name, sql, want string
		args            []any
	}{
		{"none", "SELECT 1", "SELECT 1", nil},
		{"one", "SELECT @a", "SELECT $1", []any{1}},
		{"at start and end", "@a", "$1", []any{1}},
		{"repeated name", "SELECT @a, @b, @a, @b", "SELECT $1, $2, $1, $2", []any{1, "two"}},
		{"order of first use", "SELECT @b, @a", "SELECT $1, $2", []any{"two", 1}},
		{"missing is NULL", "SELECT @zz, @a", "SELECT $1, $2", []any{nil, 1}},
		{"case-sensitive", "SELECT @a, @A", "SELECT $1, $2", []any{1, "upper"}},
		{"name chars", "SELECT @_b, @a_1, @a1x", "SELECT $1, $2, $3", []any{5, 6, nil}},
		{"cast", "SELECT @a::int + 1", "SELECT $1::int + 1", []any{1}},
		{"no spaces", "SELECT (@a,@b)", "SELECT ($1,$2)", []any{1, "two"}},
		{"after operators", "SELECT @a+@b, id=@a, -@c, (@a)*@b", "SELECT $1+$2, id=$1, -$3, ($1)*$2", []any{1, "two", 3.0}},
		{"after a string", "SELECT '@x'@a", "SELECT '@x'$1", []any{1}},

		{"single quotes", "SELECT '@a', @b", "SELECT '@a', $1", []any{"two"}},
		{"doubled quote", "SELECT 'it''s @a', @b", "SELECT 'it''s @a', $1", []any{"two"}},
		{"backslash in standard string", `SELECT '\', @a, '\'`, `SELECT '\', $1, '\'`, []any{1}},
		{"E string escape", `SELECT E'\'@a', @b`, `SELECT E'\'@a', $1`, []any{"two"}},
		{"e string escaped backslash", `SELECT e'\\', @a`, `SELECT e'\\', $1`, []any{1}},
		{"E string continued", "SELECT E'x'\n'\\'@a', @b", "SELECT E'x'\n'\\'@a', $1", []any{"two"}},
		{"B X N U& strings", "SELECT B'@a', X'@a', N'@a', U&'@a', @b", "SELECT B'@a', X'@a', N'@a', U&'@a', $1", []any{"two"}},
		{"dollar quote", "SELECT $$ @a $$, @b", "SELECT $$ @a $$, $1", []any{"two"}},
		{"tagged dollar quote", "SELECT $t$ @a $$ @b $t$, @c", "SELECT $t$ @a $$ @b $t$, $1", []any{3.0}},
		{"identifier with dollars", "SELECT foo$bar$ @a", "SELECT foo$bar$ $1", []any{1}},
		{"quoted identifier", `SELECT "col@a", "a""@b", @c`, `SELECT "col@a", "a""@b", $1`, []any{3.0}},
		{"U& identifier", `SELECT U&"@a", @b`, `SELECT U&"@a", $1`, []any{"two"}},
		{"line comment", "SELECT 1 -- @a\n, @b", "SELECT 1 -- @a\n, $1", []any{"two"}},
		{"line comment to the end", "SELECT @b -- @a", "SELECT $1 -- @a", []any{"two"}},
		{"block comment", "SELECT /* @a */ @b", "SELECT /* @a */ $1", []any{"two"}},
		{"nested block comment", "SELECT /* @a /* @b */ @c */ @d", "SELECT /* @a /* @b */ @c */ $1", []any{true}},
		{"e after the name is not a string", "SELECT @e'x'", "SELECT $1'x'", []any{7}},

		{"operators", "SELECT a @> b, a <@ b, t @@ q, @-@ p, @ -1, x @? '$'", "SELECT a @> b, a <@ b, t @@ q, @-@ p, @ -1, x @? '$'", nil},
		{"operators against names", "SELECT t @@to_tsquery('x'), x <@arr, @-@path, t @@@q", "SELECT t @@to_tsquery('x'), x <@arr, @-@path, t @@@q", nil},
		{"@ glued to a word or number", "SELECT a@b, 1@a, e@a'x', $1", "", nil},
		{"non-name after @", "SELECT @1, @$a, @", "SELECT @1, @$a, @", nil},
		// As in PostgreSQL's identifiers, non-ASCII letters are part of a
		// name: it is never cut short inside a word ("@aé" was "$1é").
		{"non-ASCII names", "SELECT @é, @aé", "SELECT $1, $2", []any{nil, nil}},
		{"operators then placeholder", "SELECT '{1}'::int[] @> @a, @a <@ '{1}'", "SELECT '{1}'::int[] @> $1, $1 <@ '{1}'", []any{1}},
		{"placeholder then @", "SELECT @a@b", "SELECT $1@b", []any{1}},
		{"name ends at $", "SELECT @a$b", "SELECT $1$b", []any{1}},
		{"after a lone $", "SELECT $@a", "SELECT $@a", nil},
		{"after a dollar quote", "SELECT $$x$$@a", "SELECT $$x$$$1", []any{1}},

		{"unterminated string", "SELECT @a, '@b", "SELECT $1, '@b", []any{1}},
		{"unterminated comment", "SELECT @a /* @b", "SELECT $1 /* @b", []any{1}},
		{"unterminated dollar quote", "SELECT @a, $x$ @b", "SELECT $1, $x$ @b", []any{1}},
		{"unterminated identifier", `SELECT @a, "@b`, `SELECT $1, "@b`, []any{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gotArgs, err := rewriteNamedArgs(tc.sql, args)
			if tc.want == "" { // a positional parameter: an error
				if err == nil || !strings.Contains(err.Error(), "positional parameter $1") {
					t.Fatalf("rewrite(%q) = %q, %v, %v; want the error of a positional parameter", tc.sql, got, gotArgs, err)
				}
				// Without it, nothing of the rest is a placeholder.
				tc.sql, tc.want = strings.TrimSuffix(tc.sql, ", $1"), strings.TrimSuffix(tc.sql, ", $1")
				got, gotArgs, err = rewriteNamedArgs(tc.sql, args)
			}
			if err != nil || got != tc.want || !reflect.DeepEqual(gotArgs, tc.args) {
				t.Fatalf("rewrite(%q) = %q, %#v, %v; want %q, %#v", tc.sql, got, gotArgs, err, tc.want, tc.args)
			}
		})
	}
}

// TestStrictNamedArgs: a name missing from the map, a key the SQL does not
// use and a positional parameter are errors, found before anything is sent.
func TestStrictNamedArgs(t *testing.T) {
	for _, tc := range []struct {
		sql     string
		args    StrictNamedArgs
		wantErr string
	}{
		{"SELECT @a, @b", StrictNamedArgs{"a": 1, "b": 2}, ""},
		{"SELECT @a, @a", StrictNamedArgs{"a": 1}, ""},
		{"SELECT 1", StrictNamedArgs{}, ""},
		{"SELECT @a, @b", StrictNamedArgs{"a": 1}, "StrictNamedArgs has no value for @b"},
		{"SELECT @a", StrictNamedArgs{"a": 1, "z": 2, "y": 3}, `StrictNamedArgs key "y" is not used by the SQL`},
		{"SELECT '@a'", StrictNamedArgs{"a": 1}, `StrictNamedArgs key "a" is not used by the SQL`},
		{"SELECT @a, $2", StrictNamedArgs{"a": 1}, "positional parameter $2"},
	} {
		_, _, err := rewriteNamedArgs(tc.sql, tc.args)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("rewrite(%q, %v): %v, want %q", tc.sql, tc.args, err, tc.wantErr)
		}
	}

	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	var v int
	err := c.QueryRow(ctx, "SELECT @a::int + @b::int", StrictNamedArgs{"a": 1}).Scan(&v)
	if err == nil || !strings.Contains(err.Error(), "@b") || !session.SafeToRetry(err) {
		t.Fatalf("missing name: %v (SafeToRetry %v)", err, session.SafeToRetry(err))
	}
	if _, err := c.Exec(ctx, "SELECT @a::int", StrictNamedArgs{"a": 1, "b": 2}); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("unused key: %v", err)
	}
	if _, err := c.Query(ctx, "SELECT @a::int, $1::int", NamedArgs{"a": 1}); err == nil {
		t.Fatal("positional and named parameters together: no error")
	}
	if err := c.QueryRow(ctx, "SELECT @a::int + @b::int", StrictNamedArgs{"a": 1, "b": 2}).Scan(&v); err != nil || v != 3 {
		t.Fatalf("after the errors: %d, %v", v, err)
	}
}

// TestNamedArgsSkipRulesOnServer runs the skip rules on the server: each
// value comes back as written.
func TestNamedArgsSkipRulesOnServer(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	const q = `SELECT '@notaname', @a::int, "col@x", $$ @b $$, $t$ @a $t$, '{1}'::int[] @> '{1}', @a::int + 1,
		E'\'@a', 'it''s @a' /* @a /* @b */ */, -- @a
		to_tsvector('simple', 'a b') @@to_tsquery('simple', 'a'), ARRAY[1] <@ARRAY[1,2], @-@lseg '((0,0),(3,4))',
		@missing::text IS NULL, @b::text
		FROM (SELECT 5 AS "col@x") t`
	var (
		s1, s2, s3, s4, s5, b string
		a, col, a1            int
		contains, ts, sub     bool
		length                float64
		missing               bool
	)
	err := c.QueryRow(ctx, q, NamedArgs{"a": 41, "b": "bee"}).Scan(&s1, &a, &col, &s2, &s3, &contains, &a1, &s4, &s5, &ts, &sub, &length, &missing, &b)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{s1, a, col, s2, s3, contains, a1, s4, s5, ts, sub, length, missing, b}
	want := []any{"@notaname", 41, 5, " @b ", " @a ", true, 42, "'@a", "it's @a", true, true, 5.0, true, "bee"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

// TestNamedArgsConnTxPool: named arguments through every entry point:
// Query, QueryRow and Exec of a Conn, a Tx and a Pool, and Batch.Queue.
func TestNamedArgsConnTxPool(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE named_t (id int PRIMARY KEY, name text)"); err != nil {
		t.Fatal(err)
	}
	tag, err := c.Exec(ctx, "INSERT INTO named_t VALUES (@id, @name), (@id + 1, @name || '2')", NamedArgs{"id": 1, "name": "one"})
	if err != nil || !tag.Insert() || tag.RowsAffected() != 2 {
		t.Fatalf("Conn.Exec: %q, %v", tag, err)
	}
	rows, err := c.Query(ctx, "SELECT id, name FROM named_t WHERE id >= @min ORDER BY id", StrictNamedArgs{"min": 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id int
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, strconv.Itoa(id)+"="+name)
	}
	if err := rows.Err(); err != nil || !slices.Equal(got, []string{"1=one", "2=one2"}) {
		t.Fatalf("Conn.Query: %v, %v", got, err)
	}
	var name string
	if err := c.QueryRow(ctx, "SELECT name FROM named_t WHERE id = @id", NamedArgs{"id": 2}).Scan(&name); err != nil || name != "one2" {
		t.Fatalf("Conn.QueryRow: %q, %v", name, err)
	}
	var null *string
	if err := c.QueryRow(ctx, "SELECT @nothing::text", NamedArgs{}).Scan(&null); err != nil || null != nil {
		t.Fatalf("a missing name is NULL: %v, %v", null, err)
	}

	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tag, err := tx.Exec(ctx, "UPDATE named_t SET name = @name WHERE id = @id", StrictNamedArgs{"id": 1, "name": "uno"}); err != nil || !tag.Update() || tag.RowsAffected() != 1 {
		t.Fatalf("Tx.Exec: %q, %v", tag, err)
	}
	if err := tx.QueryRow(ctx, "SELECT name FROM named_t WHERE id = @id", NamedArgs{"id": 1}).Scan(&name); err != nil || name != "uno" {
		t.Fatalf("Tx.QueryRow: %q, %v", name, err)
	}
	rows, err = tx.Query(ctx, "SELECT count(*) FROM named_t WHERE name LIKE @p", NamedArgs{"p": "on%"})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil || n != 1 {
		t.Fatalf("Tx.Query: %d, %v", n, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	b := &Batch{}
	b.Queue("SELECT @a::int * 2", NamedArgs{"a": 21})
	b.Queue("SELECT name FROM named_t WHERE id = @id", StrictNamedArgs{"id": 2})
	br := c.SendBatch(ctx, b)
	if err := br.QueryRow().Scan(&n); err != nil || n != 42 {
		t.Fatalf("batch statement 0: %d, %v", n, err)
	}
	if err := br.QueryRow().Scan(&name); err != nil || name != "one2" {
		t.Fatalf("batch statement 1: %q, %v", name, err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	b = &Batch{}
	b.Queue("SELECT 1")
	b.Queue("SELECT @a::int", StrictNamedArgs{})
	br = c.SendBatch(ctx, b)
	if _, err := br.Exec(); err == nil || !strings.Contains(err.Error(), "batch statement 1") || !strings.Contains(err.Error(), "@a") {
		t.Fatalf("batch with bad StrictNamedArgs: %v", err)
	}
	br.Close()

	p := newTestPool(t)
	if tag, err := p.Exec(ctx, "SELECT g FROM generate_series(1, @n::int) g", NamedArgs{"n": 3}); err != nil || !tag.Select() || tag.RowsAffected() != 3 {
		t.Fatalf("Pool.Exec: %q, %v", tag, err)
	}
	if err := p.QueryRow(ctx, "SELECT @x::text || @y::text || @x::text", StrictNamedArgs{"x": "a", "y": "b"}).Scan(&name); err != nil || name != "aba" {
		t.Fatalf("Pool.QueryRow: %q, %v", name, err)
	}
	rows, err = p.Query(ctx, "SELECT g FROM generate_series(@lo::int, @hi::int) g", NamedArgs{"lo": 2, "hi": 4})
	if err != nil {
		t.Fatal(err)
	}
	var sum int
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	if err := rows.Err(); err != nil || sum != 9 {
		t.Fatalf("Pool.Query: %d, %v", sum, err)
	}
	if _, err := p.Exec(ctx, "SELECT @a::int", StrictNamedArgs{}); err == nil {
		t.Fatal("Pool.Exec with a missing strict name: no error")
	}
}

// TestNamedArgsTraced: a Tracer sees the statement as sent.
func TestNamedArgsTraced(t *testing.T) {
	tr := &recordingTracer{}
	c := connectConfig(t, srv.DSN(), func(cfg *Config) { cfg.Tracer = tr })
	ctx := testCtx(t)
	var v int
	if err := c.QueryRow(ctx, "SELECT @a::int", NamedArgs{"a": 7}).Scan(&v); err != nil || v != 7 {
		t.Fatalf("%d, %v", v, err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ev := tr.ended[len(tr.ended)-1]
	if ev.Kind != TraceStatement || ev.SQL != "SELECT $1::int" || !reflect.DeepEqual(ev.Args, []any{7}) {
		t.Fatalf("traced %+v", ev)
	}
}

// TestErrNoRowsIsSQLErrNoRows: Row.Scan's ErrNoRows is sql.ErrNoRows too,
// from a Conn, a Tx and a Pool, and keeps its message.
func TestErrNoRowsIsSQLErrNoRows(t *testing.T) {
	if !errors.Is(ErrNoRows, sql.ErrNoRows) || errors.Is(sql.ErrNoRows, ErrNoRows) || ErrNoRows.Error() != "pgline: no rows in result set" {
		t.Fatalf("ErrNoRows %q", ErrNoRows)
	}
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	var v int
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, sql.ErrNoRows) || !errors.Is(err, ErrNoRows) || err != ErrNoRows {
			t.Errorf("%s: %v", what, err)
		}
	}
	check("Conn", c.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&v))
	check("Conn, named", c.QueryRow(ctx, "SELECT 1 WHERE @f::bool", NamedArgs{"f": false}).Scan(&v))
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check("Tx", tx.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&v))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	check("Pool", newTestPool(t).QueryRow(ctx, "SELECT 1 WHERE $1::bool", false).Scan(&v))
}

// TestCommandTag: the methods on tags as the server sends them, and on the
// tags of real statements.
func TestCommandTag(t *testing.T) {
	for _, tc := range []struct {
		tag                             string
		insert, update, delete, select_ bool
		rows                            int64
	}{
		{"INSERT 0 5", true, false, false, false, 5},
		{"SELECT 3", false, false, false, true, 3},
		{"UPDATE 2", false, true, false, false, 2},
		{"DELETE 1", false, false, true, false, 1},
		{"MERGE 4", false, false, false, false, 4},
		{"COPY 10", false, false, false, false, 10},
		{"CREATE TABLE", false, false, false, false, 0},
		{"SELECT", false, false, false, true, 0},
		{"INSERTED 1", false, false, false, false, 1},
		{"", false, false, false, false, 0},
	} {
		ct := CommandTag{s: tc.tag}
		if ct.Insert() != tc.insert || ct.Update() != tc.update || ct.Delete() != tc.delete || ct.Select() != tc.select_ ||
			ct.RowsAffected() != tc.rows || ct.String() != tc.tag {
			t.Errorf("%q: Insert %v Update %v Delete %v Select %v RowsAffected %d String %q", tc.tag,
				ct.Insert(), ct.Update(), ct.Delete(), ct.Select(), ct.RowsAffected(), ct.String())
		}
	}

	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	exec := func(sql string, args ...any) CommandTag {
		t.Helper()
		tag, err := c.Exec(ctx, sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return tag
	}
	if tag := exec("CREATE TEMP TABLE tag_t (id int PRIMARY KEY, v text)"); tag.String() != "CREATE TABLE" || tag.RowsAffected() != 0 || tag.Insert() || tag.Select() {
		t.Errorf("CREATE TABLE: %q", tag)
	}
	if tag := exec("INSERT INTO tag_t SELECT g, 'v' FROM generate_series(1, 5) g"); !tag.Insert() || tag.RowsAffected() != 5 || tag.String() != "INSERT 0 5" {
		t.Errorf("INSERT: %q", tag)
	}
	if tag := exec("SELECT * FROM tag_t WHERE id <= @n", NamedArgs{"n": 3}); !tag.Select() || tag.RowsAffected() != 3 {
		t.Errorf("SELECT: %q", tag)
	}
	if tag := exec("UPDATE tag_t SET v = 'u' WHERE id <= 2"); !tag.Update() || tag.RowsAffected() != 2 || tag.Insert() {
		t.Errorf("UPDATE: %q", tag)
	}
	if tag := exec("DELETE FROM tag_t WHERE id = $1", 5); !tag.Delete() || tag.RowsAffected() != 1 {
		t.Errorf("DELETE: %q", tag)
	}
	rows, err := c.Query(ctx, "SELECT id FROM tag_t")
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if tag := rows.CommandTag(); !tag.Select() || tag.RowsAffected() != 4 {
		t.Errorf("Rows.CommandTag: %q", tag)
	}
	tag, err := c.CopyTo(ctx, io.Discard, "COPY (SELECT generate_series(1, 10)) TO STDOUT")
	if err != nil || tag.String() != "COPY 10" || tag.RowsAffected() != 10 {
		t.Errorf("COPY: %q, %v", tag, err)
	}
	t.Run("MERGE", func(t *testing.T) {
		srv.NeedVersion(t, 15, "MERGE")
		merge := "MERGE INTO tag_t t USING generate_series(2, 5) s(id) ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'm' WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'n')"
		tag, err := c.Exec(ctx, merge)
		if err != nil || tag.String() != "MERGE 4" || tag.RowsAffected() != 4 || tag.Insert() || tag.Update() {
			t.Errorf("MERGE: %q, %v", tag, err)
		}
	})
}

// FuzzNamedArgsRewrite: rewriting never panics, keeps every byte but the
// placeholders, numbers names in order of first use, and never finds a
// placeholder inside a string, a dollar quote or a comment.
func FuzzNamedArgsRewrite(f *testing.F) {
	for _, s := range []string{
		"", "SELECT @a", "SELECT @a, @b, @a", "SELECT '@a', @b", `SELECT E'\'@a', @b`, "SELECT $$ @a $$, @b",
		"SELECT $t$ @a $t$ @b", `SELECT "c@a" @b`, "SELECT 1 -- @a\n@b", "SELECT /* /* @a */ */ @b",
		"SELECT a @> b, a <@b, t @@q, @-@p, @", "SELECT a@b, 1@b, $@b, @a@b, @e'x'", "SELECT @a, $1",
		"SELECT @a::int + 1", "SELECT E'x'\n'\\'@a'", "@", "@_", "@é", "'", `"`, "$", "$$", "/*", "--", "\xff@a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, args, err := rewriteNamedArgs(in, NamedArgs{"a": 1, "b": 2})
		positional := false
		var names []string // each placeholder's name, in order
		for p := range sqllex.Params(in) {
			if p.Name == "" {
				positional = true
				continue
			}
			if in[p.Start] != '@' || in[p.Start+1:p.End] != p.Name || !isName(p.Name) {
				t.Fatalf("Params(%q) yields %+v", in, p)
			}
			names = append(names, p.Name)
		}
		if positional {
			if err == nil {
				t.Fatalf("rewrite(%q) = %q without the error of a positional parameter", in, out)
			}
			return
		}
		if err != nil {
			t.Fatalf("rewrite(%q): %v", in, err)
		}

		// out is in with each placeholder replaced by $n, n the rank of
		// its name's first use: undo that, byte by byte.
		var order []string
		rest, last := out, 0
		for p := range sqllex.Params(in) {
			seg := in[last:p.Start]
			if !strings.HasPrefix(rest, seg) {
				t.Fatalf("rewrite(%q) = %q: the text before %q changed", in, out, in[p.Start:p.End])
			}
			rest = rest[len(seg):]
			n := slices.Index(order, p.Name)
			if n < 0 {
				order = append(order, p.Name)
				n = len(order) - 1
			}
			num := "$" + strconv.Itoa(n+1)
			if !strings.HasPrefix(rest, num) {
				t.Fatalf("rewrite(%q) = %q: %q is not %s", in, out, in[p.Start:p.End], num)
			}
			rest, last = rest[len(num):], p.End
		}
		if rest != in[last:] {
			t.Fatalf("rewrite(%q) = %q: the end changed", in, out)
		}
		if len(args) != len(order) {
			t.Fatalf("rewrite(%q): %d args for %d names", in, len(args), len(order))
		}
		for i, name := range order {
			if want := (NamedArgs{"a": 1, "b": 2})[name]; args[i] != want {
				t.Fatalf("rewrite(%q): arg %d (@%s) = %v, want %v", in, i+1, name, args[i], want)
			}
		}
		// The same with strict arguments made of the names used.
		strict := StrictNamedArgs{}
		for _, name := range names {
			strict[name] = NamedArgs{"a": 1, "b": 2}[name]
		}
		if sout, sargs, err := rewriteNamedArgs(in, strict); err != nil || sout != out || !slices.Equal(sargs, args) {
			t.Fatalf("rewrite(%q, %v) = %q, %v, %v; want %q, %v", in, strict, sout, sargs, err, out, args)
		}
		// Its placeholders are read again as the parameters put in.
		n := 0
		for p := range sqllex.Params(out) {
			if p.Name != "" {
				t.Fatalf("rewrite(%q) = %q, which holds @%s", in, out, p.Name)
			}
			n++
		}
		if n != len(names) {
			t.Fatalf("rewrite(%q) = %q, with %d parameters for %d placeholders", in, out, n, len(names))
		}

		// Inside a string, a dollar quote or a comment, nothing is one.
		for _, wrapped := range []string{
			"'" + strings.ReplaceAll(in, "'", "''") + "'",
			`"` + strings.ReplaceAll(in, `"`, `""`) + `"`,
			"E'" + strings.ReplaceAll(strings.ReplaceAll(in, `\`, `\\`), "'", `\'`) + "'",
			"$q$" + without(in, "$q$") + "$q$",
			"/*" + without(in, "/*", "*/") + "*/",
			"--" + strings.NewReplacer("\n", "", "\r", "").Replace(in) + "\n",
		} {
			for p := range sqllex.Params(wrapped + "@a") {
				if p.Start != len(wrapped) {
					t.Fatalf("Params(%q) yields %+v", wrapped+"@a", p)
				}
			}
		}
	})
}

// without returns s without any of subs, removed until none is left.
func without(s string, subs ...string) string {
	for {
		n := len(s)
		for _, sub := range subs {
			s = strings.ReplaceAll(s, sub, "")
		}
		if len(s) == n {
			return s
		}
	}
}

// isName reports whether s is a placeholder name, [A-Za-z_][A-Za-z0-9_]*.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80 || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}
