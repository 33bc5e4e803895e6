package config

import (
	"strings"
	"testing"
)

// TestSplitDSNErrors: the splitter's errors (package dsn tests them) carry
// Parse's prefix and name the keys Parse knows, pgline's own among them,
// and no other.
func TestSplitDSNErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"host", `missing "=" after key "host"`},
		{"pool_max_conns 4", `missing "=" after key "pool_max_conns"`},
		{"statement_cache_mode='x", `unterminated quoted value for key "statement_cache_mode"`},
		{"search_path 4", `missing "=" after key at offset 0`},
		{"postgres://h?sslmode=%zz", `invalid percent-encoding in the value of URL query parameter "sslmode"`},
		{"postgres://h?work_mem=%zz", "invalid percent-encoding in the value of URL query parameter at offset 0"},
		{"postgres://h/db pool_max_conns=4", "query parameters"},
	}
	for _, tt := range tests {
		_, err := splitDSN(tt.in)
		if err == nil || !strings.HasPrefix(err.Error(), errPrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("splitDSN(%q) error %v, want the prefix and %q", tt.in, err, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		dsn  string
		env  map[string]string
		want string
	}{
		{"host", nil, `missing "="`},
		{"port=0", nil, "invalid port: must be a number from 1 to 65535"},
		{"port=65536", nil, "invalid port"},
		{"port=abc", nil, "invalid port"},
		{"port=-1", nil, "invalid port"},
		{"", map[string]string{"PGPORT": "x"}, "invalid port (from PGPORT)"},
		{"host=a,b,c port=1,2", nil, "2 ports for 3 hosts"},
		{"postgres://a:1,b:2,c:3?port=1,2", nil, "2 ports for 3 hosts"},
		{"host=a,b hostaddr=192.0.2.1", nil, "2 host names but 1 hostaddr values"},
		{"hostaddr=db.example.com", nil, "invalid hostaddr: must be a numeric IPv4 or IPv6 address"},
		{"connect_timeout=abc", nil, "invalid connect_timeout"},
		{"keepalives=yes", nil, "invalid keepalives: must be a whole number"},
		{"keepalives_idle=1.5", nil, "invalid keepalives_idle: must be a whole number, at most 86400"},
		{"keepalives_interval=99999999", nil, "invalid keepalives_interval"},
		{"keepalives_count=x", nil, "invalid keepalives_count"},
		{"tcp_user_timeout=2s", nil, "invalid tcp_user_timeout"},
		{"connect_timeout=1.5", nil, "invalid connect_timeout"},
		{"connect_timeout=99999999999999999999", nil, "invalid connect_timeout"},
		{"sslmode=bogus", nil, `invalid sslmode value: "bogus": must be one of disable, allow, prefer, require, verify-ca, verify-full`},
		{"", map[string]string{"PGSSLMODE": "bogus"}, `invalid sslmode value: "bogus" (from PGSSLMODE): must be one of disable, allow,`},
		{"sslrootcert=system sslmode=require", nil, "sslrootcert=system requires sslmode verify-full"},
		{"sslrootcert=system", map[string]string{"PGSSLMODE": "verify-ca"}, "sslrootcert=system requires sslmode verify-full"},
		{"sslnegotiation=bogus", nil, `invalid sslnegotiation value: "bogus": must be one of postgres, direct`},
		{"sslsni=maybe", nil, `invalid sslsni value: "maybe": must be 1 or 0`},
		{"channel_binding=always", nil, `invalid channel_binding value: "always": must be one of disable, prefer, require`},
		{"target_session_attrs=master", nil, `invalid target_session_attrs value: "master": must be one of any, read-write,`},
		{"load_balance_hosts=yes", nil, `invalid load_balance_hosts value: "yes": must be one of disable, random`},
		{"require_auth=kerberos", nil, `invalid require_auth value: "kerberos": methods must be among`},
		{"require_auth=md5,!password", nil, `invalid require_auth value: "md5,!password": negated (!) and non-negated methods cannot be mixed`},
		{"require_auth=!md5,password", nil, "cannot be mixed"},
		{"require_auth=md5,md5", nil, "more than once"},
		{"require_auth=md5,", nil, "methods must be among"},
		{"statement_cache_mode=always", nil, `invalid statement_cache_mode value: "always": must be one of auto, prepare, describe, none`},
		{"pipeline_sync=sometimes", nil, `invalid pipeline_sync value: "sometimes": must be one of shared, each`},
		{"cancel_timeout=10", nil, "invalid cancel_timeout"},
		{"cancel_grace=-1ms", nil, "invalid cancel_grace"},
		{"statement_cache_capacity=-1", nil, "invalid statement_cache_capacity"},
		{"pool_max_conns=0", nil, "invalid pool_max_conns"},
		{"pool_min_conns=x", nil, "invalid pool_min_conns"},
		{"default_query_exec_mode=bogus", nil, `invalid default_query_exec_mode value: "bogus": pgx's key: must be one of cache_statement,`},
		{"pool_max_conns=2 pool_min_conns=3", nil, "must not exceed pool_max_conns"},
		{"pool_min_conns=5", nil, "invalid pool_min_conns: must not exceed pool_max_conns"}, // testMaxConns, the default, is 4
		{"pool_max_conn_lifetime=10", nil, "invalid pool_max_conn_lifetime"},
		{"pool_max_conn_idle_time=-1s", nil, "invalid pool_max_conn_idle_time"},
		{"pool_health_check_period=soon", nil, "invalid pool_health_check_period"},
		{"pool_max_pipeline=0", nil, "invalid pool_max_pipeline"},
		{"read_buffer_size=10", nil, "invalid read_buffer_size"},
		// Checks pgline cannot make are refused, not ignored (libpq would
		// refuse to connect where pgline would).
		{"gssencmode=require", nil, "invalid gssencmode: require is not supported"},
		{"gssencmode=maybe", nil, `invalid gssencmode value: "maybe": must be one of disable, prefer, require`},
		{"requirepeer=postgres", nil, "invalid requirepeer"},
		{"sslcrl=/crl.pem", nil, "invalid sslcrl"},
		{"sslcrldir=/crls", nil, "invalid sslcrldir"},
		{"sslcertmode=require", nil, "invalid sslcertmode: require is not supported"},
		{"sslcertmode=maybe", nil, `invalid sslcertmode value: "maybe": must be one of disable, allow, require`},
		{"ssl_min_protocol_version=SSLv3", nil, `invalid ssl_min_protocol_version value: "SSLv3": must be one of TLSv1, TLSv1.1, TLSv1.2, TLSv1.3`},
		{"ssl_max_protocol_version=TLSv9", nil, `invalid ssl_max_protocol_version value: "TLSv9": must be one of`},
		{"ssl_min_protocol_version=TLSv1.3 ssl_max_protocol_version=TLSv1.2", nil, "must not be below"},
		{"min_protocol_version=3.1", nil, `invalid min_protocol_version value: "3.1": must be one of 3.0, 3.2, latest`},
		{"", map[string]string{"PGMINPROTOCOLVERSION": "3"}, `invalid min_protocol_version value: "3" (from PGMINPROTOCOLVERSION): must be one of 3.0, 3.2, latest`},
		{"max_protocol_version=4.0", nil, `invalid max_protocol_version value: "4.0": must be one of 3.0, 3.2, latest`},
		{"", map[string]string{"PGMAXPROTOCOLVERSION": "30000"}, `invalid max_protocol_version value: "30000" (from PGMAXPROTOCOLVERSION)`},
		{"min_protocol_version=3.2 max_protocol_version=3.0", nil, "invalid max_protocol_version: must not be below min_protocol_version"},
		{"min_protocol_version=latest", map[string]string{"PGMAXPROTOCOLVERSION": "3.0"}, "invalid max_protocol_version (from PGMAXPROTOCOLVERSION): must not be below min_protocol_version"},
		{"", map[string]string{"PGREQUIREPEER": "postgres"}, "invalid requirepeer"},
		{"max_message_size=4294967296", nil, "invalid max_message_size"},
		{"database=x", nil, `unknown key "database"`},
		{"_pq_.x=1", nil, "protocol options"},
		{"application_name='a\x00b'", nil, "invalid application_name: contains a NUL byte"},
		{"search_path='a\x00b'", nil, "runtime parameter contains a NUL byte"},
		{"'a\x00b'=1", nil, "parameter name contains a NUL byte"},
		{"postgres://h?x=%zz", nil, "invalid percent-encoding"},
		{"service=nope", nil, "service named by service or PGSERVICE is not defined"},
	}
	for _, tt := range tests {
		src, _ := testSource(t, tt.env)
		c, err := Parse(tt.dsn, src, testMaxConns)
		if err == nil {
			t.Errorf("Parse(%q) = %+v, want error %q", tt.dsn, c, tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), errPrefix) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error %q, want it to contain %q", tt.dsn, err, tt.want)
		}
	}
}

