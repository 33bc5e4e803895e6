package pgtest

import (
	"strconv"
	"strings"
	"testing"
)

func TestSuperuserTCPAndSocket(t *testing.T) {
	if got := mustPsql(t, srv.DSN(), "", "SELECT current_user || ' ' || host(inet_server_addr())"); got != "postgres 127.0.0.1" {
		t.Errorf("TCP: got %q, want %q", got, "postgres 127.0.0.1")
	}
	if got := mustPsql(t, srv.SocketDSN(), "", "SELECT current_user || ' ' || (inet_server_addr() IS NULL)"); got != "postgres true" {
		t.Errorf("socket: got %q, want %q", got, "postgres true")
	}
	if srv.IPv6 {
		if got := mustPsql(t, srv.DSN("host=::1"), "", "SELECT host(inet_server_addr())"); got != "::1" {
			t.Errorf("IPv6: got %q, want ::1", got)
		}
	}
	if !strings.HasPrefix(srv.SocketDir, srv.baseDir) || srv.Host != "127.0.0.1" || srv.User != "postgres" || srv.Database != "postgres" {
		t.Errorf("unexpected fields: %+v", srv)
	}
	if srv.Addr() != "127.0.0.1:"+strconv.Itoa(srv.Port) {
		t.Errorf("Addr() = %q", srv.Addr())
	}
}

func TestPasswordUsers(t *testing.T) {
	for _, u := range testOptions.Users {
		if u.Password == "" || u.HostSSLOnly {
			continue
		}
		t.Run(u.Name, func(t *testing.T) {
			for _, dsn := range []string{srv.DSN(), srv.SocketDSN()} {
				dsn += " user='" + u.Name + "'"
				if got := mustPsql(t, dsn, u.Password, "SELECT current_user"); got != u.Name {
					t.Errorf("current_user = %q, want %q", got, u.Name)
				}
				wantPsqlError(t, dsn, u.Password+"x", "password authentication failed")
			}
		})
	}
}

func TestTrustUserAndHBAOrder(t *testing.T) {
	if got := mustPsql(t, srv.DSN("user=trustuser"), "", "SELECT current_user"); got != "trustuser" {
		t.Errorf("trustuser: got %q", got)
	}
	// Options.HBA comes first, so its reject wins over the generated trust.
	wantPsqlError(t, srv.DSN("user=blocked"), "", "rejects connection")
	if got := mustPsql(t, srv.SocketDSN("user=blocked"), "", "SELECT current_user"); got != "blocked" {
		t.Errorf("blocked over socket: got %q", got)
	}
	// The superuser lines match only postgres: an unknown role gets no entry.
	wantPsqlError(t, srv.DSN("user=nobody_here"), "", "no pg_hba.conf entry")
}

func TestPasswordHashes(t *testing.T) {
	tests := []struct{ user, prefix string }{
		{"md5user", "md5"},
		{"pwuser", "md5"},
		{"scramuser", "SCRAM-SHA-256$"},
		{"ssluser", "SCRAM-SHA-256$"},
		{"Mixed Case", "SCRAM-SHA-256$"},
	}
	for _, tt := range tests {
		got, err := srv.Query("SELECT rolpassword FROM pg_authid WHERE rolname = " + quoteLiteral(tt.user))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, tt.prefix) {
			t.Errorf("%s: rolpassword %q does not start with %q", tt.user, got, tt.prefix)
		}
	}
	got, err := srv.Query("SELECT rolpassword IS NULL FROM pg_authid WHERE rolname = 'certuser'")
	if err != nil || got != "t" {
		t.Errorf("certuser has a password or is missing: %q, %v", got, err)
	}
}

func TestTLSVerifyFull(t *testing.T) {
	const sslQuery = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
	for _, host := range []string{"localhost", "127.0.0.1"} {
		dsn := srv.DSN("host="+host, "sslmode=verify-full", "sslrootcert="+srv.CACertFile)
		if got := mustPsql(t, dsn, "", sslQuery); got != "t" {
			t.Errorf("host=%s: ssl = %q, want t", host, got)
		}
	}
	if got := mustPsql(t, srv.DSN(), "", sslQuery); got != "f" {
		t.Errorf("sslmode=disable: ssl = %q, want f", got)
	}
	wantPsqlError(t, srv.DSN("sslmode=verify-full", "sslrootcert="+srv.WrongCACertFile), "", "certificate verify failed")
}

