package sqllex

import "testing"

func TestScan(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		want Info
	}{
		// What the old ad-hoc scanners misread.
		{"SELECT deallocated_at FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT copy_count, stdin_flag FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT ';'", Info{FirstKeyword: "SELECT", Statements: 1}},

		// Statements and empty statements.
		{"", Info{}},
		{" \t\r\n\f\v", Info{}},
		{";;", Info{}},
		{" ; ; ", Info{}},
		{"SELECT 1", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1;", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1;;  ; ", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 2}},
		{"; ;commit; select 1", Info{FirstKeyword: "commit", Statements: 2}},
		{"PREPARE p AS SELECT 1; EXECUTE p; DEALLOCATE p", Info{FirstKeyword: "PREPARE", Statements: 3, Deallocates: true, Deallocated: "p"}},
		{"SELECT 1); SELECT 2", Info{FirstKeyword: "SELECT", Statements: 2}}, // a stray ) does not hide later semicolons

		// A semicolon inside each kind of token.
		{`SELECT "a;b" FROM t`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT "a"";b"`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT U&"a;b"`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'a'';b'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT $$;$$", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT $f$ ; $$ ; $f$", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT $_x1$;$_x1$", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT $é$;$é$", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT $a$ $b$ ; $a$", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1 -- ;\n", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT /* ; */ 1", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT f(1;2)", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT a[1;2]", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO a VALUES (1); INSERT INTO b VALUES (2))", Info{FirstKeyword: "CREATE", Statements: 1}},
		{"DO $body$ BEGIN EXECUTE 'x'; END $body$; SELECT 1", Info{FirstKeyword: "DO", Statements: 2}},

		// Escape strings: a backslash escapes, but only after a lone E.
		{`SELECT E'\''; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}},
		{`SELECT e'\';'`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT E'\\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}},
		{`SELECT E'a''b\';'`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT 'a\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}}, // standard_conforming_strings
		{`SELECT sole'x\'; DEALLOCATE a'`, Info{FirstKeyword: "SELECT", Statements: 2, Deallocates: true}},
		{`SELECT B'1\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}},
		{`SELECT x'1\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}},
		{`SELECT N'a\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}},
		{`SELECT U&'a\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}},
		{`SELECT u&'d\0061t\+000061' UESCAPE '\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 2}},
		// A string continued after a newline stays an escape string...
		{"SELECT E'a'\n'\\'; SELECT 2'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT E'a' -- c\n\t'\\'; SELECT 2'", Info{FirstKeyword: "SELECT", Statements: 1}},
		// ... but not without a newline, nor across a /* */ comment.
		{"SELECT E'a' '\\'; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 2}},
		{"SELECT E'a' /* c */\n'\\'; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 2}},

		// Parameters and $ inside identifiers are no dollar quotes.
		{"SELECT $1; SELECT $2", Info{FirstKeyword: "SELECT", Statements: 2}},
		{"SELECT $1::int, $23 ; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 2}},
		{"SELECT $9x$;$9x$", Info{FirstKeyword: "SELECT", Statements: 2}}, // a tag cannot start with a digit
		{"SELECT a$b$ ; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 2}},
		{"SELECT $ab; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 2}},

		// The first keyword.
		{"(SELECT 1)", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"/* x */ -- y\n BEGIN", Info{FirstKeyword: "BEGIN", Statements: 1}},
		{"/* a /* b */ ; */ ( ( values (1)))", Info{FirstKeyword: "values", Statements: 1}},
		{"-- x\rCOMMIT -- \nAND", Info{FirstKeyword: "COMMIT", Statements: 1}},
		{"  insert into t values (1)", Info{FirstKeyword: "insert", Statements: 1}},
		{"_x1$y", Info{FirstKeyword: "_x1$y", Statements: 1}},
		{"'x'", Info{Statements: 1}},
		{`"select" 1`, Info{Statements: 1}},
		{`U&"x"`, Info{Statements: 1}},
		{"E'x'", Info{Statements: 1}},
		{"$$x$$", Info{Statements: 1}},
		{"$1", Info{Statements: 1}},
		{"( ; SELECT 1)", Info{Statements: 1}},
		{"((); SELECT 1", Info{Statements: 1}},
		{"(( ; SELECT 1", Info{Statements: 1}},
		{"-- only a comment", Info{}},
		{"/* a /* nested */ comment */", Info{}},

		// COPY FROM STDIN.
		{"COPY t FROM STDIN", Info{FirstKeyword: "COPY", Statements: 1, CopyFromStdin: true}},
		{"copy t from stdin", Info{FirstKeyword: "copy", Statements: 1, CopyFromStdin: true}},
		{"COPY t(a, b) FROM STDIN WITH (FORMAT csv)", Info{FirstKeyword: "COPY", Statements: 1, CopyFromStdin: true}},
		{"SELECT 1; COPY t FROM STDIN", Info{FirstKeyword: "SELECT", Statements: 2, CopyFromStdin: true}},
		{"COPY t FROM STDIN; SELECT 1", Info{FirstKeyword: "COPY", Statements: 2, CopyFromStdin: true}},
		{"/* c */ (COPY t FROM STDIN)", Info{FirstKeyword: "COPY", Statements: 1, CopyFromStdin: true}},
		{"COPY (SELECT * FROM stdin) TO STDOUT", Info{FirstKeyword: "COPY", Statements: 1, CopyFromStdin: true}}, // conservative
		{"COPY t TO STDOUT", Info{FirstKeyword: "COPY", Statements: 1}},
		{"COPY t FROM '/tmp/stdin'", Info{FirstKeyword: "COPY", Statements: 1}},
		{`COPY "stdin" FROM 'f'`, Info{FirstKeyword: "COPY", Statements: 1}},
		{"COPY t FROM -- STDIN\n 'f'", Info{FirstKeyword: "COPY", Statements: 1}},
		{"SELECT 'COPY t FROM STDIN'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"/* COPY t FROM STDIN */ SELECT 1", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT copy FROM stdin", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1 FROM stdin; COPY t TO STDOUT", Info{FirstKeyword: "SELECT", Statements: 2}},
		{"COPY t TO STDOUT; SELECT 1 FROM stdin", Info{FirstKeyword: "COPY", Statements: 2}},

		// Deallocation.
		{"DEALLOCATE ALL", Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{"deallocate stmt", Info{FirstKeyword: "deallocate", Statements: 1, Deallocates: true, Deallocated: "stmt"}},
		{"DEALLOCATE PREPARE s1", Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true, Deallocated: "s1"}},
		{`DEALLOCATE "My s"; deallocate prepare "My s"`, Info{FirstKeyword: "DEALLOCATE", Statements: 2, Deallocates: true, Deallocated: `"My s"`}},
		{"DEALLOCATE a; DEALLOCATE b", Info{FirstKeyword: "DEALLOCATE", Statements: 2, Deallocates: true}},
		{"DEALLOCATE a; DISCARD ALL", Info{FirstKeyword: "DEALLOCATE", Statements: 2, Deallocates: true, ChangesSearchPath: true}},
		{"DEALLOCATE PREPARE ALL", Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{"DEALLOCATE", Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{"DEALLOCATE PREPARE", Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{`DEALLOCATE "a""b"`, Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{`DEALLOCATE U&"a"`, Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{`DEALLOCATE "ab`, Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{"DEALLOCATE a b", Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{"DEALLOCATE $1", Info{FirstKeyword: "DEALLOCATE", Statements: 1, Deallocates: true}},
		{"SELECT 1; DEALLOCATE p", Info{FirstKeyword: "SELECT", Statements: 2, Deallocates: true, Deallocated: "p"}},
		{"SELECT deallocate FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"DISCARD ALL", Info{FirstKeyword: "DISCARD", Statements: 1, Deallocates: true, ChangesSearchPath: true}},
		// What may change how later statements' names resolve.
		{"SET LOCAL search_path = tenant_1", Info{FirstKeyword: "SET", Statements: 1, ChangesSearchPath: true}},
		{"set search_path to a, public", Info{FirstKeyword: "set", Statements: 1, ChangesSearchPath: true}},
		{`SET "search_path" = a`, Info{FirstKeyword: "SET", Statements: 1, ChangesSearchPath: true}},
		{"SET SCHEMA 'a'", Info{FirstKeyword: "SET", Statements: 1, ChangesSearchPath: true}},
		{"SET LOCAL ROLE r", Info{FirstKeyword: "SET", Statements: 1, ChangesSearchPath: true}},
		{"SET SESSION AUTHORIZATION DEFAULT", Info{FirstKeyword: "SET", Statements: 1, ChangesSearchPath: true}},
		{"RESET ALL", Info{FirstKeyword: "RESET", Statements: 1, ChangesSearchPath: true}},
		{"RESET search_path", Info{FirstKeyword: "RESET", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config('search_path', $1, true)", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"DO $$BEGIN EXECUTE 'SET LOCAL SEARCH_PATH = x'; END$$", Info{FirstKeyword: "DO", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config($1, $2, true)", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"SET statement_timeout = 0", Info{FirstKeyword: "SET", Statements: 1}},
		{"SET application_name = 'search_path'", Info{FirstKeyword: "SET", Statements: 1}},
		{"SET CONSTRAINTS ALL DEFERRED", Info{FirstKeyword: "SET", Statements: 1}},
		{"RESET ROLE", Info{FirstKeyword: "RESET", Statements: 1, ChangesSearchPath: true}},
		{"SET SESSION search_path FROM CURRENT", Info{FirstKeyword: "SET", Statements: 1, ChangesSearchPath: true}},
		{"SELECT 1; set local search_path = a", Info{FirstKeyword: "SELECT", Statements: 2, ChangesSearchPath: true}},
		// set_config: the first argument tells.
		{"SELECT pg_catalog.set_config('SEARCH_PATH', 'a', false)", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{`SELECT "set_config"('search_path', 'a', false)`, Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config('app.user_id', $1, false)", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"select set_config ( 'work_mem' , '64MB', true), 1", Info{FirstKeyword: "select", Statements: 1}},
		{"SELECT set_config('app.' || $1, $2, false)", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config(E'search\\_path', 'a', false)", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config('search''path', 'a', false)", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config(name, 'a', false) FROM t", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config(", Info{FirstKeyword: "SELECT", Statements: 1, ChangesSearchPath: true}},
		{"SELECT set_config FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'set_config(''search_path'', ''a'', false)'", Info{FirstKeyword: "SELECT", Statements: 1}},
		// Reading is not changing.
		{"SHOW search_path", Info{FirstKeyword: "SHOW", Statements: 1}},
		{"SELECT current_setting('search_path')", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'search_path' AS name", Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT "search_path" FROM t`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT setting FROM pg_settings WHERE name = 'search_path'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"ALTER ROLE r SET search_path = a", Info{FirstKeyword: "ALTER", Statements: 1}},
		{"ALTER DATABASE d SET search_path TO a", Info{FirstKeyword: "ALTER", Statements: 1}},
		{"CREATE FUNCTION f() RETURNS int LANGUAGE sql SET search_path = a AS $$SELECT 1$$", Info{FirstKeyword: "CREATE", Statements: 1}},
		// DO: dynamic SQL may change it.
		{"DO $$BEGIN PERFORM set_config('search_path', 'a', false); END$$", Info{FirstKeyword: "DO", Statements: 1, ChangesSearchPath: true}},
		{"DO $$BEGIN SET ROLE r; END$$", Info{FirstKeyword: "DO", Statements: 1, ChangesSearchPath: true}},
		{"DO $$BEGIN EXECUTE 'RESET  ALL'; END$$", Info{FirstKeyword: "DO", Statements: 1, ChangesSearchPath: true}},
		{"DO $$BEGIN CREATE ROLE r; END$$", Info{FirstKeyword: "DO", Statements: 1}},
		{"DO $$BEGIN UPDATE t SET a = 1; END$$", Info{FirstKeyword: "DO", Statements: 1}},

		// Effects that outlive a failed statement.
		{"SELECT pg_advisory_lock(1)", Info{FirstKeyword: "SELECT", Statements: 1, SessionEffects: true}},
		{"select PG_TRY_ADVISORY_LOCK_SHARED(1, 2)", Info{FirstKeyword: "select", Statements: 1, SessionEffects: true}},
		{"SELECT pg_catalog.pg_advisory_unlock_all()", Info{FirstKeyword: "SELECT", Statements: 1, SessionEffects: true}},
		{"SELECT dblink_exec('c', 'INSERT ...')", Info{FirstKeyword: "SELECT", Statements: 1, SessionEffects: true}},
		{"SELECT pg_advisory_xact_lock(1)", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'pg_advisory_lock(1)'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT pg_advisory_locks FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT schema, role, all_rows FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'my_search_path'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT search_paths FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SET x = 1; SELECT role FROM t", Info{FirstKeyword: "SET", Statements: 2}},
		{"discard\n  all;", Info{FirstKeyword: "discard", Statements: 1, Deallocates: true, ChangesSearchPath: true}},
		{"DISCARD /*c*/ ALL", Info{FirstKeyword: "DISCARD", Statements: 1, Deallocates: true, ChangesSearchPath: true}},
		{"DISCARD -- c\n ALL", Info{FirstKeyword: "DISCARD", Statements: 1, Deallocates: true, ChangesSearchPath: true}},
		{"DISCARD TEMP; RESET ALL", Info{FirstKeyword: "DISCARD", Statements: 2, ChangesSearchPath: true}},
		{"DISCARD TEMP", Info{FirstKeyword: "DISCARD", Statements: 1}},
		{"DISCARD PLANS", Info{FirstKeyword: "DISCARD", Statements: 1}},
		{"DISCARD SEQUENCES", Info{FirstKeyword: "DISCARD", Statements: 1}},
		{"discard allowances", Info{FirstKeyword: "discard", Statements: 1}},
		{"DISCARD; ALL", Info{FirstKeyword: "DISCARD", Statements: 2}},
		{`DISCARD "all"`, Info{FirstKeyword: "DISCARD", Statements: 1}},
		{`SELECT "deallocate"`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT foo$deallocate FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"-- DEALLOCATE ALL\nSELECT 1", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"/* DISCARD ALL */ SELECT 1", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'discard' || ' all'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'deallocated_at'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 'x deallocate y'", Info{FirstKeyword: "SELECT", Statements: 1}}, // a string is data
		{"SELECT 'please discard all drafts'", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"INSERT INTO notes VALUES ('DEALLOCATE ALL')", Info{FirstKeyword: "INSERT", Statements: 1}},
		{"SELECT discard, all_rows FROM t", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"DO $$BEGIN EXECUTE 'DEALLOCATE ALL'; END$$", Info{FirstKeyword: "DO", Statements: 1, Deallocates: true}},
		{"EXECUTE 'discard  all'", Info{FirstKeyword: "EXECUTE", Statements: 1}},
		{"DO 'BEGIN EXECUTE ''discard  all''; END'", Info{FirstKeyword: "DO", Statements: 1, Deallocates: true, ChangesSearchPath: true}},
		{"SELECT $f$ discard /* c */ all $f$", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"DO $f$ BEGIN EXECUTE 'discard /* c */ all'; END $f$", Info{FirstKeyword: "DO", Statements: 1, Deallocates: true, ChangesSearchPath: true}},
		{"DO $f$ BEGIN EXECUTE $q$DEALLOCATE ALL$q$; END $f$", Info{FirstKeyword: "DO", Statements: 1, Deallocates: true}},
		{`SELECT E'\nDEALLOCATE'`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`DO E'BEGIN EXECUTE \'\nDEALLOCATE x\'; END'`, Info{FirstKeyword: "DO", Statements: 1, Deallocates: true}},
		{`DO LANGUAGE plpgsql E'BEGIN EXECUTE \'DISCARD\nALL\'; END'`, Info{FirstKeyword: "DO", Statements: 1, Deallocates: true, ChangesSearchPath: true}},
		{`SELECT 'discard temp'`, Info{FirstKeyword: "SELECT", Statements: 1}},

		// Unterminated tokens run to the end of the text.
		{"SELECT 'abc; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT E'\'; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT E'\'; DEALLOCATE`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT E'\`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT "abc; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{`SELECT U&"abc; SELECT 2`, Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT $$abc; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT $x$abc $x; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1 /* abc; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1 /* a /* b */ ; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"SELECT 1 -- abc; SELECT 2", Info{FirstKeyword: "SELECT", Statements: 1}},
		{"COPY t FROM STDIN '", Info{FirstKeyword: "COPY", Statements: 1, CopyFromStdin: true}},
		{"/* unterminated", Info{}},
		{"/*/", Info{}},
		{"--", Info{}},
		{"'", Info{Statements: 1}},
		{`"`, Info{Statements: 1}},
		{"$", Info{Statements: 1}},
		{"$a", Info{FirstKeyword: "", Statements: 1}},
		{"$$", Info{Statements: 1}},
		{"U&", Info{FirstKeyword: "U", Statements: 1}},
		{"E", Info{FirstKeyword: "E", Statements: 1}},
		{"-", Info{Statements: 1}},
		{"/", Info{Statements: 1}},

		// Any bytes.
		{"\xff\xfe; SELECT 1", Info{FirstKeyword: "\xff\xfe", Statements: 2}},
		{"\x00SELECT", Info{Statements: 1}},
	} {
		got := Scan(tt.sql)
		got.TransactionControl = false // TestTransactionControl
		got.EndsBlock = false          // TestEndsBlock
		got.ExitsBlock = false         // TestExitsBlock
		got.OpensBlock = false         // TestOpensBlock
		got.Prepares = false           // TestPrepares
		if got != tt.want {
			t.Errorf("Scan(%q) = %+v, want %+v", tt.sql, got, tt.want)
		}
	}
}

func TestTransactionControl(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1; SELECT 2":                     false,
		"INSERT INTO t VALUES (1); COMMIT":       true,
		"begin; select 1":                        true,
		"SELECT 1; /* c */ (rollback)":           true,
		"SELECT 'COMMIT'; SELECT \"begin\"":      false,
		"SELECT commit_ts FROM t; SELECT end_at": false,
		"PREPARE TRANSACTION 'x'":                true,
		"-- COMMIT\nSELECT 1":                    false,
		"SELECT 1; END":                          true,
		"SAVEPOINT a; RELEASE a":                 true,
	} {
		if got := Scan(sql).TransactionControl; got != want {
			t.Errorf("Scan(%q).TransactionControl = %v, want %v", sql, got, want)
		}
	}
}

func TestEndsBlock(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1": false,
		"BEGIN; INSERT INTO t VALUES (1); COMMIT": true,
		"begin; select 1/0; end":                  true,
		"BEGIN; SELECT 1; ROLLBACK WORK;":         true,
		"ABORT":                                   false, // not a block the text began
		"BEGIN; ABORT":                            true,
		"START TRANSACTION; SELECT 1; END":        true,
		"INSERT INTO t VALUES (1); COMMIT":        false, // a block the caller began earlier
		"ROLLBACK TOO SAVEPOINT s":                false,
		"BEGIN; CREATE FUNCTION f() RETURNS int BEGIN ATOMIC SELECT 1; END": false,
		"COMMIT; BEGIN; SELECT 1; COMMIT":                                   true,
		"COMMIT; BEGIN":                                                     false,
		"BEGIN; SELECT 1; COMMIT; SELECT 2":                                 true,
		"BEGIN; SAVEPOINT a; ROLLBACK TO a":                                 false,
		"rollback transaction to savepoint a":                               false,
		"COMMIT AND CHAIN":                                                  false,
		"COMMIT PREPARED 'x'":                                               false,
		"PREPARE TRANSACTION 'x'":                                           false,
		"SELECT 'COMMIT'":                                                   false,
		"BEGIN; -- COMMIT\nSELECT 1":                                        false,
		"DO $$BEGIN COMMIT; END$$":                                          false,
		"BEGIN; SELECT '\\'; COMMIT":                                        false, // one of the readings sees no COMMIT
	} {
		if got := Scan(sql).EndsBlock; got != want {
			t.Errorf("Scan(%q).EndsBlock = %v, want %v", sql, got, want)
		}
	}
}

func TestExitsBlock(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1":                              false,
		"COMMIT":                                true,
		"commit and chain":                      true,
		"/* c */ End":                           true,
		"ROLLBACK TO SAVEPOINT a":               true,
		"abort work":                            true,
		"SELECT 1; ROLLBACK":                    true,
		"COMMIT PREPARED 'x'":                   true, // errs towards true
		"PREPARE TRANSACTION 'x'":               true,
		"prepare /* c */ transaction 'x'":       true,
		"PREPARE p AS INSERT INTO t VALUES (1)": false,
		"PREPARE p (int) AS SELECT $1":          false,
		"EXECUTE p":                             false,
		"BEGIN":                                 false,
		"SAVEPOINT a; RELEASE a":                false,
		"DO $$BEGIN COMMIT; END$$":              false, // refused in an aborted block, as any DO
		"CALL p()":                              false,
		"SELECT 'COMMIT'":                       false,
		"-- COMMIT\nSELECT 1":                   false,
		"SELECT commit_ts FROM t":               false,
		"PREPARE":                               false,
		"PREPARE; COMMIT":                       true,
		"PREPARE; TRANSACTION":                  false,
	} {
		if got := Scan(sql).ExitsBlock; got != want {
			t.Errorf("Scan(%q).ExitsBlock = %v, want %v", sql, got, want)
		}
	}
}

func TestKeepsOwnSync(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		want bool
	}{
		{"SELECT 1", false},
		{"  insert into t values (1)", false},
		{"-- note\n/* a /* nested */ b */ (select 1)", false},
		{"VACUUM t", false},
		{"BEGINNING", false}, // not a keyword we know: a syntax error of its own
		{"begin", true},
		{"START TRANSACTION", true},
		{"/* x */ Commit", true},
		{"end", true},
		{"rollback to savepoint a", true},
		{"abort", true},
		{"SAVEPOINT a", true},
		{"RELEASE a", true},
		{"PREPARE TRANSACTION 'x'", true},
		{"COPY t TO STDOUT", true},
		{"-- x\rCOMMIT -- \nAND", true},
		{"", true},
		{";", true},
		{"-- only a comment", true},
		{"/* unterminated", true},
		{"'x'", true},
		{"DO $$BEGIN COMMIT; END$$", true},
		{"call p()", true},
	} {
		if got := Scan(tt.sql).KeepsOwnSync(); got != tt.want {
			t.Errorf("Scan(%q).KeepsOwnSync() = %v, want %v", tt.sql, got, tt.want)
		}
	}
}

// TestScanAllocs: Scan allocates nothing, whatever the text.
func TestScanAllocs(t *testing.T) {
	for _, sql := range []string{benchSQL, "DO $f$ BEGIN EXECUTE 'DEALLOCATE ALL'; END $f$; COPY t FROM STDIN", "/* x */ E'\\'' -- y"} {
		if n := testing.AllocsPerRun(100, func() { Scan(sql) }); n != 0 {
			t.Errorf("Scan(%q): %v allocations, want 0", sql, n)
		}
	}
}

// TestScanBothStringRules: with standard_conforming_strings off, 'a\'
// does not end at its second quote, and the COPY FROM STDIN that reads as
// a string constant with the setting on is a statement; the session's
// setting is not known when a text is scanned, so Scan flags what either
// reading finds.
func TestScanBothStringRules(t *testing.T) {
	for _, tc := range []struct {
		sql               string
		copyIn, txControl bool
		firstKeyword      string
		statementsAtLeast int
	}{
		{`SELECT 'a\', '; COPY t FROM STDIN; SELECT ' --'`, true, false, "SELECT", 3},
		{`SELECT 'x\'; COMMIT; SELECT '`, false, true, "SELECT", 3},
		{`SELECT E'a\'b', 'c'`, false, false, "SELECT", 1},
		{`'\'; COPY t FROM STDIN; '`, true, false, "", 2},
	} {
		info := Scan(tc.sql)
		if info.CopyFromStdin != tc.copyIn || info.TransactionControl != tc.txControl ||
			info.FirstKeyword != tc.firstKeyword || info.Statements < tc.statementsAtLeast {
			t.Errorf("Scan(%q) = %+v; want CopyFromStdin %v, TransactionControl %v, FirstKeyword %q, Statements >= %d",
				tc.sql, info, tc.copyIn, tc.txControl, tc.firstKeyword, tc.statementsAtLeast)
		}
	}
}
