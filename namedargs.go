package pgline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pgline/pgline/internal/sqllex"
)

// NamedArgs, passed as the only argument of Query, QueryRow, Exec (of a
// Conn, a Tx or a Pool) or Batch.Queue, fills @name placeholders instead of
// $1, $2, ...: the SQL's placeholders are rewritten to positional ones
// before it is sent, the same name to the same one, and the map's values
// become the arguments, in the order the names first appear.
//
// A name is a letter or underscore (non-ASCII letters too, as in
// PostgreSQL identifiers) followed by letters, digits and underscores,
// case-sensitive, and a name missing from
// the map is NULL. Nothing inside a string constant, a quoted identifier,
// a dollar-quoted body or a comment is a placeholder, and neither is the @
// of an operator (@>, <@, @@, @-@, an @ before anything but a name) nor an
// @ right after a word or a number (a@b), to which $n would be glued. The
// SQL may not also hold positional placeholders.
//
//	conn.QueryRow(ctx, "SELECT name FROM users WHERE id = @id", pgline.NamedArgs{"id": 7})
type NamedArgs map[string]any

// StrictNamedArgs is NamedArgs where every name of the SQL must be in the
// map and every key of the map must be used by the SQL: either mistake is
// an error, and the statement is not sent.
type StrictNamedArgs map[string]any

// isNamedArgs reports whether arg asks for the rewrite of @name
// placeholders: the one type check that calls without named arguments pay.
func isNamedArgs(arg any) bool {
	switch arg.(type) {
	case NamedArgs, StrictNamedArgs:
		return true
	}
	return false
}

// rewriteNamedArgs rewrites the @name placeholders of sql to $1, $2, ...
// and returns the arguments they stand for, taken from arg (NamedArgs or
// StrictNamedArgs, see isNamedArgs). The rest of the text is unchanged,
// byte for byte. Its errors are those of the arguments, found before
// anything is sent.
func rewriteNamedArgs(sql string, arg any) (string, []any, error) {
	var (
		named  map[string]any
		strict bool
	)
	switch a := arg.(type) {
	case NamedArgs:
		named = a
	case StrictNamedArgs:
		named, strict = a, true
	default:
		return "", nil, fmt.Errorf("pgline: %T is not named arguments", arg)
	}
	var (
		b     strings.Builder
		args  []any
		index map[string]int // name -> its $n
		last  int            // sql[:last] is in b
	)
	for p := range sqllex.Params(sql) {
		if p.Name == "" {
			return "", nil, fmt.Errorf("pgline: named arguments given, but the SQL holds the positional parameter %s", sql[p.Start:p.End])
		}
		n, ok := index[p.Name]
		if !ok {
			v, found := named[p.Name]
			if !found && strict {
				return "", nil, fmt.Errorf("pgline: StrictNamedArgs has no value for @%s", p.Name)
			}
			if index == nil {
				index = make(map[string]int, len(named))
				b.Grow(len(sql) + 8)
			}
			args = append(args, v)
			n = len(args)
			index[p.Name] = n
		}
		b.WriteString(sql[last:p.Start])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		last = p.End
	}
	if strict && len(index) < len(named) {
		var unused []string
		for k := range named {
			if _, ok := index[k]; !ok {
				unused = append(unused, k)
			}
		}
		slices.Sort(unused)
		return "", nil, fmt.Errorf("pgline: StrictNamedArgs key %q is not used by the SQL", unused[0])
	}
	if index == nil { // no placeholder
		return sql, nil, nil
	}
	b.WriteString(sql[last:])
	return b.String(), args, nil
}