func TestClientCert(t *testing.T) {
	if srv.ClientCertUser != "certuser" {
		t.Fatalf("ClientCertUser = %q", srv.ClientCertUser)
	}
	dsn := srv.DSN("user=certuser", "sslmode=verify-full", "sslrootcert="+srv.CACertFile,
		"sslcert="+srv.ClientCertFile, "sslkey="+srv.ClientKeyFile)
	got := mustPsql(t, dsn, "", "SELECT current_user || ' ' || client_dn FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
	if got != "certuser /CN=certuser" {
		t.Errorf("got %q, want %q", got, "certuser /CN=certuser")
	}
	// Without a certificate the cert entry fails; without TLS there is none.
	wantPsqlError(t, srv.DSN("user=certuser", "sslmode=require", "sslcert=/nonexistent", "sslkey=/nonexistent"), "", "certificate")
	wantPsqlError(t, srv.DSN("user=certuser"), "", "no pg_hba.conf entry")
}

func TestHostSSLOnly(t *testing.T) {
	wantPsqlError(t, srv.DSN("user=ssluser"), "sslpw", "no pg_hba.conf entry")
	if got := mustPsql(t, srv.DSN("user=ssluser", "sslmode=require"), "sslpw", "SELECT current_user"); got != "ssluser" {
		t.Errorf("got %q", got)
	}
}

func TestSettings(t *testing.T) {
	got, err := srv.Query("SHOW work_mem; SHOW max_connections; SHOW fsync; SHOW ssl; " +
		"SELECT setting FROM pg_file_settings WHERE name = 'application_name' AND applied")
	if err != nil {
		t.Fatal(err)
	}
	// application_name is checked in the file: psql sets its own per session.
	if want := "8MB\n200\noff\non\nit's pgtest"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestExecAndQuery(t *testing.T) {
	if err := srv.Exec("DROP TABLE IF EXISTS exec_t; CREATE TABLE exec_t (i int, s text); INSERT INTO exec_t VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	got, err := srv.Query("SELECT i, s FROM exec_t ORDER BY i")
	if err != nil || got != "1|a\n2|b" {
		t.Errorf("Query = %q, %v", got, err)
	}
	err = srv.Exec("SELECT 1; SELECT * FROM no_such_table; CREATE TABLE after_error ()")
	if err == nil || !strings.Contains(err.Error(), `relation "no_such_table" does not exist`) {
		t.Fatalf("Exec error = %v, want the psql error text", err)
	}
	// ON_ERROR_STOP: nothing after the error ran.
	if got, err := srv.Query("SELECT count(*) FROM pg_class WHERE relname = 'after_error'"); err != nil || got != "0" {
		t.Errorf("statement after the error ran: %q, %v", got, err)
	}
	if _, err := srv.Query("SELEC 1"); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("Query error = %v, want syntax error", err)
	}
}

func TestVersion(t *testing.T) {
	got, err := srv.Query("SHOW server_version_num")
	if err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(srv.Version()) != got || srv.Version() < 90000 {
		t.Errorf("Version() = %d, server says %s", srv.Version(), got)
	}
}

// TestNeedVersionSkipsOlderServers: NeedVersion skips a test when the
// server is older than the version named, and only then.
func TestNeedVersionSkipsOlderServers(t *testing.T) {
	own := srv.Version() / 10000
	for _, tt := range []struct {
		major int
		runs  bool
	}{{own, true}, {own - 1, true}, {own + 1, false}} {
		ran := false
		t.Run(strconv.Itoa(tt.major), func(t *testing.T) {
			srv.NeedVersion(t, tt.major, "a feature")
			ran = true
		})
		if ran != tt.runs {
			t.Errorf("NeedVersion(%d) on %d: the test ran = %v, want %v", tt.major, srv.Version(), ran, tt.runs)
		}
	}
	for num, want := range map[int]string{130023: "13.23", 180004: "18.4", 90624: "9.6.24"} {
		if got := versionString(num); got != want {
			t.Errorf("versionString(%d) = %q, want %q", num, got, want)
		}
	}
}
