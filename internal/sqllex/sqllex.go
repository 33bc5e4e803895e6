package sqllex

import "strings"

// Info is what the driver needs to know of one SQL text.
type Info struct {
	// FirstKeyword is the first word of the first non-empty statement,
	// after white space, comments, empty statements (";") and opening
	// parentheses, as written (not case-folded, a substring of the text);
	// "" when that statement does not start with a word (empty text, only
	// comments, a string, a quoted identifier...).
	FirstKeyword string

	// Statements counts the non-empty statements separated by top-level
	// semicolons: semicolons inside strings, quoted identifiers,
	// dollar-quoted bodies, comments, parentheses and brackets don't count,
	// and neither do empty statements (";;", a trailing ";"). It counts a
	// CREATE FUNCTION ... BEGIN ATOMIC ... END body as several statements,
	// which is one statement to PostgreSQL.
	Statements int

	// CopyFromStdin reports that some statement starts with the keyword
	// COPY and holds the keywords FROM and STDIN, as words outside strings,
	// comments and quoted identifiers and at any depth of parentheses (so
	// that COPY t(a, b) FROM STDIN WITH (FORMAT csv) is one). It may be
	// true for a COPY that does not read from the client, such as
	// COPY (SELECT * FROM stdin) TO STDOUT.
	CopyFromStdin bool

	// Deallocates reports that the text may deallocate prepared
	// statements: a statement starts with the keyword DEALLOCATE, or with
	// DISCARD followed (after white space and comments) by the keyword ALL
	// (DISCARD TEMP, PLANS and SEQUENCES are not DISCARD ALL). In a DO
	// statement, whose code may run dynamic SQL, it is also true when the
	// words DEALLOCATE or DISCARD ALL appear inside a string constant or a
	// dollar-quoted body (where a backslash escape also separates words).
	// Anywhere else a string is data: SELECT 'please discard all' does
	// not count, nor does a word in a comment or a quoted identifier, or
	// one that merely contains these (deallocated_at). Not seen: words
	// spelled with escapes (E'\x44EALLOCATE') or built at run time, and
	// functions that deallocate (EXECUTE in PL/pgSQL).
	Deallocates bool

	// Deallocated is, when every statement that deallocates (see
	// Deallocates) is DEALLOCATE [PREPARE] name of one and the same name,
	// that name as written: a word (which PostgreSQL folds to lower
	// case), or a quoted identifier with its double quotes. It is ""
	// otherwise: DEALLOCATE ALL, DISCARD ALL, a DO statement, or names
	// that differ. A caller that knows the names of its own statements
	// can tell that a DEALLOCATE of another name leaves them.
	Deallocated string

	// TransactionControl reports that some statement starts with BEGIN,
	// START, COMMIT, END, ROLLBACK, ABORT, SAVEPOINT, RELEASE or PREPARE
	// (for PREPARE TRANSACTION), or with DO or CALL, whose code may
	// commit: a text that has none runs in one implicit transaction, all
	// or nothing.
	TransactionControl bool

	// EndsBlock reports that the text begins a transaction block and
	// ends it: a statement starts with BEGIN or START, and the last
	// statement starting with transaction control (see
	// TransactionControl), after it, ends a block: COMMIT, END, ROLLBACK
	// or ABORT, without TO (ROLLBACK TO SAVEPOINT), PREPARED or CHAIN.
	// Such a text (BEGIN; ...; COMMIT) means to leave the session
	// outside any block. It is false for a text with BEGIN ATOMIC (a
	// function's body, whose END the statement count misreads).
	EndsBlock bool

	// ExitsBlock reports that some statement is one PostgreSQL runs in an
	// aborted transaction block, which it ends or rolls back to a
	// savepoint: it starts with COMMIT, END, ROLLBACK or ABORT (in any
	// form: TO SAVEPOINT, AND CHAIN, PREPARED), or with PREPARE followed
	// by TRANSACTION. An aborted block refuses (25P02) every statement
	// without it.
	ExitsBlock bool

	// ChangesSearchPath reports that the text may change how the names
	// in later statements resolve to tables and types, that is change
	// search_path or the role whose schema "$user" names:
	//   - a statement starting with SET or RESET holds the word
	//     search_path (also quoted, "search_path"), SCHEMA (SET SCHEMA, an
	//     alias of search_path), ROLE or AUTHORIZATION (SET ROLE, SET
	//     SESSION AUTHORIZATION), or ALL (RESET ALL);
	//   - DISCARD ALL, which runs RESET ALL and SET SESSION AUTHORIZATION
	//     DEFAULT (besides deallocating);
	//   - a call of set_config (set_config( or "set_config"( in any
	//     statement) whose first argument is the string constant
	//     'search_path' in any case, or is not a plain string constant
	//     followed by a comma (a parameter or an expression may be
	//     search_path at run time): set_config('app.user_id', $1, false)
	//     changes nothing that resolves names;
	//   - a DO statement, whose code may run dynamic SQL, has a string
	//     constant or dollar-quoted body that holds the word search_path
	//     or set_config, the word ROLE or AUTHORIZATION along with SET or
	//     RESET, or RESET or DISCARD followed by ALL.
	// Reading a setting is not changing it: SHOW search_path,
	// current_setting('search_path') or a string constant naming it in a
	// SELECT don't count, nor do ALTER ROLE or ALTER DATABASE ... SET
	// search_path (later sessions) and CREATE FUNCTION ... SET
	// search_path (the function's own runs). Not seen: functions and
	// procedures that change search_path when called.
	ChangesSearchPath bool

	// SessionEffects reports that the text calls a function whose effect
	// outlives a failed statement's rollback, so that running it twice
	// differs from running it once: the session-level advisory lock
	// functions (pg_advisory_lock, pg_try_advisory_lock, their _shared
	// forms, and the pg_advisory_unlock ones; not the _xact_ forms, which
	// end with the transaction) and dblink's, which run on another server.
	// Functions that call them are not seen.
	SessionEffects bool

	// OpensBlock reports that the text leaves the session in a
	// transaction block it opened: a statement starts with BEGIN or START
	// (BEGIN ATOMIC, inside a function's body, starts none) and the text
	// does not end that block (see EndsBlock). BEGIN, START TRANSACTION,
	// "BEGIN; COMMIT; BEGIN" and "BEGIN; COMMIT AND CHAIN" open one;
	// "BEGIN; ...; COMMIT" does not.
	OpensBlock bool

	// Prepares reports that the text may prepare a statement with SQL
	// PREPARE: a statement starts with the keyword PREPARE not followed
	// by TRANSACTION (PREPARE TRANSACTION prepares no statement), or the
	// word PREPARE appears inside a string constant or a dollar-quoted
	// body, as dynamic SQL may hold it (EXECUTE 'PREPARE s AS ...' in a DO
	// block; it errs towards true). Not seen: functions that prepare
	// statements when called.
	Prepares bool
}

