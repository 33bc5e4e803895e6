package dsn

import (
	"slices"
	"strings"
)

// Quote writes v as a key=value DSN value: as it is when it needs no
// quotes, else in single quotes with backslash and quote escaped (an empty
// value is a pair of quotes).
func Quote(v string) string {
	if v != "" && !strings.ContainsAny(v, spaces+`'\`) {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// ValidKey reports whether key can be written in key=value form: it is not
// empty and holds no white space and no "=". Split gives only such keys for
// a key=value DSN; a URL's query parameters may decode to others.
func ValidKey(key string) bool {
	return key != "" && !strings.ContainsAny(key, spaces+"=")
}

// Render writes pairs as a key=value DSN, values quoted as Quote does, one
// space between pairs. Keys are written as they are: Split reads the result
// back to the same pairs when every key is a ValidKey.
func Render(pairs []Pair) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.Key)
		b.WriteByte('=')
		b.WriteString(Quote(p.Value))
	}
	return b.String()
}

// Lookup returns the value of the last pair with key, as libpq reads a DSN
// that sets a key twice, and whether there is one.
func Lookup(pairs []Pair, key string) (string, bool) {
	for i := len(pairs) - 1; i >= 0; i-- {
		if pairs[i].Key == key {
			return pairs[i].Value, true
		}
	}
	return "", false
}

// Set returns dsn with the setting key=value added, in dsn's own form: a
// URL (postgres://...) gains a query parameter, percent-encoded; a
// key=value string gains a pair, quoted when it must be. A key dsn already
// sets is set again, and the last setting wins when the DSN is read.
//
// A key=value dsn is kept as it is, except where appending would change
// its last value: after an empty unquoted value ("a=", as libpq skips the
// white space after "=") or a final backslash. Such a dsn is rewritten
// with Render first. A malformed dsn is kept, and stays malformed. A value
// holding a NUL byte cannot be written in a URL.
func Set(dsn, key, value string) string {
	if _, ok := urlScheme(dsn); ok {
		dsn = strings.TrimRight(dsn, spaces)
		// The first "?" starts the query: before it, "?" must be
		// percent-encoded.
		sep := "?"
		if _, query, ok := strings.Cut(dsn, "?"); ok {
			sep = "&"
			if query == "" || strings.HasSuffix(query, "&") {
				sep = ""
			}
		}
		return dsn + sep + percentEncode(key) + "=" + percentEncode(value)
	}
	setting := key + "=" + Quote(value)
	out := Join(dsn, setting)
	before, err := Split(dsn, nil)
	if err != nil {
		return out
	}
	if after, err := Split(out, nil); err != nil || len(after) != len(before)+1 || !slices.Equal(after[:len(before)], before) {
		return Join(Render(before), setting)
	}
	return out
}

// Join appends key=value settings to the key=value DSN base, one space
// between, leaving out those that are empty or only white space; nothing
// is trimmed, since trailing white space may be an escaped value's
// ("abc\ "). Later settings override earlier ones when the DSN is read.
// base must not be a URL: Set adds a setting to either form.
func Join(base string, settings ...string) string {
	var b strings.Builder
	for _, p := range append([]string{base}, settings...) {
		if strings.TrimLeft(p, spaces) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}

// percentEncode escapes every byte of s but the unreserved characters of
// RFC 3986.
func percentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
