package sqllex

import (
	"iter"
	"math"
)

// Param is a parameter placeholder of an SQL text: a positional parameter
// such as $1, or an @name placeholder, the named form that the driver
// rewrites to positional parameters before sending the text.
type Param struct {
	// Start and End delimit the placeholder: sql[Start:End] is "$1" or
	// "@name".
	Start, End int
	// Name is the name of an @name placeholder, without the @ (a
	// substring of the text); "" for a positional parameter.
	Name string
}

// Params returns an iterator over the parameter placeholders of sql, in
// order. Like Scan it sees the text as PostgreSQL's lexer does, so that
// nothing inside a string constant, a quoted identifier, a dollar-quoted
// body or a comment is a placeholder.
//
// An @name placeholder is an @ followed by a name, [A-Za-z_][A-Za-z0-9_]*
// (the name ends at the first other byte, $ included). The @ of an
// operator is not one: an @ followed by anything but a name (@>, @@ , @-@,
// @?), an @ that ends the operators @@, <@ or @-@ (tsv @@query, a <@b,
// @-@path), and an @ right after a word, a number or a parameter (a@b,
// 1@b), to which the $n that replaces it would be glued. An @ right after
// any other operator character starts a placeholder (@a+@b, id=@id),
// although PostgreSQL's lexer would read the two as one operator; so does
// a prefix @ (absolute value) written against a name (@x).
//
// Params accepts any text, never panics, and yields each placeholder's
// bounds within the text: Start < End <= len(sql), increasing.
func Params(sql string) iter.Seq[Param] {
	return func(yield func(Param) bool) {
		var (
			l       = lexer{sql: sql}
			prev    token // the token before t
			prevEnd int   // where prev ends
		)
		for {
			t := l.next()
			start := l.pos - len(t.text) // every token ends where the lexer stops
			switch {
			case t.kind == tokEOF:
				return
			case t.kind == tokOther && len(t.text) > 1 && t.text[0] == '$': // a positional parameter
				if !yield(Param{Start: start, End: l.pos}) {
					return
				}
			case t.text == "@":
				end := nameEnd(sql, start+1)
				if end == start+1 || glued(sql, start, prev, prevEnd == start) {
					break
				}
				// The name is read here ("@e'x'" is not a string), and
				// the placeholder is, for the next @, the $n it becomes.
				l.pos = end
				t = token{kind: tokOther, text: "$0"}
				if !yield(Param{Start: start, End: end, Name: sql[start+1 : end]}) {
					return
				}
			}
			prev, prevEnd = t, l.pos
		}
	}
}

// nameEnd returns the end of the placeholder name that starts at sql[i]:
// i when no name starts there.
func nameEnd(sql string, i int) int {
	if i >= len(sql) || !isNameByte(sql[i]) || isDigit(sql[i]) {
		return i
	}
	j := i + 1
	for j < len(sql) && isNameByte(sql[j]) {
		j++
	}
	return j
}

// isNameByte reports whether c may be part of a placeholder name: an ASCII
// letter, digit or underscore, or a byte of a non-ASCII character, as in
// PostgreSQL's identifiers (a name is never cut short inside a word).
func isNameByte(c byte) bool {
	return c|0x20 >= 'a' && c|0x20 <= 'z' || c == '_' || isDigit(c) || c >= 0x80
}

// glued reports whether the @ at sql[i] cannot start a placeholder
// because of what is right before it (prev, the token before it, if
// adjacent): it ends one of the operators @@, <@ and @-@, or it follows a
// word, a number, a parameter or a lone $, to which the $n that replaces it
// would be glued (a$1 is an identifier, $$1 starts a dollar quote).
func glued(sql string, i int, prev token, adjacent bool) bool {
	if !adjacent {
		return false
	}
	switch prev.kind {
	case tokWord:
		return true
	case tokOther:
		switch c := prev.text[len(prev.text)-1]; {
		case c == '@', c == '<', c == '$', isDigit(c):
			return true
		case c == '-':
			return i > 1 && sql[i-2] == '@'
		}
	}
	return false
}

// HighestParam returns the highest number n of the positional parameters
// $n of sql, as PostgreSQL's lexer reads them (see Params), when it is
// above limit; otherwise 0. A number too large to count is reported as
// math.MaxInt32. The text is lexed only when a $ followed by a number
// above limit appears in it at all (in a string or a comment too): for
// any other text HighestParam makes one pass over its bytes and
// allocates nothing.
func HighestParam(sql string, limit int) int {
	if rawHighestParam(sql) <= limit {
		return 0
	}
	highest := 0
	for p := range Params(sql) {
		if p.Name == "" {
			highest = max(highest, paramNumber(sql[p.Start+1:p.End]))
		}
	}
	if highest <= limit {
		return 0
	}
	return highest
}

// rawHighestParam returns the highest number after a $ anywhere in sql,
// whatever the $ is part of: a bound of HighestParam's answer.
func rawHighestParam(sql string) int {
	highest := 0
	for i := 0; i < len(sql); i++ {
		if sql[i] == '$' && i+1 < len(sql) && isDigit(sql[i+1]) {
			j := i + 1
			for j < len(sql) && (isDigit(sql[j]) || sql[j] == '_') {
				j++
			}
			highest = max(highest, paramNumber(sql[i+1:j]))
			i = j - 1
		}
	}
	return highest
}

// paramNumber reads the digits of a parameter's number, the underscores
// that PostgreSQL 16 allows between them skipped, saturating at
// math.MaxInt32.
func paramNumber(digits string) int {
	n := 0
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; isDigit(c) {
			if n > (math.MaxInt32-9)/10 {
				return math.MaxInt32
			}
			n = n*10 + int(c-'0')
		}
	}
	return n
}