// Scan reads sql once and returns its Info. It accepts any text (invalid
// UTF-8, unterminated strings or comments, which run to the end of the
// text), never panics and allocates nothing. A text with a backslash is
// read twice, with standard_conforming_strings on and off (see the
// package comment): the session's setting is not known when a text is
// scanned (a SET may be in flight), and the answers that flag a risk are
// those of either reading.
func Scan(sql string) Info {
	info := scan(sql, false)
	if strings.IndexByte(sql, '\\') < 0 {
		return info
	}
	off := scan(sql, true)
	if off.FirstKeyword != info.FirstKeyword {
		info.FirstKeyword = "" // unknown (see KeepsOwnSync)
	}
	info.Statements = max(info.Statements, off.Statements)
	info.CopyFromStdin = info.CopyFromStdin || off.CopyFromStdin
	switch {
	case !off.Deallocates:
	case !info.Deallocates:
		info.Deallocated = off.Deallocated
	case info.Deallocated != off.Deallocated:
		info.Deallocated = "" // more than one name
	}
	info.Deallocates = info.Deallocates || off.Deallocates
	info.TransactionControl = info.TransactionControl || off.TransactionControl
	info.EndsBlock = info.EndsBlock && off.EndsBlock
	info.ExitsBlock = info.ExitsBlock || off.ExitsBlock
	info.ChangesSearchPath = info.ChangesSearchPath || off.ChangesSearchPath
	info.SessionEffects = info.SessionEffects || off.SessionEffects
	info.OpensBlock = info.OpensBlock || off.OpensBlock
	info.Prepares = info.Prepares || off.Prepares
	return info
}