// secret is the password planted in malformed DSNs.
const secret = "S3cr3tPw-xyzzy"

func TestParseErrorsHidePassword(t *testing.T) {
	dsns := []string{
		"password=" + secret + " port=x",
		"password='" + secret,
		"password='" + secret + `\'`,
		"password=" + secret + " bogus",
		"password " + secret,
		secret,
		secret + " host=a",
		"host=a " + secret,
		"host=a " + secret + "=1 port=x",
		"'" + secret,
		"=" + secret,
		// A value typed into an enumerated key (sslmode=, require_auth=,
		// ...) is echoed by design, as libpq does (TestParseErrorsEchoValue);
		// the cases here are passwords given as passwords, and values of
		// keys that are not echoed.
		"sslmode= password=" + secret, // parsed as sslmode="password=...", as in libpq: not echoed
		"sslmode='x password=" + secret + "'",
		"require_auth= password=" + secret,
		"postgres://h?sslmode=password%3D" + secret,
		"port=" + secret,
		"hostaddr=" + secret,
		"connect_timeout=" + secret,
		"keepalives=" + secret,
		"host=a,b port=1,2,3 password=" + secret,
		"postgres://user:" + secret + "@host:badport/db",
		"postgres://user:" + secret + "/db",          // no "@": the password looks like a port
		"postgres://user:" + secret + "%zz@host/db",  // bad percent-encoding in the password
		"postgres://user:" + secret + "%@host/db",    // truncated percent-encoding
		"postgres://user:" + secret + "%00@host/db",  // NUL
		"postgres://user:" + secret + "@[::1/db",     // bad IPv6 after the password
		"postgres://user:" + secret + "@host/db?x",   // bad query
		"postgres://user:" + secret + "@host/db%zz",  // bad database
		"postgres://user:" + secret + "@h?sslmode=x", // bad value
		"postgres://h?password=" + secret + "%zz",
		"postgres://h?password=" + secret + "=x",
		"postgres://h?" + secret,
		"postgres://h?" + secret + "%zz=1",
		"postgres://[" + secret,
		"postgres://" + secret + "%",
		"postgres://h:" + secret,
		"postgres://h/" + secret + "?" + secret + "&",
		"postgres://h?sslrootcert=system&sslmode=require&password=" + secret,
	}
	for _, dsn := range dsns {
		src, _ := testSource(t, map[string]string{"PGPASSWORD": secret})
		_, err := Parse(dsn, src, testMaxConns)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", dsn)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:6]) {
			t.Errorf("Parse(%q) error shows the password: %v", dsn, err)
		}
	}
}

