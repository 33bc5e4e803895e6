package pgtype

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
)

// Binary hstore layout (hstore_send): int32 pair count, then per pair
// int32 key length and key bytes, int32 value length (-1 for NULL) and
// value bytes; keys are unique, sorted by length and then bytes. Text:
// "a"=>"1", "b"=>NULL.

// hstoreParser reads the pairs of a binary or text hstore value.
func hstorePairs(t *typeInfo, format int16, src []byte, n func(int) error, f func(key, value []byte) error) error {
	if format == 0 {
		count, err := parseHstore(t, src, nil)
		if err != nil {
			return err
		}
		if err := n(count); err != nil {
			return err
		}
		_, err = parseHstore(t, src, f)
		return err
	}
	if len(src) < 4 {
		return decodeErr(t, 1, "%d bytes, want at least 4", len(src))
	}
	count := int32(binary.BigEndian.Uint32(src))
	rest := src[4:]
	if count < 0 || int64(count) > int64(len(rest)/8) { // every pair takes at least 8 bytes
		return decodeErr(t, 1, "%d pairs in %d bytes", count, len(rest))
	}
	if err := n(int(count)); err != nil {
		return err
	}
	for i := 0; i < int(count); i++ {
		var kv [2][]byte
		for j := range kv {
			if len(rest) < 4 {
				return decodeErr(t, 1, "truncated at pair %d", i+1)
			}
			l := int32(binary.BigEndian.Uint32(rest))
			rest = rest[4:]
			switch {
			case l == -1 && j == 1:
			case l < 0 || int64(l) > int64(len(rest)):
				return decodeErr(t, 1, "pair %d has a length %d with %d bytes left", i+1, l, len(rest))
			default:
				kv[j], rest = rest[:l:l], rest[l:]
			}
		}
		if err := f(kv[0], kv[1]); err != nil {
			return err
		}
	}
	if len(rest) != 0 {
		return decodeErr(t, 1, "%d bytes after the last pair", len(rest))
	}
	return nil
}

// parseHstore parses the text form, calling f (when not nil) for each
// pair, and returns the pair count. Keys and values are double-quoted
// with backslash escapes, or bare words; a bare NULL value is NULL.
func parseHstore(t *typeInfo, src []byte, f func(key, value []byte) error) (int, error) {
	bad := func(why string) (int, error) { return 0, decodeErr(t, 0, "%s in %q", why, clip(src)) }
	s := src
	n := 0
	for {
		s = bytes.TrimLeft(s, " \t\n\r")
		if len(s) == 0 {
			return n, nil
		}
		key, rest, quoted, ok := hstoreToken(s)
		if !ok || len(key) == 0 && !quoted {
			return bad("malformed key")
		}
		rest = bytes.TrimLeft(rest, " \t\n\r")
		if !bytes.HasPrefix(rest, []byte("=>")) {
			return bad("missing =>")
		}
		rest = bytes.TrimLeft(rest[2:], " \t\n\r")
		value, rest, quoted, ok := hstoreToken(rest)
		if !ok || len(value) == 0 && !quoted {
			return bad("malformed value")
		}
		if !quoted && isNullWord(value) {
			value = nil
		}
		if f != nil {
			if err := f(key, value); err != nil {
				return 0, err
			}
		}
		n++
		s = bytes.TrimLeft(rest, " \t\n\r")
		if len(s) == 0 {
			return n, nil
		}
		if s[0] != ',' {
			return bad("missing comma")
		}
		s = s[1:]
	}
}

// hstoreToken reads a quoted string or a bare word.
func hstoreToken(s []byte) (tok, rest []byte, quoted, ok bool) {
	tok = []byte{}
	if len(s) > 0 && s[0] == '"' {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
				if i == len(s) {
					return nil, nil, true, false
				}
				tok = append(tok, s[i])
			case '"':
				return tok, s[i+1:], true, true
			default:
				tok = append(tok, s[i])
			}
		}
		return nil, nil, true, false
	}
	i := 0
	for ; i < len(s) && s[i] != ',' && s[i] != '=' && s[i] != ' ' && s[i] != '"'; i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) {
				return nil, nil, false, false
			}
		}
		tok = append(tok, s[i])
	}
	// a bare value may be followed by '>' only as part of "=>": the
	// caller checks what follows.
	return tok, s[i:], false, true
}

