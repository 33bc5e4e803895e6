package sqllex

import "strings"

// kind is the kind of a token.
type kind uint8

const (
	tokEOF         kind = iota
	tokWord             // identifier or keyword: foo, SELECT, foo$bar
	tokString           // '...', E'...', B'...', X'...', N'...', U&'...'
	tokQuotedIdent      // "..." or U&"..."
	tokDollar           // $tag$...$tag$
	tokSemicolon        // ;
	tokOpen             // ( or [
	tokClose            // ) or ]
	tokOther            // a parameter, a number, an operator character...
)

// token is one token of an SQL text. Its strings alias the text.
type token struct {
	kind kind
	text string // the whole token, as written
	body string // tokString and tokDollar: the text between the quotes, to the end of the text when unterminated
}

// lexer splits an SQL text into tokens, skipping white space and comments.
// Every token ends at or before the end of the text, and every call of next
// but the one returning tokEOF moves on by at least one byte.
type lexer struct {
	sql string
	pos int // where the next token or white space starts
	// backslash: a backslash escapes in '...' strings too, as
	// PostgreSQL reads them with standard_conforming_strings off.
	backslash bool
}

// next returns the next token, or a token of kind tokEOF at the end of the
// text.
func (l *lexer) next() token {
	s := l.sql
	i := skipSpace(s, l.pos)
	if i >= len(s) {
		l.pos = len(s)
		return token{}
	}
	switch c := s[i]; {
	case c == '\'':
		return l.str(i, i, l.backslash)
	case c == '"':
		return l.quotedIdent(i, i)
	case c == '$':
		if i+1 < len(s) && isDigit(s[i+1]) { // a parameter, $1
			j := i + 2
			for j < len(s) && (isDigit(s[j]) || s[j] == '_') {
				j++
			}
			return l.emit(tokOther, i, j)
		}
		if end, ok := dollarTag(s, i); ok {
			return l.dollar(i, end)
		}
		return l.emit(tokOther, i, i+1)
	case isIdentStart(c):
		// A lone prefix letter right before a quote starts a string or a
		// quoted identifier (in "name'x'" the name is an identifier).
		if i+1 < len(s) {
			switch lc, d := c|0x20, s[i+1]; {
			case d == '\'' && lc == 'e':
				return l.str(i, i+1, true)
			case d == '\'' && lc == 'n':
				return l.str(i, i+1, l.backslash)
			case d == '\'' && (lc == 'b' || lc == 'x'):
				return l.str(i, i+1, false)
			case d == '&' && lc == 'u' && i+2 < len(s) && s[i+2] == '\'':
				return l.str(i, i+2, false)
			case d == '&' && lc == 'u' && i+2 < len(s) && s[i+2] == '"':
				return l.quotedIdent(i, i+2)
			}
		}
		j := i + 1
		for j < len(s) && isIdentCont(s[j]) {
			j++
		}
		return l.emit(tokWord, i, j)
	case isDigit(c):
		// Only the digits: in "1e'x'" PostgreSQL before 15 reads 1 and an
		// escape string (15 and later reject the text).
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		return l.emit(tokOther, i, j)
	case c == ';':
		return l.emit(tokSemicolon, i, i+1)
	case c == '(' || c == '[':
		return l.emit(tokOpen, i, i+1)
	case c == ')' || c == ']':
		return l.emit(tokClose, i, i+1)
	default:
		return l.emit(tokOther, i, i+1)
	}
}

// emit returns the token s[start:end] and moves past it.
func (l *lexer) emit(k kind, start, end int) token {
	l.pos = end
	return token{kind: k, text: l.sql[start:end]}
}

// str reads a string constant that starts at start and whose opening quote
// is at q. In an escape string (E'...') a backslash escapes the next byte.
// A quote followed by white space holding a newline and another quote
// continues the same string, escapes included.
func (l *lexer) str(start, q int, escapes bool) token {
	s := l.sql
	i := q + 1
	for {
		for i < len(s) && s[i] != '\'' {
			if escapes && s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) { // unterminated
			l.pos = len(s)
			return token{kind: tokString, text: s[start:], body: s[q+1:]}
		}
		if i+1 < len(s) && s[i+1] == '\'' { // '' is a quote
			i += 2
			continue
		}
		if j, ok := continuation(s, i+1); ok {
			i = j + 1
			continue
		}
		l.pos = i + 1
		return token{kind: tokString, text: s[start : i+1], body: s[q+1 : i]}
	}
}

// continuation reports whether the string constant that ended right before
// s[i] continues: white space and -- comments holding at least one newline,
// then a quote. It returns the index of that quote.
func continuation(s string, i int) (int, bool) {
	newline := false
	for i < len(s) {
		switch c := s[i]; {
		case c == '\n' || c == '\r':
			newline = true
			i++
		case c == ' ' || c == '\t' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			i = skipLineComment(s, i)
		case c == '\'':
			return i, newline
		default:
			return i, false
		}
	}
	return i, false
}

// quotedIdent reads a quoted identifier that starts at start and whose
// opening double quote is at q.
func (l *lexer) quotedIdent(start, q int) token {
	s := l.sql
	i := q + 1
	for i < len(s) {
		if s[i] != '"' {
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '"' { // "" is a double quote
			i += 2
			continue
		}
		return l.emit(tokQuotedIdent, start, i+1)
	}
	return l.emit(tokQuotedIdent, start, len(s))
}

// dollarTag reports whether a dollar-quote tag ($$ or $tag$) starts at
// s[i] == '$', and returns the index after it.
func dollarTag(s string, i int) (int, bool) {
	j := i + 1
	if j < len(s) && isIdentStart(s[j]) {
		j++
		for j < len(s) && (isIdentStart(s[j]) || isDigit(s[j])) {
			j++
		}
	}
	if j < len(s) && s[j] == '$' {
		return j + 1, true
	}
	return 0, false
}

// dollar reads a dollar-quoted string whose opening tag is s[start:end]: it
// ends at the first repetition of the tag.
func (l *lexer) dollar(start, end int) token {
	s := l.sql
	tag := s[start:end]
	n := strings.Index(s[end:], tag)
	if n < 0 {
		l.pos = len(s)
		return token{kind: tokDollar, text: s[start:], body: s[end:]}
	}
	l.pos = end + n + len(tag)
	return token{kind: tokDollar, text: s[start:l.pos], body: s[end : end+n]}
}

// skipSpace returns the index of the first byte at or after i that is not
// white space or inside a comment.
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case isSpace(c):
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			i = skipLineComment(s, i)
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			i = skipBlockComment(s, i)
		default:
			return i
		}
	}
	return i
}

// skipLineComment returns the end of the -- comment at s[i:]: the next \n
// or \r, or the end of the text.
func skipLineComment(s string, i int) int {
	for i += 2; i < len(s) && s[i] != '\n' && s[i] != '\r'; i++ {
	}
	return i
}

// skipBlockComment returns the index after the /* */ comment at s[i:],
// which may hold nested comments, or the end of the text.
func skipBlockComment(s string, i int) int {
	depth := 1
	for i += 2; i+1 < len(s); {
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

// isSpace reports whether c is white space: space, \t, \n, \r, \f or \v.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentStart reports whether c may start an identifier or a dollar-quote
// tag: a letter, _ or any byte of a multibyte character.
func isIdentStart(c byte) bool {
	return c|0x20 >= 'a' && c|0x20 <= 'z' || c == '_' || c >= 0x80
}

// isIdentCont reports whether c may continue an identifier.
func isIdentCont(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// equalFold reports whether s equals lower, a lower-case ASCII word, in any
// ASCII case.
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
