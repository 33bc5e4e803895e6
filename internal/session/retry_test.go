package session

import (
	"context"
	"testing"
)

// TestRetryBudgets pins each reason's budget (retry.go): a call may be
// sent again maxCancelRetries times for others' interference, shared by
// its three causes, once for a stale statement, and maxPathRetries times
// for search_path changes; one reason's use leaves the others' alone.
func TestRetryBudgets(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		reason resendReason
		budget int
	}{
		{ResendInterfered, MaxCancelRetries},
		{resendStale, 1},
		{resendPathChanged, maxPathRetries},
	} {
		var b Resends
		for i := range tc.budget {
			if !b.Again(ctx, tc.reason) {
				t.Fatalf("reason %d: attempt %d refused, budget %d", tc.reason, i+1, tc.budget)
			}
		}
		if b.Again(ctx, tc.reason) {
			t.Fatalf("reason %d: sent again past its budget %d", tc.reason, tc.budget)
		}
		for _, other := range []resendReason{ResendInterfered, resendStale, resendPathChanged} {
			if other != tc.reason && !b.Again(ctx, other) {
				t.Errorf("reason %d used up reason %d's budget", tc.reason, other)
			}
		}
	}
}

// TestRetryNotAfterCtxEnded: no reason sends a call again once its ctx
// has ended, and the refusal uses none of the budget.
func TestRetryNotAfterCtxEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b Resends
	for _, r := range []resendReason{ResendInterfered, resendStale, resendPathChanged} {
		if b.Again(ctx, r) {
			t.Errorf("reason %d: sent again after the ctx ended", r)
		}
	}
	if b != (Resends{}) {
		t.Errorf("budget used: %+v", b)
	}
}
