package config

import (
	"strings"
)

// A DSN written for another driver or database is refused with an error
// that says what pgline takes, never connected with: a MySQL DSN such as
// "root:secret@tcp(127.0.0.1:3306)/shop?parseTime=true" would otherwise
// parse as one key=value pair, a runtime parameter sent (with its
// password) to whatever PostgreSQL answers on localhost. pgx's own keys
// map to pgline's, or are refused naming pgline's key.

// accepted says what a DSN may be, for the errors below.
const accepted = "pgline takes a postgres:// or postgresql:// URL, or key=value pairs such as host=db dbname=app"

// checkScheme refuses a URL of another scheme than postgres or
// postgresql. The scheme is named when it looks like one (letters,
// digits, +, - and ., at most 20 bytes): it cannot hold a password then.
func checkScheme(conninfo string) error {
	s := strings.TrimLeft(conninfo, " \t\n\v\f\r")
	i := strings.Index(s, "://")
	if i <= 0 {
		return nil
	}
	scheme := s[:i]
	for j := 0; j < len(scheme); j++ {
		c := scheme[j]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return nil // not a scheme: the key=value parser judges it
		}
	}
	if lower := strings.ToLower(scheme); lower == "postgres" || lower == "postgresql" {
		return nil
	}
	if len(scheme) > 20 {
		return parseError("a URL of another scheme than postgres: %s", accepted)
	}
	return parseError("a %q URL: %s", scheme, accepted)
}

// isSettingName reports whether key, unknown to pgline, can be a runtime
// parameter's name: letters, digits, _ and $, not starting with a digit
// or $, with at most one dot (an extension's setting, "myext.level").
func isSettingName(key string) bool {
	if key == "" {
		return false
	}
	dots := 0
	start := true
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		case '0' <= c && c <= '9', c == '$':
			if start {
				return false
			}
		case c == '.':
			dots++
			if start || dots > 1 || i == len(key)-1 {
				return false
			}
			start = true
			continue
		default:
			return false
		}
		start = false
	}
	return true
}

// pgxExecModes maps pgx's default_query_exec_mode to pgline's
// statement_cache_mode.
var pgxExecModes = map[string]string{
	"cache_statement": "prepare",
	"cache_describe":  "describe",
	"describe_exec":   "none",
	"exec":            "none",
}

// fromPgx maps pgx's keys to pgline's: default_query_exec_mode to
// statement_cache_mode (simple_protocol has no counterpart: pgline sends
// arguments with the extended protocol, which PgBouncer takes too), and
// description_cache_capacity to statement_cache_capacity (pgline has one
// cache for both); a key of pgline's set as well wins only when it says
// the same. pgxpool's keys pgline has no counterpart for are refused.
func fromPgx(s settings) error {
	if v, ok := s["default_query_exec_mode"]; ok {
		mode, known := pgxExecModes[strings.TrimSpace(v.value)]
		switch {
		case strings.TrimSpace(v.value) == "simple_protocol":
			return parseError("default_query_exec_mode=simple_protocol (pgx's) has no pgline counterpart: pgline sends arguments with the extended protocol, which transaction poolers take too; use statement_cache_mode=describe (or auto, the default)")
		case !known:
			return s.invalidValue("default_query_exec_mode", "pgx's key: must be one of cache_statement, cache_describe, describe_exec, exec (pgline's key is statement_cache_mode)")
		}
		if err := mapKey(s, "default_query_exec_mode", "statement_cache_mode", mode); err != nil {
			return err
		}
	}
	if v, ok := s["description_cache_capacity"]; ok {
		if err := mapKey(s, "description_cache_capacity", "statement_cache_capacity", v.value); err != nil {
			return err
		}
	}
	for key, ours := range map[string]string{
		"pool_min_idle_conns":           "pool_min_conns",
		"pool_max_conn_lifetime_jitter": "pool_max_conn_lifetime",
	} {
		if _, ok := s[key]; ok {
			return parseError("%s is pgxpool's and has no pgline counterpart (pgline's nearest key is %s)", key, ours)
		}
	}
	return nil
}

// mapKey sets ours to value for pgx's key theirs, unless ours is set to
// another value, which is refused.
func mapKey(s settings, theirs, ours, value string) error {
	if v, ok := s[ours]; ok && strings.TrimSpace(v.value) != value {
		return parseError("%s (pgx's) and %s (pgline's) disagree: set %s only", theirs, ours, ours)
	}
	s[ours] = setting{value: value, origin: s[theirs].origin}
	return nil
}
