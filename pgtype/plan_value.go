package pgtype

// valuePlan makes a plan for *D destinations that decodes non-NULL values
// with dec; NULL is an error.
func valuePlan[D any](dec func(src []byte) (D, error)) ScanPlan {
	return decodePlan(dec, false)
}

// nilablePlan is valuePlan for destinations whose zero value stands for
// NULL (slices, maps): NULL sets *D to it.
func nilablePlan[D any](dec func(src []byte) (D, error)) ScanPlan {
	return decodePlan(dec, true)
}

func decodePlan[D any](dec func(src []byte) (D, error), nullIsZero bool) ScanPlan {
	return planFunc(func(src []byte, dst any) error {
		d, err := target[D](dst)
		if err != nil {
			return err
		}
		if src == nil {
			if !nullIsZero {
				return errNull(dst)
			}
			var zero D
			*d = zero
			return nil
		}
		v, err := dec(src)
		if err != nil {
			return err
		}
		*d = v
		return nil
	})
}
