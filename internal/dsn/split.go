package dsn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Errors never quote the input: a malformed DSN may hold a password in any
// place, so messages name a key the caller declared known, or a byte
// offset, instead.

// Pair is one key and its value, in the order the DSN gives them.
type Pair struct {
	Key, Value string
}

// Split splits dsn, in URL form or key=value form, into pairs in the order
// the DSN gives them; a key may come more than once, and the last one wins
// when the pairs are read (see Lookup). An empty DSN gives no pairs and no
// error.
//
// known reports whether a key may be named in an error message; other keys
// are named by their byte offset, since they may be a misplaced password.
// A nil known names every key by offset. Errors hold no other text from
// dsn.
func Split(dsn string, known func(key string) bool) ([]Pair, error) {
	if _, ok := urlScheme(dsn); ok {
		return splitURL(dsn, known)
	}
	return splitKeyValue(dsn, known)
}

// syntaxError returns a splitting error. Its arguments must never be text
// taken from the DSN, except keys named by keyName.
func syntaxError(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// isSpace reports whether c is white space as C's isspace sees it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// spaces are the bytes isSpace accepts.
const spaces = " \t\n\v\f\r"

// keyName names key in an error: quoted when known says it may be,
// otherwise by its byte offset.
func keyName(key string, offset int, known func(string) bool) string {
	if known != nil && known(key) {
		return strconv.Quote(key)
	}
	return fmt.Sprintf("at offset %d", offset)
}

// splitKeyValue parses the key=value form as libpq does: keys are
// separated from their values by "=" with optional white space around it; a
// value is either single-quoted, with \' and \\ escapes, or runs to the next
// white space, with backslash escapes too. A backslash at the very end is
// dropped.
func splitKeyValue(s string, known func(string) bool) ([]Pair, error) {
	var pairs []Pair
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return pairs, nil
		}
		start := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' {
			i++
		}
		key := s[start:i]
		if key == "" {
			return nil, syntaxError("missing key before \"=\" at offset %d", start)
		}
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) || s[i] != '=' {
			return nil, syntaxError("missing \"=\" after key %s", keyName(key, start, known))
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		// A value is quoted, up to the closing quote, or runs to the next
		// white space; a backslash escapes the next byte in both.
		quoted := i < len(s) && s[i] == '\''
		if quoted {
			i++
		}
		var b strings.Builder
		closed := false
		for i < len(s) {
			c := s[i]
			if quoted && c == '\'' {
				i++
				closed = true
				break
			}
			if !quoted && isSpace(c) {
				break
			}
			i++
			if c == '\\' {
				if i == len(s) {
					break
				}
				c = s[i]
				i++
			}
			b.WriteByte(c)
		}
		if quoted && !closed {
			return nil, syntaxError("unterminated quoted value for key %s", keyName(key, start, known))
		}
		pairs = append(pairs, Pair{key, b.String()})
	}
}

// urlScheme returns the length of a leading "postgres://" or
// "postgresql://" (in any letter case), after leading white space.
func urlScheme(s string) (int, bool) {
	lead := len(s) - len(strings.TrimLeft(s, spaces))
	for _, p := range []string{"postgresql://", "postgres://"} {
		if len(s)-lead >= len(p) && strings.EqualFold(s[lead:lead+len(p)], p) {
			return lead + len(p), true
		}
	}
	return 0, false
}

// splitURL parses
//
//	postgres[ql]://[user[:password]@][host][:port][,host[:port]...][/dbname][?key=value&...]
//
// Every part is percent-decoded; an IPv6 address is written in brackets.
// The user information ends at the last "@" before the first "/" or "?",
// so "/" and "?" in a password must be percent-encoded. A query parameter
// ssl=true means sslmode=require, as in libpq. White space is refused
// inside the URL (it may surround it).
func splitURL(s string, known func(string) bool) ([]Pair, error) {
	n, _ := urlScheme(s)
	rest := strings.TrimRight(s[n:], spaces)
	if strings.ContainsAny(rest, spaces) {
		// Most often key=value settings glued after a URL, which would
		// end up in the database name or the last parameter's value.
		return nil, syntaxError("a URL DSN cannot hold white space: give settings as query parameters (?key=value&...), not key=value pairs after the URL (pgline.SetDSNParam adds one to either form), and percent-encode spaces in names and passwords (%%20)")
	}
	authEnd := strings.IndexAny(rest, "/?")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, tail := rest[:authEnd], rest[authEnd:]

	var pairs []Pair
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		userinfo := auth[:at]
		auth = auth[at+1:]
		rawUser, rawPass, hasPass := strings.Cut(userinfo, ":")
		user, err := percentDecode(rawUser)
		if err != nil {
			return nil, syntaxError("invalid percent-encoding in the user name of the URL")
		}
		if user != "" {
			pairs = append(pairs, Pair{"user", user})
		}
		if hasPass {
			pass, err := percentDecode(rawPass)
			if err != nil {
				return nil, syntaxError("invalid percent-encoding in the password of the URL")
			}
			if pass != "" {
				pairs = append(pairs, Pair{"password", pass})
			}
		}
	}

	hosts, ports, err := splitURLHosts(auth)
	if err != nil {
		return nil, err
	}
	if len(hosts) > 1 || hosts[0] != "" {
		pairs = append(pairs, Pair{"host", strings.Join(hosts, ",")})
	}
	for _, p := range ports {
		if p != "" {
			pairs = append(pairs, Pair{"port", strings.Join(ports, ",")})
			break
		}
	}

	query := ""
	if strings.HasPrefix(tail, "/") {
		rawDB, q, _ := strings.Cut(tail[1:], "?")
		query = q
		db, err := percentDecode(rawDB)
		if err != nil {
			return nil, syntaxError("invalid percent-encoding in the database name of the URL")
		}
		if db != "" {
			pairs = append(pairs, Pair{"dbname", db})
		}
	} else if tail != "" {
		query = tail[1:] // tail starts with "?"
	}
	params, err := splitURLQuery(query, known)
	if err != nil {
		return nil, err
	}
	return append(pairs, params...), nil
}

