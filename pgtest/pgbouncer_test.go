package pgtest

import (
	"os"
	"strings"
	"testing"
)

// TestPgBouncerWith: the settings given replace the defaults or add to
// them, the admin console shows them, and a setting that is not
// key = value is refused.
func TestPgBouncerWith(t *testing.T) {
	if _, err := PgBouncerPath(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatalf("%v (CI is set)", err)
	}
	b, err := srv.StartPgBouncerWith("transaction", "default_pool_size = 2", "query_timeout=7")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	out, err := b.Admin("SHOW CONFIG")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"default_pool_size|2|", "query_timeout|7|", "pool_mode|transaction|", "max_client_conn|500|"} {
		if !strings.Contains(out, want) {
			t.Errorf("SHOW CONFIG lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(b.Log(), "process up") {
		t.Errorf("log lacks the start:\n%s", b.Log())
	}
	if _, err := srv.StartPgBouncerWith("session", "query_timeout"); err == nil || !strings.Contains(err.Error(), "key = value") {
		t.Errorf("a setting without = gave %v", err)
	}
}
