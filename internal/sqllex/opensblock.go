package sqllex

import "strings"

// OpensBlock reports Scan(sql).OpensBlock: whether sql leaves the session
// in a transaction block it opened. It is meant for every statement of a
// hot path: it reads only the first word of a text of one statement (no
// semicolon but trailing ones) and scans the whole text otherwise. A
// text whose first word is not BEGIN or START, with nothing but white
// space after its first semicolon, opens no block (no statement but the
// first starts with a keyword); anything else (a comment or a
// parenthesis first, more statements) is read by Scan.
func OpensBlock(sql string) bool {
	i := 0
	for i < len(sql) && isSpace(sql[i]) {
		i++
	}
	start := i
	for i < len(sql) && (sql[i]|0x20 >= 'a' && sql[i]|0x20 <= 'z') {
		i++
	}
	word := sql[start:i]
	switch {
	case word == "", i < len(sql) && isIdentCont(sql[i]), equalFold(word, "begin"), equalFold(word, "start"):
		// Not a plain ASCII word first (a comment, a parenthesis, an
		// identifier with digits or _), or BEGIN or START.
		return Scan(sql).OpensBlock
	}
	semi := strings.IndexByte(sql, ';')
	if semi < 0 {
		return false
	}
	for _, c := range []byte(sql[semi+1:]) {
		if !isSpace(c) && c != ';' {
			return Scan(sql).OpensBlock
		}
	}
	return false
}
