package pgtype

import "encoding/hex"

// decodeUUID decodes a uuid: 16 bytes in binary, the canonical
// 8-4-4-4-12 hex form (or 32 hex digits, optionally in braces) in text.
func decodeUUID(t *typeInfo, format int16, src []byte) ([16]byte, error) {
	var u [16]byte
	if format == 1 {
		if len(src) != 16 {
			return u, errLen(t, len(src))
		}
		copy(u[:], src)
		return u, nil
	}
	if err := parseUUID(&u, src); err != nil {
		return u, decodeErr(t, 0, "%q is not a UUID", clip(src))
	}
	return u, nil
}

// parseUUID parses the text forms PostgreSQL accepts: 32 hex digits,
// optionally in braces, with a hyphen allowed after any group of four.
func parseUUID(u *[16]byte, s []byte) error {
	if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	var h [32]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' && n > 0 && n%4 == 0 && i+1 < len(s) && s[i+1] != '-' {
			continue
		}
		if n == 32 {
			return errSyntax
		}
		h[n] = c
		n++
	}
	if n != 32 {
		return errSyntax
	}
	if _, err := hex.Decode(u[:], h[:]); err != nil {
		return errSyntax
	}
	return nil
}

// appendUUID appends the canonical text form of u.
func appendUUID(b []byte, u [16]byte) []byte {
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
	return append(b, s[:]...)
}

// planUUID plans uuid into *[16]byte and *string (canonical form).
func planUUID(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *[16]byte:
		return valuePlan(func(src []byte) ([16]byte, error) { return decodeUUID(t, format, src) })
	case *string:
		return valuePlan(func(src []byte) (string, error) {
			u, err := decodeUUID(t, format, src)
			if err != nil {
				return "", err
			}
			var b [36]byte
			return string(appendUUID(b[:0], u)), nil
		})
	}
	return nil
}
