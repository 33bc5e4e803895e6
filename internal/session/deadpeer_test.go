package session

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/pgline/pgline/pgtype"
)

// TestDeadPeerWatchDoesNotPinSessions: a session the dead-peer watch
// looks at and its program forgot to close is still collected (the
// watch holds it weakly), and the watch forgets it.
func TestDeadPeerWatchDoesNotPinSessions(t *testing.T) {
	wp := func() weak.Pointer[Session] {
		s := dialSessionOpts(t, func(o *SessionOpts) { o.DeadPeerAfter = time.Minute })
		peers.mu.Lock()
		_, watched := peers.conns[weak.Make(s)]
		peers.mu.Unlock()
		if !watched {
			t.Fatal("a TCP session with DeadPeerAfter set is not watched")
		}
		// A session of the same socket that its program forgot: not
		// closed, no reference kept.
		forgotten := new(Session)
		forgotten.Init(s.NetConn, SessionOpts{Types: pgtype.NewMap(), DeadPeerAfter: time.Minute})
		forgotten.Started(s.NetConn)
		return weak.Make(forgotten)
	}()
	for i := 0; i < 20 && wp.Value() != nil; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if wp.Value() != nil {
		t.Fatal("a forgotten session is kept alive by the dead-peer watch")
	}
	deadline := time.Now().Add(5 * deadPeerTick)
	for {
		peers.mu.Lock()
		_, kept := peers.conns[wp]
		peers.mu.Unlock()
		if !kept {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch still lists a collected session")
		}
		time.Sleep(deadPeerTick / 5)
	}
}
