package pgtype_test

import (
	"fmt"

	"github.com/pgline/pgline/pgtype"
)

func Example() {
	m := pgtype.NewMap()

	// Encode an argument for an int8 parameter.
	buf, format, null, err := m.Encode(pgtype.Int8OID, 40000, nil)
	fmt.Printf("%x %d %v %v\n", buf, format, null, err)

	// Decode it into an int64, then into an int16, which it does not fit.
	var n int64
	plan, _ := m.PlanScan(pgtype.Int8OID, 1, &n)
	fmt.Println(plan.Scan(buf, &n), n)
	var small int16
	plan, _ = m.PlanScan(pgtype.Int8OID, 1, &small)
	fmt.Println(plan.Scan(buf, &small))
	// Output:
	// 0000000000009c40 1 false <nil>
	// <nil> 40000
	// cannot scan int8 value 40000 into *int16: out of range
}
