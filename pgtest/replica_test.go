package pgtest

import (
	"strings"
	"testing"
)

// TestHostsDSN: the servers as one host list, in order, with the extras
// after; PauseReplay refuses a server not in recovery.
func TestHostsDSN(t *testing.T) {
	a := &Server{Host: "127.0.0.1", Port: 5001, User: "postgres", Database: "postgres"}
	b := &Server{Host: "127.0.0.1", Port: 5002, User: "other", Database: "db"}
	got := HostsDSN([]*Server{a, b}, "target_session_attrs=read-write")
	want := "host=127.0.0.1,127.0.0.1 port=5001,5002 user=postgres dbname=postgres sslmode=disable target_session_attrs=read-write"
	if got != want {
		t.Errorf("HostsDSN = %q, want %q", got, want)
	}
	if err := srv.PauseReplay(); err == nil || !strings.Contains(err.Error(), "recovery") {
		t.Errorf("PauseReplay on a primary: %v, want an error about recovery", err)
	}
	if err := srv.Follow(srv); err == nil || !strings.Contains(err.Error(), "not a standby") {
		t.Errorf("Follow on a primary: %v", err)
	}
}
