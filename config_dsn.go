package pgline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file splits a DSN into key/value pairs. Two forms are accepted, as
// libpq reads them:
//
//	host=db1 port=5432 dbname='my db' password='it\'s'
//	postgres://user:pass@db1:5432,db2/mydb?sslmode=require
//
// Errors never quote the input: a malformed DSN may hold a password in any
// place, so messages name a known key or a byte offset instead.

// dsnPair is one key and its value, in the order the DSN gives them.
type dsnPair struct {
	key, value string
}

// errParsePrefix starts every error of ParseConfig.
const errParsePrefix = "pgline: cannot parse DSN: "

// parseError returns an error with the ParseConfig prefix. Its arguments
// must never be text taken from the DSN or the environment, except names of
// known keys.
func parseError(format string, args ...any) error {
	return errors.New(errParsePrefix + fmt.Sprintf(format, args...))
}

// splitDSN splits dsn in URL form or key=value form into pairs.
func splitDSN(dsn string) ([]dsnPair, error) {
	if _, ok := urlScheme(dsn); ok {
		return splitURL(dsn)
	}
	return splitKeyValue(dsn)
}

// isSpace reports whether c is white space as C's isspace sees it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// keyName names key in an error: quoted when it is a key pgline knows,
// otherwise by its byte offset (it may be a misplaced password).
func keyName(key string, offset int) string {
	if isKnownKey(key) {
		return strconv.Quote(key)
	}
	return fmt.Sprintf("at offset %d", offset)
}

// splitKeyValue parses the key=value form: keys are separated from their
// values by "=" with optional white space around it; a value is either
// single-quoted, with \' and \\ escapes, or runs to the next white space,
// with backslash escapes too. An empty DSN gives no pairs.
func splitKeyValue(s string) ([]dsnPair, error) {
	var pairs []dsnPair
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
			return nil, parseError("missing key before \"=\" at offset %d", start)
		}
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) || s[i] != '=' {
			return nil, parseError("missing \"=\" after key %s", keyName(key, start))
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		var b strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				i++
				if c == '\'' {
					closed = true
					break
				}
				if c == '\\' {
					if i == len(s) {
						break
					}
					c = s[i]
					i++
				}
				b.WriteByte(c)
			}
			if !closed {
				return nil, parseError("unterminated quoted value for key %s", keyName(key, start))
			}
		} else {
			for i < len(s) && !isSpace(s[i]) {
				c := s[i]
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
		}
		pairs = append(pairs, dsnPair{key, b.String()})
	}
}

// urlScheme returns the length of a leading "postgres://" or
// "postgresql://" (in any letter case), after leading white space.
func urlScheme(s string) (int, bool) {
	lead := len(s) - len(strings.TrimLeft(s, " \t\n\v\f\r"))
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
// ssl=true means sslmode=require, as in libpq.
func splitURL(s string) ([]dsnPair, error) {
	n, _ := urlScheme(s)
	rest := strings.TrimRight(s[n:], " \t\n\v\f\r")
	if strings.ContainsAny(rest, " \t\n\v\f\r") {
		// Most often key=value settings glued after a URL, which would
		// end up in the database name or the last parameter's value.
		return nil, parseError("a URL DSN cannot hold white space: give settings as query parameters (?key=value&...), not key=value pairs after the URL (pgline.SetDSNParam adds one to either form), and percent-encode spaces in names and passwords (%%20)")
	}
	authEnd := strings.IndexAny(rest, "/?")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, tail := rest[:authEnd], rest[authEnd:]

	var pairs []dsnPair
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		userinfo := auth[:at]
		auth = auth[at+1:]
		rawUser, rawPass, hasPass := strings.Cut(userinfo, ":")
		user, err := percentDecode(rawUser)
		if err != nil {
			return nil, parseError("invalid percent-encoding in the user name of the URL")
		}
		if user != "" {
			pairs = append(pairs, dsnPair{"user", user})
		}
		if hasPass {
			pass, err := percentDecode(rawPass)
			if err != nil {
				return nil, parseError("invalid percent-encoding in the password of the URL")
			}
			if pass != "" {
				pairs = append(pairs, dsnPair{"password", pass})
			}
		}
	}

	hosts, ports, err := splitURLHosts(auth)
	if err != nil {
		return nil, err
	}
	if len(hosts) > 1 || hosts[0] != "" {
		pairs = append(pairs, dsnPair{"host", strings.Join(hosts, ",")})
	}
	for _, p := range ports {
		if p != "" {
			pairs = append(pairs, dsnPair{"port", strings.Join(ports, ",")})
			break
		}
	}

	query := ""
	if strings.HasPrefix(tail, "/") {
		rawDB, q, _ := strings.Cut(tail[1:], "?")
		query = q
		db, err := percentDecode(rawDB)
		if err != nil {
			return nil, parseError("invalid percent-encoding in the database name of the URL")
		}
		if db != "" {
			pairs = append(pairs, dsnPair{"dbname", db})
		}
	} else if tail != "" {
		query = tail[1:] // tail starts with "?"
	}
	params, err := splitURLQuery(query)
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
				return nil, nil, parseError("missing \"]\" after an IPv6 address in the URL")
			}
			rawHost = auth[p+1 : p+end]
			if rawHost == "" {
				return nil, nil, parseError("empty IPv6 address in the URL")
			}
			p += end + 1
			if p < len(auth) && auth[p] != ':' && auth[p] != ',' {
				return nil, nil, parseError("unexpected character after an IPv6 address in the URL (at offset %d of the host list)", p)
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
			return nil, nil, parseError("invalid percent-encoding in a host of the URL")
		}
		port, err := percentDecode(rawPort)
		if err != nil {
			return nil, nil, parseError("invalid percent-encoding in a port of the URL")
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
func splitURLQuery(query string) ([]dsnPair, error) {
	var pairs []dsnPair
	offset := 0
	for query != "" {
		param, rest, more := strings.Cut(query, "&")
		rawKey, rawValue, ok := strings.Cut(param, "=")
		if !ok {
			return nil, parseError("URL query parameter at offset %d of the query has no \"=\"", offset)
		}
		key, err := percentDecode(rawKey)
		if err != nil {
			return nil, parseError("invalid percent-encoding in a URL query parameter name")
		}
		if key == "" {
			return nil, parseError("URL query parameter at offset %d of the query has an empty name", offset)
		}
		if strings.Contains(rawValue, "=") {
			return nil, parseError("extra \"=\" in URL query parameter %s (percent-encode it as %%3D)", keyName(key, offset))
		}
		value, err := percentDecode(rawValue)
		if err != nil {
			return nil, parseError("invalid percent-encoding in the value of URL query parameter %s", keyName(key, offset))
		}
		if key == "ssl" && value == "true" {
			key, value = "sslmode", "require"
		}
		pairs = append(pairs, dsnPair{key, value})
		offset += len(param) + 1
		query = rest
		if !more {
			break
		}
	}
	return pairs, nil
}

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

var errBadPercent = errors.New("invalid percent-encoding")

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