// scan is Scan for one reading: with backslash, a backslash escapes in
// '...' strings too (standard_conforming_strings off).
func scan(sql string, backslash bool) Info {
	var (
		info      Info
		l         = lexer{sql: sql, backslash: backslash}
		depth     int  // ( and [ open
		inStmt    bool // the current statement has a token
		started   bool // the first token of the current statement but ( was read
		firstDone bool // info.FirstKeyword is final
		copyStmt  bool // the current statement starts with COPY
		from      bool // ... and holds FROM
		stdin     bool // ... and STDIN
		discard   bool // the previous token is the keyword DISCARD, first in its statement
		setStmt   bool // the current statement starts with SET or RESET
		tcStmt    bool // the current statement starts with transaction control
		endStmt   bool // ... with COMMIT, END, ROLLBACK or ABORT, and holds no TO, PREPARED or CHAIN
		prepFirst bool // the current statement's only token so far is the keyword PREPARE
		opened    bool // a statement started with BEGIN or START
		atomic    bool // the words BEGIN ATOMIC were read
		prevBegin bool // the previous token is the word BEGIN
	)
	// Deallocations and changes of search_path (see Info).
	var (
		resetStmt  bool         // the current statement starts with RESET
		doStmt     bool         // ... with DO
		dealloc    deallocState // ... with DEALLOCATE: what was read of it
		cfg        configState  // in a call of set_config: what was read of it
		dname      string       // the name DEALLOCATE names (see Info.Deallocated)
		deallocAll bool         // a deallocation that is not DEALLOCATE dname
	)
	for {
		t := l.next()
		if t.kind == tokEOF {
			break
		}
		if t.kind == tokSemicolon && depth == 0 {
			if inStmt {
				info.Statements++
				firstDone = true
			}
			if tcStmt {
				info.EndsBlock = endStmt
			}
			if dealloc == deallocStart || dealloc == deallocPrepare {
				deallocAll = true // no name: nothing known
			}
			inStmt, started, copyStmt, from, stdin, discard, setStmt, tcStmt, endStmt, prepFirst = false, false, false, false, false, false, false, false, false, false
			resetStmt, doStmt, dealloc, cfg = false, false, deallocNone, cfgNone
			continue
		}
		inStmt = true
		afterDiscard := discard
		discard = false
		if cfg != cfgNone {
			cfg = cfg.next(t, &info)
		}
		if dealloc != deallocNone && started {
			dealloc = dealloc.next(t, &dname, &deallocAll)
		}
		switch t.kind {
		case tokOpen:
			depth++
		case tokClose:
			if depth > 0 {
				depth--
			}
		}
		if prepFirst {
			prepFirst = false
			if t.kind == tokWord && equalFold(t.text, "transaction") {
				info.ExitsBlock = true
			} else {
				info.Prepares = true
			}
		}
		if !started && t.kind != tokOpen {
			started = true
			kw := ""
			if t.kind == tokWord {
				kw = t.text
			}
			if equalFold(kw, "commit") || equalFold(kw, "end") || equalFold(kw, "rollback") || equalFold(kw, "abort") {
				info.ExitsBlock = true
			}
			prepFirst = equalFold(kw, "prepare")
			if !firstDone {
				info.FirstKeyword, firstDone = kw, true
			}
			copyStmt = equalFold(kw, "copy")
			resetStmt = equalFold(kw, "reset")
			setStmt = equalFold(kw, "set") || resetStmt
			doStmt = equalFold(kw, "do")
			discard = equalFold(kw, "discard")
			if equalFold(kw, "deallocate") {
				info.Deallocates, dealloc = true, deallocStart
			}
			if isTransactionControl(kw) {
				info.TransactionControl, tcStmt = true, true
				endStmt = opened && (equalFold(kw, "commit") || equalFold(kw, "end") || equalFold(kw, "rollback") || equalFold(kw, "abort"))
				opened = opened || equalFold(kw, "begin") || equalFold(kw, "start")
			}
		} else if endStmt && t.kind == tokWord &&
			(equalFold(t.text, "to") || equalFold(t.text, "prepared") || equalFold(t.text, "chain")) {
			endStmt = false
		}
		if t.kind == tokWord && prevBegin && equalFold(t.text, "atomic") {
			atomic = true
		}
		prevBegin = t.kind == tokWord && equalFold(t.text, "begin")
		switch t.kind {
		case tokWord:
			switch {
			case afterDiscard && equalFold(t.text, "all"):
				// DISCARD ALL also runs RESET ALL and SET SESSION
				// AUTHORIZATION DEFAULT.
				info.Deallocates, deallocAll, info.ChangesSearchPath = true, true, true
			case copyStmt && equalFold(t.text, "from"):
				from = true
			case copyStmt && equalFold(t.text, "stdin"):
				stdin = true
			case setStmt && (equalFold(t.text, "search_path") || equalFold(t.text, "schema") ||
				equalFold(t.text, "role") || equalFold(t.text, "authorization")),
				resetStmt && equalFold(t.text, "all"):
				info.ChangesSearchPath = true
			case equalFold(t.text, "set_config"):
				cfg = cfgName
			case sessionEffect(t.text):
				info.SessionEffects = true
			}
		case tokString, tokDollar:
			// Data, but in a DO statement maybe dynamic SQL.
			if doStmt && mentionsDeallocate(t.body) {
				info.Deallocates, deallocAll = true, true
			}
			if doStmt && !info.ChangesSearchPath && mentionsPathChange(t.body) {
				info.ChangesSearchPath = true
			}
		case tokQuotedIdent:
			switch t.text {
			case `"search_path"`:
				info.ChangesSearchPath = info.ChangesSearchPath || setStmt
			case `"set_config"`:
				cfg = cfgName
			}
		}
		if from && stdin {
			info.CopyFromStdin = true
		}
		if (t.kind == tokString || t.kind == tokDollar) && !info.Prepares && mentionsWord(t.body, "prepare") {
			info.Prepares = true // maybe dynamic SQL
		}
	}
	if inStmt {
		info.Statements++
	}
	if tcStmt {
		info.EndsBlock = endStmt
	}
	info.EndsBlock = info.EndsBlock && !atomic
	info.OpensBlock = opened && !info.EndsBlock
	if dealloc == deallocStart || dealloc == deallocPrepare {
		deallocAll = true
	}
	if info.Deallocates && !deallocAll {
		info.Deallocated = dname
	}
	if cfg >= cfgOpen {
		info.ChangesSearchPath = true // set_config( unterminated
	}
	return info
}

