package pgtype

// valuePlan makes a plan for *D destinations that decodes non-NULL values
// with dec; NULL is an error.
func valuePlan[D any](dec func(src []byte) (D, error)) ScanPlan {
	return planFunc(func(src []byte, dst any) error {
		d, err := target[D](dst)
		if err != nil {
			return err
		}
		if src == nil {
			return errNull(dst)
		}
		v, err := dec(src)
		if err != nil {
			return err
		}
		*d = v
		return nil
	})
}
