package sqllex

import (
	"strings"
	"testing"
)

// FuzzScan: Scan never panics on any text, and its answers hold together:
// no more statements than semicolons allow, a first keyword taken from the
// text, and the same Info after a leading space, a trailing newline or a
// trailing semicolon.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"", benchSQL, "SELECT ';'", "(SELECT 1)", "/* x */ -- y\n BEGIN", "/* /* */ */ commit",
		`SELECT E'\''; SELECT 2`, "SELECT E'a'\n'\\'; x'", "SELECT $f$ ; $$ ; $f$", "SELECT $1; SELECT $2",
		"SELECT a$b$ ; x", "DISCARD /*c*/ ALL", "DISCARD TEMP; RESET ALL", "SELECT 1; COPY t FROM STDIN",
		"DO $$BEGIN EXECUTE 'DEALLOCATE ALL'; END$$", `SELECT E'\nDEALLOCATE'`, `U&"a;b"`, "U&'x'",
		"/*", "--", "'", `"`, "$", "$$", "$a$", `E'\`, "\xff\xfe;", "((", ");",
		"DEALLOCATE PREPARE p; deallocate p", `DEALLOCATE "a"; DEALLOCATE b`, "SELECT 'please discard all'",
		"SELECT set_config('app.x', $1, false)", "SELECT set_config('search_path', 'a', true)",
		"SHOW search_path", "DO $$BEGIN SET ROLE r; END$$",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		info := Scan(sql)
		if n := strings.Count(sql, ";") + 1; info.Statements < 0 || info.Statements > n {
			t.Fatalf("Scan(%q).Statements = %d, want 0 to %d", sql, info.Statements, n)
		}
		if kw := info.FirstKeyword; kw != "" {
			if !strings.Contains(sql, kw) {
				t.Fatalf("Scan(%q).FirstKeyword = %q, not in the text", sql, kw)
			}
			if !isIdentStart(kw[0]) || strings.IndexFunc(kw, func(r rune) bool { return r < 0x80 && !isIdentCont(byte(r)) }) >= 0 {
				t.Fatalf("Scan(%q).FirstKeyword = %q, not a word", sql, kw)
			}
			if again := Scan(kw).FirstKeyword; again != kw {
				t.Fatalf("Scan(%q).FirstKeyword = %q, but Scan(%q).FirstKeyword = %q", sql, kw, kw, again)
			}
		}
		if info.Statements == 0 && (info.FirstKeyword != "" || info.CopyFromStdin || info.Deallocates || info.ChangesSearchPath) {
			t.Fatalf("Scan(%q) = %+v with no statement", sql, info)
		}
		lower := strings.ToLower(sql)
		if info.CopyFromStdin && !(strings.Contains(lower, "copy") && strings.Contains(lower, "from") && strings.Contains(lower, "stdin")) {
			t.Fatalf("Scan(%q).CopyFromStdin without the words", sql)
		}
		if info.Deallocates && !strings.Contains(lower, "deallocate") && !(strings.Contains(lower, "discard") && strings.Contains(lower, "all")) {
			t.Fatalf("Scan(%q).Deallocates without the words", sql)
		}
		if info.ChangesSearchPath && !strings.Contains(lower, "search_path") && !strings.Contains(lower, "set") &&
			!(strings.Contains(lower, "discard") && strings.Contains(lower, "all")) {
			t.Fatalf("Scan(%q).ChangesSearchPath without the words", sql)
		}
		if d := info.Deallocated; d != "" && (!info.Deallocates || !strings.Contains(sql, d)) {
			t.Fatalf("Scan(%q).Deallocated = %q, not a name in a deallocating text", sql, d)
		}
		for _, other := range []string{" " + sql, sql + "\n", sql + ";"} {
			if got := Scan(other); got != info {
				t.Fatalf("Scan(%q) = %+v, but Scan(%q) = %+v", sql, info, other, got)
			}
		}
	})
}