// deallocState is where a scan is in a statement that starts with
// DEALLOCATE (see Info.Deallocated).
type deallocState uint8

const (
	deallocNone    deallocState = iota // not in a DEALLOCATE
	deallocStart                       // after DEALLOCATE
	deallocPrepare                     // after DEALLOCATE PREPARE
	deallocNamed                       // after the name
	deallocDone                        // after ALL, or what is not DEALLOCATE name
)

// next returns the state after t, recording the name in *name, or in
// *all a deallocation of another form: DEALLOCATE [PREPARE] ALL, more
// tokens after the name, or a second name that differs.
func (s deallocState) next(t token, name *string, all *bool) deallocState {
	switch s {
	case deallocStart, deallocPrepare:
		switch {
		case s == deallocStart && t.kind == tokWord && equalFold(t.text, "prepare"):
			return deallocPrepare
		case t.kind == tokWord && !equalFold(t.text, "all"), plainQuotedIdent(t):
			if *name != "" && *name != t.text {
				*all = true
			}
			*name = t.text
			return deallocNamed
		}
	case deallocDone:
		return deallocDone
	}
	*all = true
	return deallocDone
}

// plainQuotedIdent reports whether t is a terminated "..." identifier
// without a doubled quote, whose name is as written between the quotes.
func plainQuotedIdent(t token) bool {
	n := len(t.text)
	return t.kind == tokQuotedIdent && n >= 2 && t.text[0] == '"' && strings.IndexByte(t.text[1:n-1], '"') < 0 && t.text[n-1] == '"'
}

// configState is where a scan is in a call of set_config (see
// Info.ChangesSearchPath).
type configState uint8

const (
	cfgNone   configState = iota
	cfgName               // after the word set_config
	cfgOpen               // after set_config(
	cfgString             // after set_config('a plain string'
	cfgPath               // after set_config('search_path'
)

// next returns the state after t, and sets info.ChangesSearchPath when
// the call's first argument may be search_path.
func (s configState) next(t token, info *Info) configState {
	switch s {
	case cfgName:
		if t.kind == tokOpen && t.text == "(" {
			return cfgOpen
		}
		return cfgNone // not a call: a column named set_config
	case cfgOpen:
		// A plain '...' string, whose body is the setting's name as is
		// (no prefix, no doubled quote, no backslash that the other
		// reading of strings would take for an escape).
		if t.kind == tokString && t.text[0] == '\'' && strings.IndexAny(t.body, "'\\") < 0 {
			if equalFold(t.body, "search_path") {
				return cfgPath
			}
			return cfgString
		}
	case cfgString:
		if t.kind == tokOther && t.text == "," {
			return cfgNone // set_config('app.user_id', ...)
		}
	}
	info.ChangesSearchPath = true
	return cfgNone
}

// sessionEffect reports whether word names a function whose effect
// survives the rollback of the statement that calls it (see
// Info.SessionEffects).
func sessionEffect(word string) bool {
	switch {
	case len(word) >= 6 && equalFold(word[:6], "dblink"):
		return true
	case len(word) < len("pg_advisory_lock") || !equalFold(word[:3], "pg_"):
		return false
	}
	for _, f := range [...]string{"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock",
		"pg_try_advisory_lock_shared", "pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all"} {
		if equalFold(word, f) {
			return true
		}
	}
	return false
}

