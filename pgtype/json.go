package pgtype

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// decodeJSON returns the JSON text of a json or jsonb value, aliasing src.
// Binary jsonb starts with a version byte, 1; binary json is the text.
func decodeJSON(t *typeInfo, format int16, src []byte) ([]byte, error) {
	if format == 0 || t.kind == kindJSON {
		return src, nil
	}
	if len(src) == 0 {
		return nil, decodeErr(t, 1, "missing version byte")
	}
	if src[0] != 1 {
		return nil, decodeErr(t, 1, "unsupported jsonb version %d", src[0])
	}
	return src[1:], nil
}

// planJSON plans json and jsonb into *[]byte, *json.RawMessage (copies of
// the JSON text), *string, and any other destination through
// json.Unmarshal. NULL sets a map, slice or interface destination to nil
// and is an error for the others.
func planJSON(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *[]byte:
		return nilablePlan(func(src []byte) ([]byte, error) {
			j, err := decodeJSON(t, format, src)
			return copyBytes(j), err
		})
	case *json.RawMessage:
		return nilablePlan(func(src []byte) (json.RawMessage, error) {
			j, err := decodeJSON(t, format, src)
			return copyBytes(j), err
		})
	case *string:
		return valuePlan(func(src []byte) (string, error) {
			j, err := decodeJSON(t, format, src)
			return string(j), err
		})
	}
	rt := reflect.TypeOf(dst)
	nilable := false
	switch rt.Elem().Kind() {
	case reflect.Map, reflect.Slice, reflect.Interface:
		nilable = true
	}
	return planFunc(func(src []byte, dst any) error {
		if reflect.TypeOf(dst) != rt {
			return fmt.Errorf("pgtype: scan destination %T is not the %s the plan was made for", dst, rt)
		}
		if src == nil {
			if !nilable {
				return errNull(dst)
			}
			reflect.ValueOf(dst).Elem().SetZero()
			return nil
		}
		j, err := decodeJSON(t, format, src)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(j, dst); err != nil {
			return scanErr(t, "", dst, err)
		}
		return nil
	})
}
