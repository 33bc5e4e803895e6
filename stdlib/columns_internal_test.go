package stdlib

import "testing"

func TestNumericTypmod(t *testing.T) {
	for _, tc := range []struct {
		typmod      int32
		prec, scale int64
		ok          bool
	}{
		{-1, 0, 0, false},
		{3, 0, 0, false},
		{(10<<16 | 2) + 4, 10, 2, true},
		{(1000<<16 | 0) + 4, 1000, 0, true},
		{(4<<16 | (-2 & 0x7ff)) + 4, 4, -2, true},
		{(5<<16 | (-1000 & 0x7ff)) + 4, 5, -1000, true},
		{(3<<16 | 1000) + 4, 3, 1000, true},
	} {
		p, s, ok := numericTypmod(tc.typmod)
		if p != tc.prec || s != tc.scale || ok != tc.ok {
			t.Errorf("numericTypmod(%d) = %d, %d, %v; want %d, %d, %v", tc.typmod, p, s, ok, tc.prec, tc.scale, tc.ok)
		}
	}
}