// splitURLHosts splits the host part of a URL into decoded host names and
// ports, one entry each per comma-separated host (entries may be empty).
func splitURLHosts(auth string) (hosts, ports []string, err error) {
	p := 0
	for {
		var rawHost string
		if p < len(auth) && auth[p] == '[' {
			end := strings.IndexByte(auth[p:], ']')
			if end < 0 {
				return nil, nil, syntaxError("missing \"]\" after an IPv6 address in the URL")
			}
			rawHost = auth[p+1 : p+end]
			if rawHost == "" {
				return nil, nil, syntaxError("empty IPv6 address in the URL")
			}
			p += end + 1
			if p < len(auth) && auth[p] != ':' && auth[p] != ',' {
				return nil, nil, syntaxError("unexpected character after an IPv6 address in the URL (at offset %d of the host list)", p)
			}
		} else {
			start := p
			for p < len(auth) && auth[p] != ':' && auth[p] != ',' {
				p++
			}
			rawHost = auth[start:p]
		}
		rawPort := ""
		if p < len(auth) && auth[p] == ':' {
			p++
			start := p
			for p < len(auth) && auth[p] != ',' {
				p++
			}
			rawPort = auth[start:p]
		}
		host, err := percentDecode(rawHost)
		if err != nil {
			return nil, nil, syntaxError("invalid percent-encoding in a host of the URL")
		}
		port, err := percentDecode(rawPort)
		if err != nil {
			return nil, nil, syntaxError("invalid percent-encoding in a port of the URL")
		}
		hosts = append(hosts, host)
		ports = append(ports, port)
		if p == len(auth) {
			return hosts, ports, nil
		}
		p++ // skip ","
	}
}

// splitURLQuery parses key=value&key=value. An empty query, or a trailing
// "&", gives no pair; a parameter without "=" or with two is an error.
func splitURLQuery(query string, known func(string) bool) ([]Pair, error) {
	var pairs []Pair
	offset := 0
	for query != "" {
		param, rest, more := strings.Cut(query, "&")
		rawKey, rawValue, ok := strings.Cut(param, "=")
		if !ok {
			return nil, syntaxError("URL query parameter at offset %d of the query has no \"=\"", offset)
		}
		key, err := percentDecode(rawKey)
		if err != nil {
			return nil, syntaxError("invalid percent-encoding in a URL query parameter name")
		}
		if key == "" {
			return nil, syntaxError("URL query parameter at offset %d of the query has an empty name", offset)
		}
		if strings.Contains(rawValue, "=") {
			return nil, syntaxError("extra \"=\" in URL query parameter %s (percent-encode it as %%3D)", keyName(key, offset, known))
		}
		value, err := percentDecode(rawValue)
		if err != nil {
			return nil, syntaxError("invalid percent-encoding in the value of URL query parameter %s", keyName(key, offset, known))
		}
		if key == "ssl" && value == "true" {
			key, value = "sslmode", "require"
		}
		pairs = append(pairs, Pair{key, value})
		offset += len(param) + 1
		query = rest
		if !more {
			break
		}
	}
	return pairs, nil
}

// errBadPercent is percentDecode's only error; callers replace it with one
// that says where.
var errBadPercent = errors.New("invalid percent-encoding")

// percentDecode decodes %XX sequences. A "%" not followed by two hex
// digits, and %00, are errors; "+" stays "+".
func percentDecode(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errBadPercent
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 || hi|lo == 0 {
			return "", errBadPercent
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