// TestParseErrorsEchoValue: a bad value of an enumerated key is shown,
// quoted, as libpq shows it, with where it came from and the allowed
// values; a long one is clipped, and one holding "=" (a key=value pair,
// perhaps password=..., read as the value as in "sslmode= password=x")
// is not shown.
func TestParseErrorsEchoValue(t *testing.T) {
	long := strings.Repeat("v", 63) + "\u00e9" + strings.Repeat("w", 200) // é straddles byte 64
	tests := []struct {
		dsn  string
		env  map[string]string
		want string
		not  string
	}{
		{"sslmode=bogus", nil, `invalid sslmode value: "bogus": must be one of disable, allow, prefer, require, verify-ca, verify-full`, ""},
		{"sslmode='a\tb'", nil, `invalid sslmode value: "a\tb": must be one of`, ""}, // a tab, escaped
		{"", map[string]string{"PGTARGETSESSIONATTRS": "master"}, `invalid target_session_attrs value: "master" (from PGTARGETSESSIONATTRS): must be one of any,`, ""},
		{"sslmode=" + long, nil, `invalid sslmode value: "` + strings.Repeat("v", 63) + `"... (265 bytes): must be one of`, "ww"},
		{"sslmode=" + strings.Repeat("x", 64), nil, `invalid sslmode value: "` + strings.Repeat("x", 64) + `": must be`, "..."},
		{"sslmode= password=hunter2", nil, `invalid sslmode value (not shown: it holds "="): must be one of disable,`, "hunter2"},
		{"", map[string]string{"PGCHANNELBINDING": "a=b"}, `invalid channel_binding value (not shown: it holds "=") (from PGCHANNELBINDING): must be one of`, "a=b"},
	}
	for _, tt := range tests {
		src, _ := testSource(t, tt.env)
		_, err := Parse(tt.dsn, src, testMaxConns)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", tt.dsn)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, errPrefix) || !strings.Contains(msg, tt.want) || tt.not != "" && strings.Contains(msg, tt.not) {
			t.Errorf("Parse(%q) error %q, want it to contain %q and not %q", tt.dsn, msg, tt.want, tt.not)
		}
	}
}
