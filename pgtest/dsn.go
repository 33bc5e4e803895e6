package pgtest

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// pair is one key=value setting of a DSN.
type pair struct{ key, value string }

// parseDSN reads a libpq DSN: key=value pairs (values optionally in single
// quotes, with \' and \\ escapes) or a postgres:// / postgresql:// URL.
func parseDSN(dsn string) ([]pair, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return parseURL(dsn)
	}
	var ps []pair
	s := dsn
	for {
		s = strings.TrimLeft(s, " \t\n\r\f\v")
		if s == "" {
			return ps, nil
		}
		i := strings.IndexAny(s, "= \t\n\r\f\v")
		if i == 0 {
			return nil, fmt.Errorf("pgtest: DSN: empty key at offset %d", len(dsn)-len(s))
		}
		if i < 0 {
			// Do not echo the text: it may be a misplaced password.
			return nil, fmt.Errorf("pgtest: DSN: missing \"=\" at offset %d", len(dsn)-len(s))
		}
		key := s[:i]
		s = strings.TrimLeft(s[i:], " \t\n\r\f\v")
		if !strings.HasPrefix(s, "=") {
			return nil, fmt.Errorf("pgtest: DSN: missing \"=\" after %q", key)
		}
		s = strings.TrimLeft(s[1:], " \t\n\r\f\v")
		var v strings.Builder
		if strings.HasPrefix(s, "'") {
			s = s[1:]
			closed := false
			for len(s) > 0 && !closed {
				c := s[0]
				switch {
				case c == '\\' && len(s) > 1:
					v.WriteByte(s[1])
					s = s[2:]
				case c == '\'':
					closed = true
					s = s[1:]
				default:
					v.WriteByte(c)
					s = s[1:]
				}
			}
			if !closed {
				return nil, fmt.Errorf("pgtest: DSN: unterminated quoted value for %q", key)
			}
		} else {
			for len(s) > 0 && !strings.ContainsRune(" \t\n\r\f\v", rune(s[0])) {
				if s[0] == '\\' && len(s) > 1 {
					v.WriteByte(s[1])
					s = s[2:]
					continue
				}
				v.WriteByte(s[0])
				s = s[1:]
			}
		}
		ps = append(ps, pair{key, v.String()})
	}
}

// parseURL turns a postgres:// URL into key=value pairs.
func parseURL(dsn string) ([]pair, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// Do not echo the URL: it may hold a password.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("pgtest: DSN: invalid URL: %v", err)
	}
	var ps []pair
	if h := u.Hostname(); h != "" {
		ps = append(ps, pair{"host", h})
	}
	if p := u.Port(); p != "" {
		ps = append(ps, pair{"port", p})
	}
	if u.User != nil {
		if n := u.User.Username(); n != "" {
			ps = append(ps, pair{"user", n})
		}
		if pw, ok := u.User.Password(); ok {
			ps = append(ps, pair{"password", pw})
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		ps = append(ps, pair{"dbname", db})
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, errors.New("pgtest: DSN: invalid URL query")
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		if k == "" || strings.ContainsAny(k, "= \t\n\r\f\v") {
			return nil, fmt.Errorf("pgtest: DSN: invalid URL parameter name %q", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range q[k] {
			ps = append(ps, pair{k, v})
		}
	}
	return ps, nil
}

// renderDSN writes pairs as a key=value DSN, quoting values as needed.
func renderDSN(ps []pair) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.key)
		b.WriteByte('=')
		b.WriteString(quoteDSNValue(p.value))
	}
	return b.String()
}

// quoteDSNValue quotes v for a key=value DSN when it is empty or holds
// spaces, quotes or backslashes.
func quoteDSNValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\f\v'\\") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// lookup returns the last value of key in ps (libpq: later keys win).
func lookup(ps []pair, key string) (string, bool) {
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].key == key {
			return ps[i].value, true
		}
	}
	return "", false
}

// joinDSN appends extra key=value pairs to base.
func joinDSN(base string, extra []string) string {
	parts := append([]string{base}, extra...)
	var b strings.Builder
	for _, p := range parts {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}