// KeepsOwnSync reports whether the statement must keep its own Sync in the
// driver's pipeline instead of sharing one with its neighbours: transaction
// control (BEGIN, START, COMMIT, END, ROLLBACK, ABORT, SAVEPOINT, RELEASE,
// and PREPARE for PREPARE TRANSACTION), DO and CALL (which may commit, as
// only a statement alone in its transaction may) and COPY, in any case. It is also
// true when FirstKeyword is "", as nothing is known of the statement.
func (i Info) KeepsOwnSync() bool {
	kw := i.FirstKeyword
	return kw == "" || isTransactionControl(kw) || equalFold(kw, "copy")
}

// isTransactionControl reports whether kw starts a transaction control
// statement (PREPARE for PREPARE TRANSACTION) or one whose code may
// commit (DO, CALL).
func isTransactionControl(kw string) bool {
	return equalFold(kw, "do") || equalFold(kw, "call") ||
		equalFold(kw, "begin") || equalFold(kw, "start") ||
		equalFold(kw, "commit") || equalFold(kw, "end") ||
		equalFold(kw, "rollback") || equalFold(kw, "abort") ||
		equalFold(kw, "savepoint") || equalFold(kw, "release") ||
		equalFold(kw, "prepare")
}

// mentionsDeallocate reports whether body, the inside of a string constant
// or of a dollar-quoted body, holds the word DEALLOCATE or the words DISCARD
// ALL (with white space, comments or backslash escapes between them), as
// dynamic SQL may. A word is a run of letters, digits, _ and bytes of
// multibyte characters; $ and backslash escapes ("\n" in E'\nDEALLOCATE')
// separate words, so that nested dollar quotes and escape strings are seen
// through.
func mentionsDeallocate(body string) bool {
	return mentionsWord(body, "deallocate") || mentionsPair(body, "discard", "all")
}

// mentionsPathChange reports whether body, the inside of a string
// constant or of a dollar-quoted body of a DO statement, may change
// search_path (see Info.ChangesSearchPath): it holds the word search_path
// or set_config, the word ROLE or AUTHORIZATION along with SET or RESET
// (SET ROLE, SET SESSION AUTHORIZATION), or RESET or DISCARD followed
// by ALL (see mentionsDeallocate for what a word is).
func mentionsPathChange(body string) bool {
	return mentionsWord(body, "search_path") || mentionsWord(body, "set_config") ||
		(mentionsWord(body, "role") || mentionsWord(body, "authorization")) &&
			(mentionsWord(body, "set") || mentionsWord(body, "reset")) ||
		mentionsPair(body, "reset", "all") || mentionsPair(body, "discard", "all")
}

// mentionsPair reports whether body holds the word first followed by
// the word second, with only white space, comments or backslash escapes
// between them (see mentionsDeallocate).
func mentionsPair(body, first, second string) bool {
	for i := 0; i < len(body); i++ {
		if wordStart(body, i) && hasWord(body, i, first) && hasWord(body, skipGap(body, i+len(first)), second) {
			return true
		}
	}
	return false
}

// mentionsWord reports whether body, the inside of a string constant or of
// a dollar-quoted body, holds word (lower-case ASCII) in any case, as a
// word of its own (see mentionsDeallocate).
func mentionsWord(body, word string) bool {
	for i := 0; i < len(body); i++ {
		if wordStart(body, i) && hasWord(body, i, word) {
			return true
		}
	}
	return false
}

// wordStart reports whether a word starts at body[i] (see
// mentionsDeallocate): a word byte after a byte that is not one or after
// a backslash escape.
func wordStart(body string, i int) bool {
	return isWordByte(body[i]) && (i == 0 || !isWordByte(body[i-1]) || i >= 2 && body[i-2] == '\\')
}

// hasWord reports whether s[i:] starts with word (lower-case ASCII), in any
// case, not followed by a word byte.
func hasWord(s string, i int, word string) bool {
	end := i + len(word)
	return end <= len(s) && equalFold(s[i:end], word) && (end == len(s) || !isWordByte(s[end]))
}

// skipGap returns the index of the first byte at or after i that is not
// white space, in a comment or in a backslash escape.
func skipGap(s string, i int) int {
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != '\\' {
			return i
		}
		i = min(i+2, len(s))
	}
}

// isWordByte reports whether c may be part of a word inside a string or a
// dollar-quoted body.
func isWordByte(c byte) bool { return isIdentStart(c) || isDigit(c) }