// appendHstoreText appends the server's text form of an hstore.
func appendHstoreText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	first := true
	err := hstorePairs(t, format, src, func(int) error { return nil }, func(k, v []byte) error {
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = appendHstoreQuoted(b, k)
		b = append(b, "=>"...)
		if v == nil {
			b = append(b, "NULL"...)
		} else {
			b = appendHstoreQuoted(b, v)
		}
		return nil
	})
	return b, err
}

func appendHstoreQuoted(b, s []byte) []byte {
	b = append(b, '"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// decodeHstore decodes an hstore into a new map; a repeated key keeps its
// first value, as the server does.
func decodeHstore(t *typeInfo, format int16, src []byte) (map[string]*string, error) {
	var out map[string]*string
	err := hstorePairs(t, format, src,
		func(n int) error { out = make(map[string]*string, n); return nil },
		func(k, v []byte) error {
			if _, dup := out[string(k)]; dup {
				return nil
			}
			var p *string
			if v != nil {
				s := string(v)
				p = &s
			}
			out[string(k)] = p
			return nil
		})
	return out, err
}

// planHstore plans hstore into *map[string]*string and
// *map[string]string (a NULL value is then an error). NULL sets the map
// to nil.
func planHstore(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *map[string]*string:
		return nilablePlan(func(src []byte) (map[string]*string, error) { return decodeHstore(t, format, src) })
	case *map[string]string:
		return nilablePlan(func(src []byte) (map[string]string, error) {
			v, err := decodeHstore(t, format, src)
			if err != nil {
				return nil, err
			}
			out := make(map[string]string, len(v))
			for k, p := range v {
				if p == nil {
					return nil, scanErr(t, "", (*map[string]string)(nil), fmt.Errorf("key %q: %w", k, errNull(new(string))))
				}
				out[k] = *p
			}
			return out, nil
		})
	}
	return nil
}

// hstoreArg returns the pairs of a map[string]*string or
// map[string]string argument (nil values are NULL) sorted as the server
// sorts them; ok is false for other types.
func hstoreArg(rv reflect.Value) (keys []string, values []*string, ok bool) {
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, nil, false
	}
	vt := rv.Type().Elem()
	if vt.Kind() == reflect.Pointer {
		vt = vt.Elem()
	}
	if vt.Kind() != reflect.String {
		return nil, nil, false
	}
	keys = make([]string, 0, rv.Len())
	for _, k := range rv.MapKeys() {
		keys = append(keys, k.String())
	}
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return bytes.Compare([]byte(a), []byte(b))
	})
	values = make([]*string, len(keys))
	for i, k := range keys {
		v := rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()))
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				continue
			}
			v = v.Elem()
		}
		s := v.String()
		values[i] = &s
	}
	return keys, values, true
}

// encodeHstore encodes the pairs for an hstore parameter.
func encodeHstore(t *typeInfo, arg any, keys []string, values []*string, buf []byte) ([]byte, int16, bool, error) {
	if t.kind != kindHstore {
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	if len(keys) > math.MaxInt32 {
		return buf, 0, false, encErr(t, arg, ErrOutOfRange)
	}
	start := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(keys)))
	for i, k := range keys {
		if len(k) > math.MaxInt32 || values[i] != nil && len(*values[i]) > math.MaxInt32 {
			return buf[:start], 0, false, encErr(t, arg, ErrOutOfRange)
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(k)))
		buf = append(buf, k...)
		if values[i] == nil {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
			continue
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(*values[i])))
		buf = append(buf, *values[i]...)
	}
	return buf, 1, false, nil
}
