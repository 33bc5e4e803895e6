package otelpgline

import "strings"

// This file reads SQL text the little that the spans need: the operation
// name, whether a COPY goes to the client, whether a statement has a
// RETURNING clause, and the text with its literals replaced by "?". One
// lexer, scanning PostgreSQL's lexical rules (comments, '' strings with
// their E, B, X, N and U& prefixes, dollar quotes, quoted identifiers,
// numbers, $n parameters), serves all of them; it never fails: what it
// does not know is passed through as punctuation.

// tokKind is the kind of a token.
type tokKind uint8

const (
	tokSpace  tokKind = iota // white space or a comment
	tokWord                  // key word or identifier
	tokQuoted                // "quoted identifier", U&"quoted identifier"
	tokString                // 'string', E'…', B'…', X'…', N'…', U&'…', $tag$…$tag$
	tokNumber                // 42, 4.2e1, .5, 0x2A, 1_000
	tokParam                 // $1
	tokOpen                  // (
	tokClose                 // )
	tokSemi                  // ;
	tokOther                 // anything else, one byte at a time
)

// lexer splits SQL text into tokens.
type lexer struct {
	s   string
	pos int
}

// next returns the next token, and false at the end of the text.
func (l *lexer) next() (tokKind, string, bool) {
	s, start := l.s, l.pos
	if start >= len(s) {
		return 0, "", false
	}
	kind := tokOther
	i := start + 1
	switch c := s[start]; {
	case isSpace(c):
		kind = tokSpace
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	case c == '-' && i < len(s) && s[i] == '-':
		kind = tokSpace
		for i < len(s) && s[i] != '\n' {
			i++
		}
	case c == '/' && i < len(s) && s[i] == '*':
		kind, i = tokSpace, blockCommentEnd(s, start)
	case c == '\'':
		kind, i = tokString, quotedEnd(s, i, '\'', false)
	case c == '"':
		kind, i = tokQuoted, quotedEnd(s, i, '"', false)
	case c == '$':
		if i < len(s) && isDigit(s[i]) {
			kind = tokParam
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		} else if end, ok := dollarQuoteEnd(s, start); ok {
			kind, i = tokString, end
		}
	case isDigit(c) || c == '.' && i < len(s) && isDigit(s[i]):
		kind, i = tokNumber, numberEnd(s, start)
	case isIdentStart(c):
		kind = tokWord
		for i < len(s) && isIdentPart(s[i]) {
			i++
		}
		// A one-letter prefix glued to a quote makes a string: E'…' (with
		// backslash escapes), B'…', X'…', N'…'; U& a string or an
		// identifier with Unicode escapes.
		if i-start == 1 && i < len(s) {
			switch {
			case s[i] == '\'' && strings.IndexByte("eEbBxXnN", c) >= 0:
				kind, i = tokString, quotedEnd(s, i+1, '\'', c == 'e' || c == 'E')
			case (c == 'u' || c == 'U') && i+1 < len(s) && s[i] == '&' && s[i+1] == '\'':
				kind, i = tokString, quotedEnd(s, i+2, '\'', false)
			case (c == 'u' || c == 'U') && i+1 < len(s) && s[i] == '&' && s[i+1] == '"':
				kind, i = tokQuoted, quotedEnd(s, i+2, '"', false)
			}
		}
	case c == '(':
		kind = tokOpen
	case c == ')':
		kind = tokClose
	case c == ';':
		kind = tokSemi
	}
	l.pos = i
	return kind, s[start:i], true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isIdentStart reports whether c starts a key word or identifier (any byte
// of a multi-byte UTF-8 character does).
func isIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// quotedEnd returns the end of a quoted token whose body starts at i: a
// doubled quote stands for itself, and with backslash a backslash escapes
// the next byte. An unterminated token runs to the end of s.
func quotedEnd(s string, i int, quote byte, backslash bool) int {
	for i < len(s) {
		switch s[i] {
		case '\\':
			if backslash {
				i++
			}
		case quote:
			if i+1 < len(s) && s[i+1] == quote {
				i++
			} else {
				return i + 1
			}
		}
		i++
	}
	return len(s)
}

// blockCommentEnd returns the end of the /* comment */ at start; such
// comments nest.
func blockCommentEnd(s string, start int) int {
	depth := 0
	for i := start; i+1 < len(s); {
		switch {
		case s[i] == '/' && s[i+1] == '*':
			depth++
			i += 2
		case s[i] == '*' && s[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return len(s)
}

// dollarQuoteEnd returns the end of the $tag$string$tag$ at start, and
// false when no dollar quote starts there.
func dollarQuoteEnd(s string, start int) (int, bool) {
	i := start + 1
	for i < len(s) && s[i] != '$' {
		if !isIdentPart(s[i]) {
			return 0, false
		}
		i++
	}
	if i >= len(s) {
		return 0, false
	}
	delim := s[start : i+1]
	end := strings.Index(s[i+1:], delim)
	if end < 0 {
		return len(s), true
	}
	return i + 1 + end + len(delim), true
}

// numberEnd returns the end of the number at start: digits, '_', '.',
// letters (hexadecimal, octal and binary forms, the exponent's e) and an
// exponent's sign.
func numberEnd(s string, start int) int {
	radix := len(s) > start+1 && s[start] == '0' && strings.IndexByte("xXoObB", s[start+1]) >= 0
	i := start
	for i < len(s) {
		c := s[i]
		switch {
		case isDigit(c) || c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case (c == '+' || c == '-') && !radix && (s[i-1] == 'e' || s[i-1] == 'E'):
		default:
			return i
		}
		i++
	}
	return i
}

// sanitize returns sql with each string and number literal replaced by
// "?", and sql itself when it has none. Comments, identifiers and $n
// parameters stay.
func sanitize(sql string) string {
	var b strings.Builder
	l := lexer{s: sql}
	done := 0 // sql[:done] is in b or had no literal
	for {
		kind, tok, ok := l.next()
		if !ok {
			break
		}
		if kind != tokString && kind != tokNumber {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(sql))
		}
		b.WriteString(sql[done : l.pos-len(tok)])
		b.WriteByte('?')
		done = l.pos
	}
	if done == 0 {
		return sql
	}
	b.WriteString(sql[done:])
	return b.String()
}

// sqlInfo is what the spans use of a statement's text.
type sqlInfo struct {
	// op is the statement's command as written ("SELECT", "insert"), or
	// "" when the text holds several statements or starts with no
	// command that PostgreSQL knows.
	op        string
	copyTo    bool // a COPY … TO (rows go to the client)
	returning bool // a RETURNING clause outside parentheses
	into      bool // a SELECT … INTO new_table (rows go to a table)
	multi     bool // more than one statement
}

// analyze reads sql's command: its first key word, or for WITH the
// command after the common table expressions.
func analyze(sql string) sqlInfo {
	var info sqlInfo
	l := lexer{s: sql}
	depth := 0
	ended := false // a ';' closed a statement
	first, with := "", false
	copyDir := false // COPY's TO or FROM was seen
	for {
		kind, tok, ok := l.next()
		if !ok {
			break
		}
		if kind == tokSpace {
			continue
		}
		if ended {
			if kind != tokSemi {
				info.multi = true
				break
			}
			continue
		}
		switch kind {
		case tokOpen:
			depth++
		case tokClose:
			depth--
		case tokSemi:
			if depth <= 0 {
				ended = true
			}
		case tokWord:
			switch {
			case first == "":
				first = tok
				with = strings.EqualFold(tok, "WITH")
				if !with {
					info.op = tok
				}
			case depth != 0:
			case with && info.op == "" && isMainCommand(tok):
				info.op = tok
			case strings.EqualFold(tok, "RETURNING"):
				info.returning = true
			case strings.EqualFold(tok, "INTO") && strings.EqualFold(info.op, "SELECT"):
				info.into = true
			case !copyDir && strings.EqualFold(info.op, "COPY") && (strings.EqualFold(tok, "TO") || strings.EqualFold(tok, "FROM")):
				copyDir = true
				info.copyTo = strings.EqualFold(tok, "TO")
			}
		}
	}
	if info.multi || !isCommand(info.op) {
		info.op = ""
	}
	return info
}

// isMainCommand reports whether word is a command that can follow a WITH
// clause.
func isMainCommand(word string) bool {
	for _, c := range [...]string{"SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "VALUES", "TABLE"} {
		if strings.EqualFold(word, c) {
			return true
		}
	}
	return false
}

// commands are the key words that start a PostgreSQL statement (WITH
// aside). Operation names are taken only from this list, which keeps them
// few.
var commands = [...]string{
	"ABORT", "ALTER", "ANALYZE", "ANALYSE", "BEGIN", "CALL", "CHECKPOINT", "CLOSE", "CLUSTER",
	"COMMENT", "COMMIT", "COPY", "CREATE", "DEALLOCATE", "DECLARE", "DELETE", "DISCARD",
	"DO", "DROP", "END", "EXECUTE", "EXPLAIN", "FETCH", "GRANT", "IMPORT", "INSERT",
	"LISTEN", "LOAD", "LOCK", "MERGE", "MOVE", "NOTIFY", "PREPARE", "REASSIGN", "REFRESH",
	"REINDEX", "RELEASE", "RESET", "REVOKE", "ROLLBACK", "SAVEPOINT", "SECURITY", "SELECT",
	"SET", "SHOW", "START", "TABLE", "TRUNCATE", "UNLISTEN", "UPDATE", "VACUUM", "VALUES",
}

// isCommand reports whether word is one of commands, in any case.
func isCommand(word string) bool {
	if word == "" {
		return false
	}
	for _, c := range commands {
		if strings.EqualFold(word, c) {
			return true
		}
	}
	return false
}
