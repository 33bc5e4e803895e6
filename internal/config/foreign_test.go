package config

import (
	"strings"
	"testing"
)

// TestOtherDriversDSNsRefused: a DSN written for another driver or
// database is refused, naming what pgline takes and never the DSN's
// text (a MySQL DSN parsed as key=value would otherwise become one
// runtime parameter, its password sent to the server); another URL
// scheme is named.
func TestOtherDriversDSNsRefused(t *testing.T) {
	for _, tt := range []struct{ dsn, want string }{
		{"root:" + secret + "@tcp(127.0.0.1:3306)/shop?parseTime=true", "a key is not a setting name: pgline takes a postgres:// or postgresql:// URL, or key=value pairs"},
		{"mysql://root:" + secret + "@localhost:3306/shop", `a "mysql" URL: pgline takes a postgres:// or postgresql:// URL`},
		{"  jdbc:postgresql://h/db", `missing "=" after key at offset 2 (pgline takes a postgres:// or postgresql:// URL`},
		{"localhost:5432/app", `missing "=" after key at offset 0 (pgline takes`},
		{"sqlserver://sa:" + secret + "@h?database=x", `a "sqlserver" URL`},
		{"host=h 9lives=1", "a key is not a setting name"},
		{"host=h my.ext.level=1", "a key is not a setting name"},
		{"abcdefghijklmnopqrstuvwxyz://u:" + secret + "@h", "a URL of another scheme than postgres"},
	} {
		src, _ := testSource(t, nil)
		_, err := Parse(tt.dsn, src, testMaxConns)
		if err == nil || !strings.HasPrefix(err.Error(), errPrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q): %v, want an error containing %q", tt.dsn, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), secret[:6]) {
			t.Errorf("Parse(%q) error shows the password: %v", tt.dsn, err)
		}
	}
	for _, ok := range []string{"host=h search_path=s myext.level=3 work_mem=1MB x$y=1", "POSTGRESQL://h/db", " postgres://h"} {
		src, _ := testSource(t, nil)
		if _, err := Parse(ok, src, testMaxConns); err != nil {
			t.Errorf("Parse(%q): %v", ok, err)
		}
	}
}

// TestPgxKeysMapped: pgx's default_query_exec_mode and
// description_cache_capacity become pgline's statement_cache_mode and
// statement_cache_capacity; simple_protocol, pgxpool's keys without a
// counterpart, and a disagreement with pgline's own key are refused,
// naming pgline's key.
func TestPgxKeysMapped(t *testing.T) {
	for _, tt := range []struct {
		dsn, mode string
		capacity  int
	}{
		{"default_query_exec_mode=cache_statement", "prepare", DefaultCacheCapacity},
		{"default_query_exec_mode=cache_describe description_cache_capacity=64", "describe", 64},
		{"default_query_exec_mode=describe_exec", "none", DefaultCacheCapacity},
		{"default_query_exec_mode=exec", "none", DefaultCacheCapacity},
		{"default_query_exec_mode=cache_statement statement_cache_mode=prepare", "prepare", DefaultCacheCapacity},
		{"postgres://h?default_query_exec_mode=cache_describe", "describe", DefaultCacheCapacity},
	} {
		src, _ := testSource(t, nil)
		st, err := Parse(tt.dsn, src, testMaxConns)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.dsn, err)
			continue
		}
		if st.StatementCacheMode != tt.mode || st.StatementCacheCapacity != tt.capacity || len(st.RuntimeParams) != 0 {
			t.Errorf("Parse(%q): mode %q capacity %d params %v, want %q %d none", tt.dsn, st.StatementCacheMode, st.StatementCacheCapacity, st.RuntimeParams, tt.mode, tt.capacity)
		}
	}
	for _, tt := range []struct{ dsn, want string }{
		{"default_query_exec_mode=simple_protocol", "statement_cache_mode=describe"},
		{"default_query_exec_mode=bogus", "pgline's key is statement_cache_mode"},
		{"default_query_exec_mode=cache_statement statement_cache_mode=describe", "set statement_cache_mode only"},
		{"description_cache_capacity=5 statement_cache_capacity=6", "set statement_cache_capacity only"},
		{"pool_min_idle_conns=2", "pgline's nearest key is pool_min_conns"},
		{"pool_max_conn_lifetime_jitter=1m", "pgline's nearest key is pool_max_conn_lifetime"},
	} {
		src, _ := testSource(t, nil)
		_, err := Parse(tt.dsn, src, testMaxConns)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q): %v, want an error containing %q", tt.dsn, err, tt.want)
		}
	}
}
