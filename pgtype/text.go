package pgtype

import (
	"bytes"
	"encoding/hex"
)

// planText plans text, varchar, bpchar, name, unknown and every type this
// package does not know (enums, citext, ...) into *string, *[]byte (a
// copy), and, by parsing the text, Go integers, floats and *bool.
func planText(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *string:
		return stringCopyPlan{}
	case *[]byte:
		return planFunc(func(src []byte, dst any) error {
			d, err := target[[]byte](dst)
			if err != nil {
				return err
			}
			*d = copyBytes(src)
			return nil
		})
	case *bool:
		return planBool(t, 0, dst)
	case *float64, *float32:
		return planFloat(t, 0, dst)
	}
	return intDestPlan(t, func(src []byte) (int64, error) { return parseInt(t, src) }, dst)
}

// copyBytes returns a copy of b, nil for nil, and an empty non-nil slice
// for an empty value.
func copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// decodeBytea returns the bytes of a bytea value. A binary value is
// returned as is (aliasing src); a text value (hex "\x..." or the escape
// format) is decoded into a new slice.
func decodeBytea(t *typeInfo, format int16, src []byte) ([]byte, error) {
	if format == 1 {
		return src, nil
	}
	if bytes.HasPrefix(src, []byte(`\x`)) {
		h := src[2:]
		if len(h)%2 != 0 {
			return nil, decodeErr(t, 0, "odd number of hex digits")
		}
		out := make([]byte, len(h)/2)
		if _, err := hex.Decode(out, h); err != nil {
			return nil, decodeErr(t, 0, "invalid hex digits")
		}
		return out, nil
	}
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 < len(src) && src[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		if i+3 < len(src) && isOctal(src[i+1]) && isOctal(src[i+2]) && isOctal(src[i+3]) && src[i+1] <= '3' {
			out = append(out, (src[i+1]-'0')<<6|(src[i+2]-'0')<<3|(src[i+3]-'0'))
			i += 3
			continue
		}
		return nil, decodeErr(t, 0, "invalid escape at byte %d", i)
	}
	return out, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// planBytea plans bytea into *[]byte (a copy) and *string (the raw bytes).
func planBytea(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *[]byte:
		return nilablePlan(func(src []byte) ([]byte, error) {
			b, err := decodeBytea(t, format, src)
			if err == nil && format == 1 {
				b = copyBytes(b)
			}
			return b, err
		})
	case *string:
		return planFunc(func(src []byte, dst any) error {
			d, err := target[string](dst)
			if err != nil {
				return err
			}
			if src == nil {
				return errNull(dst)
			}
			b, err := decodeBytea(t, format, src)
			if err != nil {
				return err
			}
			*d = string(b)
			return nil
		})
	}
	return nil
}

// stringCopyPlan decodes a value into a *string by copying its bytes
// unchanged: the text types' plan for *string.
type stringCopyPlan struct{}

// Scan sets *dst to a copy of src.
func (stringCopyPlan) Scan(src []byte, dst any) error {
	d, err := target[string](dst)
	if err != nil {
		return err
	}
	if src == nil {
		return errNull(dst)
	}
	*d = string(src)
	return nil
}

// CopiesToString reports whether plan, made for a *string destination,
// stores a non-NULL value as a copy of its bytes, unchanged (the text
// types: text, varchar, bpchar, name, citext...). A caller may then make
// that copy itself, as Rows.Scan does into blocks shared by many short
// strings.
func CopiesToString(plan ScanPlan) bool {
	_, ok := plan.(stringCopyPlan)
	return ok
}
