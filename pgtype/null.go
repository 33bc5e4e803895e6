package pgtype

import (
	"reflect"
	"strconv"
)

// pointerPlan plans a **T destination: NULL sets *dst to nil; any other
// value is decoded into a new T through the plan for *T.
func (m *Map) pointerPlan(oid uint32, format int16, rt reflect.Type) (ScanPlan, error) {
	elem := rt.Elem().Elem() // T
	inner, err := m.PlanScan(oid, format, reflect.New(elem).Interface())
	if err != nil {
		return nil, err
	}
	return planFunc(func(src []byte, dst any) error {
		if reflect.TypeOf(dst) != rt {
			return errPlanType(dst, rt)
		}
		v := reflect.ValueOf(dst).Elem()
		if src == nil {
			v.SetZero()
			return nil
		}
		nv := reflect.New(elem)
		if err := inner.Scan(src, nv.Interface()); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	}), nil
}

// Reflect prototypes of the base types of named destinations.
var (
	int64Type   = reflect.TypeFor[int64]()
	uint64Type  = reflect.TypeFor[uint64]()
	float64Type = reflect.TypeFor[float64]()
	stringType  = reflect.TypeFor[string]()
	boolType    = reflect.TypeFor[bool]()
	bytesType   = reflect.TypeFor[[]byte]()
	uuidType    = reflect.TypeFor[[16]byte]()
)

// reflectPlan plans destinations whose type is a named type of a base kind
// (type ID int32, type Name string, type UUID [16]byte, ...) through the
// plan of the base type, or returns nil.
func (m *Map) reflectPlan(oid uint32, format int16, rt reflect.Type) ScanPlan {
	et := rt.Elem()
	var base reflect.Type
	switch et.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		base = int64Type
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		base = uint64Type
	case reflect.Float32, reflect.Float64:
		base = float64Type
	case reflect.String:
		base = stringType
	case reflect.Bool:
		base = boolType
	case reflect.Slice:
		if et.Elem().Kind() == reflect.Uint8 {
			base = bytesType
		}
	case reflect.Array:
		if et.Len() == 16 && et.Elem().Kind() == reflect.Uint8 {
			base = uuidType
		}
	}
	if base == nil || base == et {
		return nil
	}
	inner, err := m.PlanScan(oid, format, reflect.New(base).Interface())
	if err != nil {
		return nil
	}
	return planFunc(func(src []byte, dst any) error {
		if reflect.TypeOf(dst) != rt {
			return errPlanType(dst, rt)
		}
		tmp := reflect.New(base)
		if err := inner.Scan(src, tmp.Interface()); err != nil {
			return err
		}
		v := reflect.ValueOf(dst).Elem()
		b := tmp.Elem()
		switch base {
		case int64Type:
			if v.OverflowInt(b.Int()) {
				return &ScanError{Type: m.TypeName(oid), Value: itoa64(b.Int()), Dest: rt.String(), Err: ErrOutOfRange}
			}
			v.SetInt(b.Int())
		case uint64Type:
			if v.OverflowUint(b.Uint()) {
				return &ScanError{Type: m.TypeName(oid), Dest: rt.String(), Err: ErrOutOfRange}
			}
			v.SetUint(b.Uint())
		case float64Type:
			if v.OverflowFloat(b.Float()) {
				return &ScanError{Type: m.TypeName(oid), Dest: rt.String(), Err: ErrOutOfRange}
			}
			v.SetFloat(b.Float())
		default:
			v.Set(b.Convert(et))
		}
		return nil
	})
}

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }
