package session

import (
	"testing"
	"time"
)

// TestBusyOnlyWhileRequestsAreInFlight: a session is busy while a request
// is in flight, and not when every reply has been read but a flusher has
// not yet given the writer's role back (it holds nothing of anyone's: a
// Pool's Release closed such a connection instead of resetting it).
// Bytes queued meanwhile are written by the role's holder before it
// gives the role up.
func TestBusyOnlyWhileRequestsAreInFlight(t *testing.T) {
	ctx := testCtx(t)
	s := dialSession(t)
	if s.Busy() {
		t.Fatal("a session nobody uses is busy")
	}

	done := make(chan error, 1)
	go func() {
		_, err := s.SimpleQueryUntraced(ctx, nil, "SELECT pg_sleep(0.3)", nil, nil)
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); !s.Busy(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a session with a statement in flight is not busy")
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A flusher between its last write and giving the role up.
	s.Wmu.Lock()
	if !s.Writer.takeLocked() {
		s.Wmu.Unlock()
		t.Fatal("the writer's role is held with nothing in flight")
	}
	s.Wmu.Unlock()
	if s.Busy() {
		t.Fatal("a session whose writer's role is held after every reply was read is busy")
	}
	// A statement queued now is written by the role's holder.
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Writer.flushLoop()
	}()
	if _, err := s.SimpleQueryUntraced(ctx, nil, "SELECT 1", nil, nil); err != nil {
		t.Fatal(err)
	}
	if s.Busy() {
		t.Fatal("busy after the last reply")
	}
}
