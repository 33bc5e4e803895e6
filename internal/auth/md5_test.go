package auth

import (
	"crypto/md5"
	"fmt"
	"testing"
)

func TestMD5Password(t *testing.T) {
	tests := []struct {
		user, password string
		salt           [4]byte
		want           string // computed with Python's hashlib
	}{
		{"postgres", "secret", [4]byte{0x01, 0x02, 0xfe, 0xff}, "md56c143a9fdb92d561bbca5c93456233c7"},
		{"ünïcode", "pässword", [4]byte{}, "md5cd90480aed628ffc0f6e30f2377820f9"},
	}
	for _, tt := range tests {
		got := MD5Password(tt.user, tt.password, tt.salt)
		if got != tt.want {
			t.Errorf("MD5Password(%q, %q, %x) = %q, want %q", tt.user, tt.password, tt.salt, got, tt.want)
		}
		// Independent formulation of the same definition.
		inner := fmt.Sprintf("%x", md5.Sum([]byte(tt.password+tt.user)))
		indep := fmt.Sprintf("md5%x", md5.Sum(append([]byte(inner), tt.salt[:]...)))
		if got != indep {
			t.Errorf("MD5Password = %q, independent computation %q", got, indep)
		}
	}
	if a, b := MD5Password("u", "p", [4]byte{1}), MD5Password("u", "p", [4]byte{2}); a == b {
		t.Error("salt does not change the result")
	}
}
