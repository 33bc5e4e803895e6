package session

import (
	"sync"
	"testing"
	"time"
)

// TestGateWaitersGoBeforeTheNextHolder: statements that waited at the gate
// while a COPY or a transaction held it are queued before the same
// goroutine takes it again, even when it does so at once (a loop of COPYs,
// or Begin after Commit): else they could wait for as long as that loop
// ran. Here the gate is let go and taken back at once, then held: the
// waiting statements must still complete while it is held.
func TestGateWaitersGoBeforeTheNextHolder(t *testing.T) {
	// Each taker takes the gate and returns its holder and its release.
	takers := []struct {
		name string
		take func(s *Session) (*Holder, func(), error)
	}{
		{"copy", func(s *Session) (*Holder, func(), error) {
			h, err := s.HoldForCopy(testCtx(t), nil)
			if err != nil {
				return nil, nil, err
			}
			return &h.H, h.Release, nil
		}},
		{"block", func(s *Session) (*Holder, func(), error) {
			h := &Holder{}
			h.Block = h
			return h, func() { s.ReleaseBlock(h, false) }, s.HoldBlock(testCtx(t), h)
		}},
	}
	for _, tk := range takers {
		t.Run(tk.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := dialSession(t)
			// Described once first: each statement below then passes the
			// gate once (a statement not yet described passes it twice:
			// its Describe, then its run).
			if _, _, err := query(ctx, s, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			h, release, err := tk.take(s)
			if err != nil {
				t.Fatal(err)
			}
			const n = 4
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _, err := query(ctx, s, "SELECT 1")
					errs <- err
				}()
			}
			if !waitFor(t, 10*time.Second, func() (bool, error) {
				s.Wmu.Lock()
				defer s.Wmu.Unlock()
				return h.waiting == n, nil
			}) {
				t.Fatalf("the %d statements never waited at the gate", n)
			}
			for round := 0; round < 20; round++ {
				release()
				if h, release, err = tk.take(s); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				s.Wmu.Lock()
				waiting := h.waiting
				s.Wmu.Unlock()
				t.Fatalf("the gate held again: %d of the %d statements still wait at it", waiting, n)
			}
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			release()
		})
	}
}
