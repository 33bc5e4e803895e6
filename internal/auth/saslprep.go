package auth

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// preparePassword returns the password SCRAM hashes: SASLprep (RFC 4013) of
// password when that succeeds, the password unchanged otherwise. This is
// what PostgreSQL does on both sides (libpq and the server's verifier
// builder): a password SASLprep rejects is used as raw bytes.
func preparePassword(password string) string {
	if p, ok := saslprep(password); ok {
		return p
	}
	return password
}

// saslprep applies the SASLprep profile of stringprep the way PostgreSQL's
// pg_saslprep does, and reports false where pg_saslprep fails:
//
//  1. pure ASCII input is returned unchanged (control characters included);
//  2. invalid UTF-8 fails;
//  3. map: non-ASCII spaces (RFC 3454 C.1.2) become U+0020, characters
//     "commonly mapped to nothing" (B.1) are removed; an empty result fails;
//  4. the prohibited-output (C.1.2-C.9) and unassigned-code-point (A.1)
//     checks and the bidi check (section 6) run on the mapped string, as in
//     PostgreSQL;
//  5. the result is the NFKC normalization of the mapped string.
//
// Two approximations, documented for whoever compares against the server:
// stringprep pins Unicode 3.2, but the unassigned check uses the code points
// assigned in Unicode 4.1 (the oldest version golang.org/x/text keeps), and
// the bidi categories and NFKC come from the Unicode version of
// golang.org/x/text. Passwords that differ under these are vanishingly rare
// (they need a character added in Unicode 4.0 or 4.1, or whose bidi class
// changed since 3.2).
func saslprep(s string) (string, bool) {
	if isASCII(s) {
		return s, true
	}
	if !utf8.ValidString(s) {
		return "", false
	}
	mapped := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case unicode.Is(nonASCIISpace, r):
			mapped = append(mapped, ' ')
		case unicode.Is(mappedToNothing, r):
		default:
			mapped = append(mapped, r)
		}
	}
	if len(mapped) == 0 {
		return "", false
	}
	assigned := rangetable.Assigned("4.1.0")
	randAL := false
	for _, r := range mapped {
		if unicode.Is(prohibitedOutput, r) || !unicode.Is(assigned, r) {
			return "", false
		}
		if isRandALCat(r) {
			randAL = true
		}
	}
	if randAL {
		if !isRandALCat(mapped[0]) || !isRandALCat(mapped[len(mapped)-1]) {
			return "", false
		}
		for _, r := range mapped {
			if isLCat(r) {
				return "", false
			}
		}
	}
	return norm.NFKC.String(string(mapped)), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isRandALCat reports whether r has bidi class R or AL (RFC 3454 D.1).
func isRandALCat(r rune) bool {
	p, _ := bidi.LookupRune(r)
	c := p.Class()
	return c == bidi.R || c == bidi.AL
}

// isLCat reports whether r has bidi class L (RFC 3454 D.2).
func isLCat(r rune) bool {
	p, _ := bidi.LookupRune(r)
	return p.Class() == bidi.L
}

// nonASCIISpace is RFC 3454 table C.1.2, mapped to U+0020 by SASLprep.
var nonASCIISpace = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00A0, Hi: 0x00A0, Stride: 1},
		{Lo: 0x1680, Hi: 0x1680, Stride: 1},
		{Lo: 0x2000, Hi: 0x200B, Stride: 1},
		{Lo: 0x202F, Hi: 0x202F, Stride: 1},
		{Lo: 0x205F, Hi: 0x205F, Stride: 1},
		{Lo: 0x3000, Hi: 0x3000, Stride: 1},
	},
}

// mappedToNothing is RFC 3454 table B.1, removed by SASLprep.
var mappedToNothing = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00AD, Hi: 0x00AD, Stride: 1},
		{Lo: 0x034F, Hi: 0x034F, Stride: 1},
		{Lo: 0x1806, Hi: 0x1806, Stride: 1},
		{Lo: 0x180B, Hi: 0x180D, Stride: 1},
		{Lo: 0x200B, Hi: 0x200D, Stride: 1},
		{Lo: 0x2060, Hi: 0x2060, Stride: 1},
		{Lo: 0xFE00, Hi: 0xFE0F, Stride: 1},
		{Lo: 0xFEFF, Hi: 0xFEFF, Stride: 1},
	},
}

