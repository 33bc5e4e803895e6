package pgtest

import (
	"os/user"
	"reflect"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/dsn"
)

// TestDescribeExternal: the Server fields of an external server are read
// from PGLINE_TEST_DSN as pgline.ParseConfig and psql read it, the
// environment and libpq's defaults included, and Server.DSN writes the
// same settings back in key=value form.
func TestDescribeExternal(t *testing.T) {
	type fields struct {
		Host, SocketDir string
		Port            int
		User, Database  string
	}
	tests := []struct {
		dsn  string
		env  map[string]string
		want fields
		back string // DSN("x=1"); "" means not checked
	}{
		{"host=h port=6000 user=u dbname=d", nil, fields{"h", "", 6000, "u", "d"}, "host=h port=6000 user=u dbname=d x=1"},
		{"", nil, fields{"", "", 5432, "osuser", "osuser"}, "x=1"},
		{"host=/run/pg", nil, fields{"", "/run/pg", 5432, "osuser", "osuser"}, ""},
		{"hostaddr=127.0.0.1", nil, fields{"127.0.0.1", "", 5432, "osuser", "osuser"}, ""},
		{"host=a,b port=1,2", nil, fields{"a", "", 1, "osuser", "osuser"}, ""},
		{"postgres://u:p%40ss@[::1]:7,h2:8/my%20db?sslmode=disable&ssl=true", nil, fields{"::1", "", 7, "u", "my db"},
			"user=u password=p@ss host=::1,h2 port=7,8 dbname='my db' sslmode=disable sslmode=require x=1"},
		{"POSTGRES://h/db?application_name=a+b", nil, fields{"h", "", 5432, "osuser", "db"}, "host=h dbname=db application_name=a+b x=1"},
		{"user=u password='it\\'s x'", nil, fields{"", "", 5432, "u", "u"}, `user=u password='it\'s x' x=1`},
		// The environment fills what the DSN leaves unset, as in libpq.
		{"dbname=d", map[string]string{"PGHOST": "envhost", "PGPORT": "6543", "PGUSER": "envuser"},
			fields{"envhost", "", 6543, "envuser", "d"}, "dbname=d x=1"},
		{"host='' port=5 user=u", map[string]string{"PGHOST": "envhost", "PGPORT": "6543", "PGDATABASE": "envdb"},
			fields{"", "", 5, "u", "envdb"}, ""},
	}
	for _, tt := range tests {
		src := &dsn.Source{
			LookupEnv:   func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok },
			CurrentUser: func() (*user.User, error) { return &user.User{Username: "osuser"}, nil },
		}
		s, err := describeExternal(tt.dsn, src)
		if err != nil {
			t.Errorf("describeExternal(%q): %v", tt.dsn, err)
			continue
		}
		got := fields{s.Host, s.SocketDir, s.Port, s.User, s.Database}
		if !s.External || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("describeExternal(%q) = %+v, want %+v", tt.dsn, got, tt.want)
		}
		if tt.back != "" && s.DSN("x=1") != tt.back {
			t.Errorf("describeExternal(%q).DSN(x=1) = %q, want %q", tt.dsn, s.DSN("x=1"), tt.back)
		}
	}
}

func TestDescribeExternalErrors(t *testing.T) {
	const secret = "S3cr3tPw"
	for _, tt := range []struct{ dsn, want string }{
		{"host='unterminated", "unterminated"},
		{"password " + secret, `missing "="`},
		{"postgres://u:" + secret + "@h/db x=1", "query parameters"},
		{"postgres://u:" + secret + "@h:99999/db", "invalid port"},
		{"postgres://u:" + secret + "/db", "invalid port"}, // no "@": the password reads as a port
		{"port=" + secret, "invalid port"},
		{"postgres://h?" + secret + "%20x=1", "URL query parameter name"},
	} {
		_, err := describeExternal(tt.dsn, &dsn.Source{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), DSNEnv) {
			t.Errorf("describeExternal(%q): %v; want an error naming %s with %q", tt.dsn, err, DSNEnv, tt.want)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("describeExternal(%q) error shows the password: %v", tt.dsn, err)
		}
	}
}
