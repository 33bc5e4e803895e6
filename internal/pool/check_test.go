package pool

import (
	"testing"
	"time"
)

// TestParseLSN pins the reading of a pg_lsn, and 0 for what is not one.
func TestParseLSN(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
	}{
		{"16/B374D848", 0x16_B374D848},
		{"0/0", 0},
		{"FFFFFFFF/FFFFFFFF", 1<<64 - 1},
		{"", 0},
		{"16", 0},
		{"16/", 0},
		{"x/1", 0},
		{"100000000/0", 0}, // more than 32 bits in a half
	} {
		if got := parseLSN(tt.in); got != tt.want {
			t.Errorf("parseLSN(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}

// TestWalPast pins when a primary's insert position counts as past a
// standby's replayed one: a page header's gap at a page start is none.
func TestWalPast(t *testing.T) {
	for _, tt := range []struct {
		primary, standby uint64
		want             bool
	}{
		{100, 100, false},
		{99, 100, false},
		{101, 100, true},
		{8192 + 40, 8192, false},      // the long header of a page, nothing else
		{8192 + 24, 8192 - 16, false}, // a record ended the page before
		{8192 + 41, 8192, true},       // a byte of a record
		{2*8192 + 10, 8192 + 5000, true},
	} {
		if got := walPast(tt.primary, tt.standby); got != tt.want {
			t.Errorf("walPast(%d, %d) = %v, want %v", tt.primary, tt.standby, got, tt.want)
		}
	}
}

// TestStateLag pins a standby's lag from behind, and none for a primary
// or a standby caught up.
func TestStateLag(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		st   hostState
		want time.Duration
	}{
		{hostState{role: RolePrimary, behind: now.Add(-time.Second)}, 0},
		{hostState{role: RoleStandby}, 0},
		{hostState{role: RoleStandby, behind: now.Add(-time.Second)}, time.Second},
		{hostState{role: RoleStandby, behind: now.Add(time.Second)}, 0},
	} {
		if got := tt.st.lag(now); got != tt.want {
			t.Errorf("lag of %+v = %v, want %v", tt.st, got, tt.want)
		}
	}
}
