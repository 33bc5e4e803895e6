package pgtype

import "testing"

// TestFloatTextMatchesServer: a float4 or float8 read in binary into a
// *string gives the text the server prints for it (float4out/float8out
// with the default extra_float_digits): positional up to 15 (float8) or
// 6 (float4) significant integer digits, then an exponent.
func TestFloatTextMatchesServer(t *testing.T) {
	var pairs [][2]string
	for _, typ := range []string{"float4", "float8"} {
		for _, e := range []string{"0", "'-0'", "1", "-1.5", "0.1", "0.0001", "0.00001", "123456", "1234567", "1000000",
			"100000", "999999", "1e14", "1e15", "123456789012345", "1234567890123456", "3.4e38", "1.17549435e-38",
			"1.7976931348623157e308", "5e-324", "'NaN'", "'Infinity'", "'-Infinity'", "2.5e-5", "12345.678"} {
			if typ == "float4" && (e == "1.7976931348623157e308" || e == "5e-324") {
				continue
			}
			pairs = append(pairs, [2]string{typ, e})
		}
	}
	m := NewMap()
	for i, sv := range serverValues(t, pairs) {
		typ := pairs[i][0]
		oid := uint32(Float8OID)
		if typ == "float4" {
			oid = Float4OID
		}
		var s string
		plan, err := m.PlanScan(oid, 1, &s)
		if err == nil {
			err = plan.Scan(sv.bin, &s)
		}
		if err != nil || s != sv.text {
			t.Errorf("%s %s: got %q (%v), server %q", typ, pairs[i][1], s, err, sv.text)
		}
	}
}
