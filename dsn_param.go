package pgline

import "strings"

// SetDSNParam returns dsn with the setting key=value added, in dsn's own
// form: a URL (postgres://...) gains a query parameter, percent-encoded; a
// key=value string gains a pair, quoted when it must be. A key dsn already
// sets is set again, and the last setting wins, as libpq reads them. It
// is how to add a setting to a DSN from the environment, which may be in
// either form:
//
//	pgline.NewPool(ctx, pgline.SetDSNParam(os.Getenv("DATABASE_URL"), "pool_max_conns", "4"))
//
// Appending " key=value" to a URL does not work: ParseConfig refuses a URL
// holding white space.
func SetDSNParam(dsn, key, value string) string {
	if _, ok := urlScheme(dsn); ok {
		dsn = strings.TrimRight(dsn, " \t\n\v\f\r")
		sep := "?"
		switch {
		case strings.HasSuffix(dsn, "?") || strings.HasSuffix(dsn, "&"):
			sep = ""
		case strings.Contains(dsn, "?"):
			sep = "&"
		}
		return dsn + sep + percentEncode(key) + "=" + percentEncode(value)
	}
	// Key=value: trailing white space may be an escaped value's ("abc\ "),
	// so nothing is trimmed.
	if strings.TrimSpace(dsn) == "" {
		return key + "=" + quoteDSNValue(value)
	}
	return dsn + " " + key + "=" + quoteDSNValue(value)
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

// quoteDSNValue writes v as a key=value DSN value: as it is when it needs
// no quotes, else in single quotes with backslash and quote escaped.
func quoteDSNValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\v\f\r'\\") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}
