package auth

import "testing"

func TestSASLprep(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		// RFC 4013 section 3 examples.
		{"I\u00adX", "IX", true},
		{"user", "user", true},
		{"USER", "USER", true},
		{"\u00aa", "a", true},
		{"\u2168", "IX", true},
		{"\u0007", "\u0007", true}, // pure ASCII is returned as is, like PostgreSQL
		{"\u0627\u0031", "", false},
		// More.
		{"", "", true},
		{"a\u00a0b\u3000c\u200bd", "a b c d", true},        // non-ASCII spaces
		{"a\ufeffb\u200dc\ufe0fd\u034fe", "abcde", true},   // mapped to nothing
		{"\u00ad", "", false},                              // empty after mapping
		{"\u00ad\u200b", " ", true},                        // U+200B is a space in Unicode 3.2 stringprep
		{"caf\u0065\u0301", "caf\u00e9", true},             // NFC composition
		{"\ufb01", "fi", true},                             // NFKC compatibility
		{"\uff21\uff22", "AB", true},                       // fullwidth
		{"\u00e9\u0007", "", false},                        // ASCII control with non-ASCII
		{"\u00e9\u0085", "", false},                        // C.2.2
		{"\u00e9\ue000", "", false},                        // private use
		{"\u00e9\ufdd0", "", false},                        // non-character
		{"\u00e9\u2ff0", "", false},                        // C.7
		{"\u00e9\u200e", "", false},                        // C.8
		{"\u00e9\U000E0041", "", false},                    // tagging
		{"\u00e9\u0242", "", false},                        // unassigned in Unicode 3.2 (added in 5.0)
		{"\U0001F600", "", false},                          // emoji: unassigned in Unicode 3.2
		{"\u0627\u0031\u0628", "\u0627\u0031\u0628", true}, // RandALCat first and last
		{"\u0627a\u0628", "", false},                       // RandALCat with LCat
		{"1\u0627", "", false},                             // RandALCat not first
		{"\xff\xfe", "", false},                            // invalid UTF-8
		{"\u00e9\xff", "", false},                          // invalid UTF-8 after non-ASCII
	}
	for _, tt := range tests {
		got, ok := saslprep(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("saslprep(%+q) = %+q, %v; want %+q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		want := tt.want
		if !tt.ok {
			want = tt.in
		}
		if p := preparePassword(tt.in); p != want {
			t.Errorf("preparePassword(%+q) = %+q, want %+q", tt.in, p, want)
		}
	}
}
