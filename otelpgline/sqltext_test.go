package otelpgline

import (
	"testing"
)

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1", "SELECT ?"},
		{"SELECT $1::int, $2", "SELECT $1::int, $2"},
		{"SELECT 'it''s', E'a\\'b', 'x'", "SELECT ?, ?, ?"},
		{"SELECT B'101', X'1F', N'n', U&'d\\0061t'", "SELECT ?, ?, ?, ?"},
		{"SELECT $$a 'b' 1$$, $fn$ $$ $fn$ FROM t", "SELECT ?, ? FROM t"},
		{"SELECT 1.5e-3, .5, 0x1F, 1_000, -7", "SELECT ?, ?, ?, ?, -?"},
		{`SELECT "col 1", t1.c2, a$b FROM "t'x"`, `SELECT "col 1", t1.c2, a$b FROM "t'x"`},
		{"SELECT 1 -- it's 2\n, 3", "SELECT ? -- it's 2\n, ?"},
		{"SELECT /* 1 /* 'x' */ 2 */ 3", "SELECT /* 1 /* 'x' */ 2 */ ?"},
		{"SELECT x FROM t WHERE a IN (1, 2) AND b = 'c'", "SELECT x FROM t WHERE a IN (?, ?) AND b = ?"},
		{"SELECT date '2024-01-01', interval '1 day'", "SELECT date ?, interval ?"},
		{"SELECT 'unterminated", "SELECT ?"},
		{"SELECT $tag$unterminated", "SELECT ?"},
		{"SELECT e, b, x FROM t", "SELECT e, b, x FROM t"},
		{"INSERT INTO t VALUES ('ünïcode', 2)", "INSERT INTO t VALUES (?, ?)"},
		{"", ""},
	} {
		if got := sanitize(tc.in); got != tc.want {
			t.Errorf("sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAnalyze(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want sqlInfo
	}{
		{"SELECT 1", sqlInfo{op: "SELECT"}},
		{"  select 1;", sqlInfo{op: "select"}},
		{"-- note\n/* c */ (SELECT 1) UNION (SELECT 2)", sqlInfo{op: "SELECT"}},
		{"WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n+1 FROM t) SELECT * FROM t", sqlInfo{op: "SELECT"}},
		{"WITH d AS MATERIALIZED (DELETE FROM a RETURNING *) INSERT INTO b SELECT * FROM d", sqlInfo{op: "INSERT"}},
		{"WITH d AS (SELECT 1) UPDATE t SET n = 1 RETURNING n", sqlInfo{op: "UPDATE", returning: true}},
		{"INSERT INTO t SELECT x FROM (DELETE FROM u RETURNING x) s", sqlInfo{op: "INSERT"}},
		{"INSERT INTO t VALUES (1) RETURNING id", sqlInfo{op: "INSERT", returning: true}},
		{"SELECT a INTO new_t FROM t", sqlInfo{op: "SELECT", into: true}},
		{"SELECT a FROM t WHERE b IN (SELECT b INTO x FROM u)", sqlInfo{op: "SELECT"}},
		{"COPY t (a) FROM STDIN", sqlInfo{op: "COPY"}},
		{"COPY (SELECT a FROM t) TO STDOUT", sqlInfo{op: "COPY", copyTo: true}},
		{"copy t to stdout", sqlInfo{op: "copy", copyTo: true}},
		{"SELECT 1; SELECT 2", sqlInfo{multi: true}},
		{"SELECT 1; -- done\n;", sqlInfo{op: "SELECT"}},
		{"DO $$BEGIN PERFORM 1; END$$", sqlInfo{op: "DO"}},
		{"frobnicate the database", sqlInfo{}},
		{"'SELECT'", sqlInfo{}},
		{"", sqlInfo{}},
	} {
		if got := analyze(tc.in); got != tc.want {
			t.Errorf("analyze(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestScrub(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		args []any
		want string
	}{
		{`invalid input syntax for type integer: "abc"`, []any{"abc"}, `invalid input syntax for type integer: "?"`},
		{`value "12345" is out of range (SQLSTATE 22003)`, []any{int64(12345)}, `value "?" is out of range (SQLSTATE 22003)`},
		{`relation "t1" does not exist (SQLSTATE 42P01)`, []any{1, "t"}, `relation "t1" does not exist (SQLSTATE 42P01)`},
		{`x: "ab", "ab"`, []any{[]byte("ab"), nil, true, struct{}{}}, `x: "?", "?"`},
		{`no args`, nil, `no args`},
	} {
		if got := scrub(tc.msg, tc.args); got != tc.want {
			t.Errorf("scrub(%q, %v) = %q, want %q", tc.msg, tc.args, got, tc.want)
		}
	}
}

func TestServerOfLabel(t *testing.T) {
	for _, tc := range []struct {
		label string
		want  server
	}{
		{"db.example:5432", server{"db.example", 5432}},
		{"[::1]:5433", server{"::1", 5433}},
		{"db (10.0.0.1):6432", server{"db", 6432}},
		{"/run/postgresql/.s.PGSQL.5432", server{"/run/postgresql/.s.PGSQL.5432", 0}},
		{"", server{}},
	} {
		if got := serverOfLabel(tc.label); got != tc.want {
			t.Errorf("serverOfLabel(%q) = %+v, want %+v", tc.label, got, tc.want)
		}
	}
}

// FuzzSQLText: the lexer never panics, and sanitize leaves no literal.
func FuzzSQLText(f *testing.F) {
	for _, s := range []string{"SELECT 1", "SELECT 'a''b', E'\\'', $x$y$x$", "/* /* */", "U&'x' b'1' 1e+5 .5", "$1$$", "WITH x AS (SELECT 1) DELETE FROM t RETURNING *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		analyze(sql)
		out := sanitize(sql)
		l := lexer{s: out}
		for {
			kind, tok, ok := l.next()
			if !ok {
				break
			}
			if kind == tokString || kind == tokNumber {
				t.Fatalf("sanitize(%q) = %q still holds the literal %q", sql, out, tok)
			}
		}
	})
}
