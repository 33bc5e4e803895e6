package auth

import (
	"errors"
	"testing"
)

func TestChooseMechanism(t *testing.T) {
	both := []string{MechSCRAMSHA256Plus, MechSCRAMSHA256}
	plain := []string{MechSCRAMSHA256}
	plus := []string{MechSCRAMSHA256Plus}
	other := []string{"SCRAM-SHA-1", "OAUTHBEARER"}
	tests := []struct {
		offered []string
		cb      string
		tls     bool
		want    string
		err     error // errors.Is target when want is ""
	}{
		{both, "prefer", true, MechSCRAMSHA256Plus, nil},
		{both, "", true, MechSCRAMSHA256Plus, nil},
		{both, "prefer", false, MechSCRAMSHA256, nil},
		{plain, "prefer", true, MechSCRAMSHA256, nil},
		{plus, "prefer", false, "", ErrNoMechanism},
		{both, "disable", true, MechSCRAMSHA256, nil},
		{plus, "disable", true, "", ErrNoMechanism},
		{both, "require", true, MechSCRAMSHA256Plus, nil},
		{plus, "require", true, MechSCRAMSHA256Plus, nil},
		{both, "require", false, "", ErrChannelBinding},
		{plain, "require", true, "", ErrChannelBinding},
		{other, "prefer", true, "", ErrNoMechanism},
		{nil, "prefer", true, "", ErrNoMechanism},
		{other, "require", true, "", ErrChannelBinding},
		{both, "bogus", true, "", nil},
		{both, "Require", true, "", nil},
	}
	for _, tt := range tests {
		got, err := ChooseMechanism(tt.offered, tt.cb, tt.tls)
		if tt.want != "" {
			if err != nil || got != tt.want {
				t.Errorf("ChooseMechanism(%q, %q, %v) = %q, %v; want %q", tt.offered, tt.cb, tt.tls, got, err, tt.want)
			}
			continue
		}
		if err == nil || got != "" {
			t.Errorf("ChooseMechanism(%q, %q, %v) = %q, %v; want an error", tt.offered, tt.cb, tt.tls, got, err)
			continue
		}
		if tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("ChooseMechanism(%q, %q, %v): err = %v, want %v", tt.offered, tt.cb, tt.tls, err, tt.err)
		}
	}
}

func TestClientSupportsCB(t *testing.T) {
	both := []string{MechSCRAMSHA256Plus, MechSCRAMSHA256}
	plain := []string{MechSCRAMSHA256}
	tests := []struct {
		offered []string
		cb      string
		tls     bool
		want    bool
	}{
		{plain, "prefer", true, true},
		{plain, "", true, true},
		{plain, "prefer", false, false},
		{plain, "disable", true, false},
		{both, "prefer", true, false}, // -PLUS offered but not usable: "n", never "y"
		{both, "disable", true, false},
	}
	for _, tt := range tests {
		if got := ClientSupportsCB(tt.offered, tt.cb, tt.tls); got != tt.want {
			t.Errorf("ClientSupportsCB(%q, %q, %v) = %v, want %v", tt.offered, tt.cb, tt.tls, got, tt.want)
		}
	}
}
