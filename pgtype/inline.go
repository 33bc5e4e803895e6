package pgtype

import (
	"encoding/binary"
	"math"
	"time"
)

// Inline names what a scan plan does with the commonest binary values
// (int2/int4/int8 into *int16/*int32/*int64, float4/float8 into
// *float32/*float64, bool into *bool, timestamp and timestamptz into
// *time.Time), so that a caller scanning many rows can decode them with
// Inline.Scan, a plain call, instead of a call through the plan. It is
// InlineNone for every other plan: other types, other destinations, the
// text format, and any type with a registered Codec.
type Inline uint8

// The plans Inline.Scan can stand in for.
const (
	InlineNone Inline = iota
	inlineInt16
	inlineInt32
	inlineInt64
	inlineFloat32
	inlineFloat64
	inlineBool
	inlineTime
)

// inlinePlan is a plan whose common values Inline.Scan decodes alike.
type inlinePlan struct {
	ScanPlan
	kind Inline
}

// InlineOf returns the Inline of plan (InlineNone for most plans).
func InlineOf(plan ScanPlan) Inline {
	if p, ok := plan.(inlinePlan); ok {
		return p.kind
	}
	return InlineNone
}

// inlineKind returns the Inline for t's own binary plan into dst.
func inlineKind(t *typeInfo, format int16, dst any) Inline {
	if format != 1 || !t.known || t.kind == kindCodec {
		return InlineNone
	}
	switch dst.(type) {
	case *int16:
		if t.base == Int2OID {
			return inlineInt16
		}
	case *int32:
		if t.base == Int4OID {
			return inlineInt32
		}
	case *int64:
		if t.base == Int8OID {
			return inlineInt64
		}
	case *float32:
		if t.base == Float4OID {
			return inlineFloat32
		}
	case *float64:
		if t.base == Float8OID {
			return inlineFloat64
		}
	case *bool:
		if t.base == BoolOID {
			return inlineBool
		}
	case *time.Time:
		if t.base == TimestampOID || t.base == TimestamptzOID {
			return inlineTime
		}
	}
	return InlineNone
}

// Scan decodes src into dst as the plan of kind k does, and reports
// whether it did. It does only the common case: for NULL (nil src), a
// value of another length, a bool byte other than 0 or 1, an infinite
// timestamp, a nil or other destination, or InlineNone, it leaves dst
// alone and returns false, and the caller calls the plan, which decodes
// or reports the error.
func (k Inline) Scan(src []byte, dst any) bool {
	switch k {
	case inlineInt32:
		if d, ok := dst.(*int32); ok && d != nil && len(src) == 4 {
			*d = int32(binary.BigEndian.Uint32(src))
			return true
		}
	case inlineInt64:
		if d, ok := dst.(*int64); ok && d != nil && len(src) == 8 {
			*d = int64(binary.BigEndian.Uint64(src))
			return true
		}
	case inlineInt16:
		if d, ok := dst.(*int16); ok && d != nil && len(src) == 2 {
			*d = int16(binary.BigEndian.Uint16(src))
			return true
		}
	case inlineFloat64:
		if d, ok := dst.(*float64); ok && d != nil && len(src) == 8 {
			*d = math.Float64frombits(binary.BigEndian.Uint64(src))
			return true
		}
	case inlineFloat32:
		if d, ok := dst.(*float32); ok && d != nil && len(src) == 4 {
			*d = math.Float32frombits(binary.BigEndian.Uint32(src))
			return true
		}
	case inlineBool:
		if d, ok := dst.(*bool); ok && d != nil && len(src) == 1 && src[0] <= 1 {
			*d = src[0] == 1
			return true
		}
	case inlineTime:
		if d, ok := dst.(*time.Time); ok && d != nil && len(src) == 8 {
			us := int64(binary.BigEndian.Uint64(src))
			if us == math.MaxInt64 || us == math.MinInt64 {
				return false // ±infinity: the plan's error
			}
			*d = microsToTime(us)
			return true
		}
	}
	return false
}
