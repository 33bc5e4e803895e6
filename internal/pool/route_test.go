package pool

import "testing"

// TestWaitLine checks that a line keeps arrival order and its count when
// waiters leave from its head, middle and tail.
func TestWaitLine(t *testing.T) {
	var l waitLine
	ws := make([]*waiter, 5)
	for i := range ws {
		ws[i] = &waiter{}
		l.push(ws[i])
	}
	l.remove(ws[2]) // middle
	l.remove(ws[0]) // head
	l.remove(ws[4]) // tail
	var got []*waiter
	for w := l.head; w != nil; w = w.next {
		got = append(got, w)
	}
	if l.n != 2 || len(got) != 2 || got[0] != ws[1] || got[1] != ws[3] || l.tail != ws[3] {
		t.Fatalf("line after removals: n=%d, %d waiters", l.n, len(got))
	}
	l.remove(ws[1])
	l.remove(ws[3])
	if l.head != nil || l.tail != nil || l.n != 0 {
		t.Fatalf("emptied line: head %p tail %p n %d", l.head, l.tail, l.n)
	}
}

// TestSettingsWithDefaults pins the defaults, and that a limit turned
// off stays off except the health check period.
func TestSettingsWithDefaults(t *testing.T) {
	s := Settings{MaxLifetime: NoLimit, HealthPeriod: NoLimit, MaxConns: 2}.WithDefaults()
	if s.MaxConns != 2 || s.MaxPipeline != 64 || s.MaxLifetime != NoLimit || s.HealthPeriod.Minutes() != 1 ||
		s.MaxIdle.Minutes() != 30 || s.IdleCheck.Seconds() != 1 {
		t.Errorf("defaults: %+v", s)
	}
}
