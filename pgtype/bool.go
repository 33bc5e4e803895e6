package pgtype

// decodeBool decodes a bool value: one byte 0/1 in binary, "t"/"f" (or
// true/false/yes/no/on/off/1/0) in text.
func decodeBool(t *typeInfo, format int16, src []byte) (bool, error) {
	if format == 1 {
		if len(src) != 1 {
			return false, errLen(t, len(src))
		}
		switch src[0] {
		case 0:
			return false, nil
		case 1:
			return true, nil
		}
		return false, decodeErr(t, 1, "byte %d is neither 0 nor 1", src[0])
	}
	switch string(src) {
	case "t", "true", "TRUE", "True", "y", "yes", "on", "1":
		return true, nil
	case "f", "false", "FALSE", "False", "n", "no", "off", "0":
		return false, nil
	}
	return false, decodeErr(t, 0, "%q is not a boolean", clip(src))
}

// planBool plans bool into *bool and *string.
func planBool(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *bool:
		return planFunc(func(src []byte, dst any) error {
			d, err := target[bool](dst)
			if err != nil {
				return err
			}
			if src == nil {
				return errNull(dst)
			}
			v, err := decodeBool(t, format, src)
			if err != nil {
				return err
			}
			*d = v
			return nil
		})
	}
	return nil
}