// prohibitedOutput is the union of RFC 3454 tables C.1.2, C.2.1, C.2.2,
// C.3, C.4, C.5, C.6, C.7, C.8 and C.9 (RFC 4013 section 2.3), sorted and
// merged.
var prohibitedOutput = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0000, Hi: 0x001F, Stride: 1}, // C.2.1
		{Lo: 0x007F, Hi: 0x00A0, Stride: 1}, // C.2.1, C.2.2, C.1.2
		{Lo: 0x0340, Hi: 0x0341, Stride: 1}, // C.8
		{Lo: 0x06DD, Hi: 0x06DD, Stride: 1}, // C.2.2
		{Lo: 0x070F, Hi: 0x070F, Stride: 1}, // C.2.2
		{Lo: 0x1680, Hi: 0x1680, Stride: 1}, // C.1.2
		{Lo: 0x180E, Hi: 0x180E, Stride: 1}, // C.2.2
		{Lo: 0x2000, Hi: 0x200F, Stride: 1}, // C.1.2, C.2.2, C.8
		{Lo: 0x2028, Hi: 0x202F, Stride: 1}, // C.2.2, C.8, C.1.2
		{Lo: 0x205F, Hi: 0x2063, Stride: 1}, // C.1.2, C.2.2
		{Lo: 0x206A, Hi: 0x206F, Stride: 1}, // C.2.2, C.8
		{Lo: 0x2FF0, Hi: 0x2FFB, Stride: 1}, // C.7
		{Lo: 0x3000, Hi: 0x3000, Stride: 1}, // C.1.2
		{Lo: 0xD800, Hi: 0xF8FF, Stride: 1}, // C.5, C.3
		{Lo: 0xFDD0, Hi: 0xFDEF, Stride: 1}, // C.4
		{Lo: 0xFEFF, Hi: 0xFEFF, Stride: 1}, // C.2.2
		{Lo: 0xFFF9, Hi: 0xFFFF, Stride: 1}, // C.2.2, C.6, C.4
	},
	R32: []unicode.Range32{
		{Lo: 0x1D173, Hi: 0x1D17A, Stride: 1},  // C.2.2
		{Lo: 0x1FFFE, Hi: 0x1FFFF, Stride: 1},  // C.4
		{Lo: 0x2FFFE, Hi: 0x2FFFF, Stride: 1},  // C.4
		{Lo: 0x3FFFE, Hi: 0x3FFFF, Stride: 1},  // C.4
		{Lo: 0x4FFFE, Hi: 0x4FFFF, Stride: 1},  // C.4
		{Lo: 0x5FFFE, Hi: 0x5FFFF, Stride: 1},  // C.4
		{Lo: 0x6FFFE, Hi: 0x6FFFF, Stride: 1},  // C.4
		{Lo: 0x7FFFE, Hi: 0x7FFFF, Stride: 1},  // C.4
		{Lo: 0x8FFFE, Hi: 0x8FFFF, Stride: 1},  // C.4
		{Lo: 0x9FFFE, Hi: 0x9FFFF, Stride: 1},  // C.4
		{Lo: 0xAFFFE, Hi: 0xAFFFF, Stride: 1},  // C.4
		{Lo: 0xBFFFE, Hi: 0xBFFFF, Stride: 1},  // C.4
		{Lo: 0xCFFFE, Hi: 0xCFFFF, Stride: 1},  // C.4
		{Lo: 0xDFFFE, Hi: 0xDFFFF, Stride: 1},  // C.4
		{Lo: 0xE0001, Hi: 0xE0001, Stride: 1},  // C.9
		{Lo: 0xE0020, Hi: 0xE007F, Stride: 1},  // C.9
		{Lo: 0xEFFFE, Hi: 0x10FFFF, Stride: 1}, // C.4, C.3
	},
}
