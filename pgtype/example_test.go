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

// Ranges scan into Range[T]; an unbounded side has the zero T.
func ExampleRange() {
	m := pgtype.NewMap()
	var r pgtype.Range[int32]
	plan, _ := m.PlanScan(pgtype.Int4RangeOID, 0, &r)
	fmt.Println(plan.Scan([]byte("[1,10)"), &r), r.Lower, r.Upper, r.LowerType, r.UpperType)
	fmt.Println(plan.Scan([]byte("(,5)"), &r), r.LowerType, r.Upper)

	buf, format, _, err := m.Encode(pgtype.Int4RangeOID, pgtype.Range[int32]{Lower: 3, LowerType: pgtype.Inclusive, UpperType: pgtype.Unbounded}, nil)
	fmt.Printf("%x %d %v\n", buf, format, err)
	// Output:
	// <nil> 1 10 inclusive exclusive
	// <nil> unbounded 5
	// 120000000400000003 1 <nil>
}

// A composite type is registered with the OIDs of its fields (from
// pg_type and pg_attribute) and then scans into a struct.
func ExampleMap_RegisterComposite() {
	m := pgtype.NewMap()
	const itemOID = 16500 // SELECT 'item'::regtype::oid
	if err := m.RegisterComposite("item", itemOID, 0, pgtype.TextOID, pgtype.Int4OID); err != nil {
		fmt.Println(err)
		return
	}
	var it struct {
		Name  string
		Count int32
	}
	plan, _ := m.PlanScan(itemOID, 0, &it)
	fmt.Println(plan.Scan([]byte(`("a ""b""",3)`), &it), it.Name, it.Count)

	buf, format, _, err := m.Encode(itemOID, it, nil)
	fmt.Printf("%x %d %v\n", buf, format, err)
	// Output:
	// <nil> a "b" 3
	// 0000000200000019000000056120226222000000170000000400000003 1 <nil>
}
