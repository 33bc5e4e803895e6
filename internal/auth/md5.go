package auth

import (
	"crypto/md5"
	"encoding/hex"
)

// MD5Password returns the PasswordMessage payload that answers
// AuthenticationMD5Password with the given 4-byte salt:
//
//	"md5" + hex(md5(hex(md5(password + user)) + salt))
func MD5Password(user, password string, salt [4]byte) string {
	inner := md5.Sum([]byte(password + user))
	var buf [32 + 4]byte
	hex.Encode(buf[:32], inner[:])
	copy(buf[32:], salt[:])
	outer := md5.Sum(buf[:])
	return "md5" + hex.EncodeToString(outer[:])
}
