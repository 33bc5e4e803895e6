package sqllex

import "testing"

// openCases are texts and whether they leave the session in a block
// they opened (Info.OpensBlock).
var openCases = []struct {
	sql  string
	want bool
}{
	{"BEGIN", true},
	{"begin;", true},
	{"  BEGIN ISOLATION LEVEL SERIALIZABLE", true},
	{"START TRANSACTION READ ONLY", true},
	{"/* c */ BEGIN", true},
	{"(BEGIN)", true},
	{"SELECT 1; BEGIN", true},
	{"BEGIN; COMMIT; BEGIN", true},
	{"BEGIN; INSERT INTO t VALUES (1); COMMIT AND CHAIN", true},
	{"BEGIN; SAVEPOINT s; ROLLBACK TO SAVEPOINT s", true},
	{"BEGIN; PREPARE TRANSACTION 'x'", true},
	{"BEGIN; SELECT 1; COMMIT", false},
	{"START TRANSACTION; SELECT 1; ROLLBACK", false},
	{"begin; select 1; end", false},
	{"COMMIT", false},
	{"ROLLBACK", false},
	{"SELECT 'BEGIN'", false},
	{"SELECT 1; SELECT 'x; BEGIN'", false},
	{"SELECT begin FROM t", false},
	{"SELECT 1;  \n;", false},
	{"INSERT INTO t (begin_at) VALUES (now())", false},
	{"beginx", false},
	{`"BEGIN"`, false},
	{"-- BEGIN\nSELECT 1", false},
	{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END", false},
	{"", false},
	{";", false},
}

func TestOpensBlock(t *testing.T) {
	for _, tc := range openCases {
		if got := Scan(tc.sql).OpensBlock; got != tc.want {
			t.Errorf("Scan(%q).OpensBlock = %v, want %v", tc.sql, got, tc.want)
		}
		if got := OpensBlock(tc.sql); got != tc.want {
			t.Errorf("OpensBlock(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}

// FuzzOpensBlock: the quick OpensBlock answers as Scan does, for any text.
func FuzzOpensBlock(f *testing.F) {
	for _, tc := range openCases {
		f.Add(tc.sql)
	}
	f.Add(`SELECT E'\'; BEGIN`)
	f.Add("SELECT 1 \v; \f")
	f.Add("SELECT\x00; BEGIN")
	f.Fuzz(func(t *testing.T, sql string) {
		if got, want := OpensBlock(sql), Scan(sql).OpensBlock; got != want {
			t.Fatalf("OpensBlock(%q) = %v, Scan's %v", sql, got, want)
		}
	})
}

func BenchmarkOpensBlock(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		OpensBlock(benchSQL)
	}
}
