package pgtype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Binary layouts of the geometric types (point_send, lseg_send, …), all
// coordinates float8:
//
//	point    x, y
//	lseg     x1, y1, x2, y2
//	box      x1, y1 (upper right), x2, y2 (lower left)
//	path     uint8 closed (0 open, anything else closed), int32 npts > 0, npts × (x, y)
//	polygon  int32 npts > 0, npts × (x, y)
//	line     A, B, C (not A and B both zero)
//	circle   x, y (center), r (not negative)
//
// Text (geo_text.go): (x,y); [(x1,y1),(x2,y2)]; (x1,y1),(x2,y2);
// ((x1,y1),…) closed and [(x1,y1),…] open; ((x1,y1),…); {A,B,C};
// <(x,y),r>.

// Point is a PostgreSQL point, (x,y). It is the default Go type of point
// (DecodeValue).
type Point struct {
	X, Y float64
}

// Lseg is a PostgreSQL lseg, the line segment from P[0] to P[1]:
// [(x1,y1),(x2,y2)].
type Lseg struct {
	P [2]Point
}

// Box is a PostgreSQL box: P[0] is the upper right corner and P[1] the
// lower left one, as the server stores and prints them:
// (x1,y1),(x2,y2). The server puts the coordinates of a box it receives
// in that order, so a Box may be encoded with any two opposite corners.
type Box struct {
	P [2]Point
}

// Path is a PostgreSQL path: closed, ((x1,y1),…), or open, [(x1,y1),…].
// A path has at least one point.
type Path struct {
	P      []Point
	Closed bool
}

// Polygon is a PostgreSQL polygon, ((x1,y1),…), with at least one point.
type Polygon struct {
	P []Point
}

// Line is a PostgreSQL line, the infinite line A·x + B·y + C = 0: {A,B,C}.
// A and B are not both zero (the server holds |v| ≤ 1e-6 as zero there).
type Line struct {
	A, B, C float64
}

// Circle is a PostgreSQL circle with center P and radius R: <(x,y),r>. R
// is not negative (it may be NaN).
type Circle struct {
	P Point
	R float64
}

// maxGeoPoints is the largest point count of a path or polygon the server
// accepts (its size must fit an int32).
const maxGeoPoints = (math.MaxInt32 - 64) / 16

// lineZero is the server's tolerance (EPSILON) for "A and B are zero".
const lineZero = 1e-6

var (
	errNoPoints   = errors.New("no points: a path or polygon has at least one")
	errLineAB     = errors.New("invalid line: A and B cannot both be zero")
	errNegRadius  = errors.New("negative circle radius")
	errManyPoints = fmt.Errorf("more than %d points", maxGeoPoints)
)

func getFloat8(b []byte) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b)) }

func getPoint(b []byte) Point { return Point{getFloat8(b), getFloat8(b[8:])} }

// appendFloat8 appends f in binary, NaN in the server's canonical bit
// pattern.
func appendFloat8(b []byte, f float64) []byte {
	if f != f {
		return binary.BigEndian.AppendUint64(b, 0x7ff8000000000000)
	}
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

func appendPointBinary(b []byte, p Point) []byte { return appendFloat8(appendFloat8(b, p.X), p.Y) }

func checkLine(l Line) error {
	if math.Abs(l.A) <= lineZero && math.Abs(l.B) <= lineZero {
		return errLineAB
	}
	return nil
}

func decodePoint(t *typeInfo, format int16, src []byte) (Point, error) {
	if format == 0 {
		return parsePoint(t, src)
	}
	if len(src) != 16 {
		return Point{}, errLen(t, len(src))
	}
	return getPoint(src), nil
}

func decodeLseg(t *typeInfo, format int16, src []byte) (Lseg, error) {
	if format == 0 {
		return parseLseg(t, src)
	}
	if len(src) != 32 {
		return Lseg{}, errLen(t, len(src))
	}
	return Lseg{P: [2]Point{getPoint(src), getPoint(src[16:])}}, nil
}

func decodeBox(t *typeInfo, format int16, src []byte) (Box, error) {
	if format == 0 {
		return parseBox(t, src)
	}
	if len(src) != 32 {
		return Box{}, errLen(t, len(src))
	}
	return Box{P: [2]Point{getPoint(src), getPoint(src[16:])}}, nil
}

func decodeLine(t *typeInfo, format int16, src []byte) (Line, error) {
	if format == 0 {
		return parseLine(t, src)
	}
	if len(src) != 24 {
		return Line{}, errLen(t, len(src))
	}
	l := Line{A: getFloat8(src), B: getFloat8(src[8:]), C: getFloat8(src[16:])}
	if err := checkLine(l); err != nil {
		return Line{}, decodeErr(t, 1, "%v", err)
	}
	return l, nil
}

func decodeCircle(t *typeInfo, format int16, src []byte) (Circle, error) {
	if format == 0 {
		return parseCircle(t, src)
	}
	if len(src) != 24 {
		return Circle{}, errLen(t, len(src))
	}
	c := Circle{P: getPoint(src), R: getFloat8(src[16:])}
	if c.R < 0 {
		return Circle{}, decodeErr(t, 1, "%v", errNegRadius)
	}
	return c, nil
}

// decodePoints decodes an int32 point count and the points after it,
// which must fill src exactly.
func decodePoints(t *typeInfo, src []byte) ([]Point, error) {
	if len(src) < 4 {
		return nil, decodeErr(t, 1, "%d bytes, want at least 4", len(src))
	}
	n := int32(binary.BigEndian.Uint32(src))
	src = src[4:]
	if n <= 0 || int64(n)*16 != int64(len(src)) {
		return nil, decodeErr(t, 1, "%d points in %d bytes", n, len(src))
	}
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = getPoint(src[16*i:])
	}
	return pts, nil
}

func decodePath(t *typeInfo, format int16, src []byte) (Path, error) {
	if format == 0 {
		return parsePath(t, src)
	}
	if len(src) < 1 {
		return Path{}, decodeErr(t, 1, "no closed flag")
	}
	pts, err := decodePoints(t, src[1:])
	if err != nil {
		return Path{}, err
	}
	return Path{P: pts, Closed: src[0] != 0}, nil
}

func decodePolygon(t *typeInfo, format int16, src []byte) (Polygon, error) {
	if format == 0 {
		return parsePolygon(t, src)
	}
	pts, err := decodePoints(t, src)
	if err != nil {
		return Polygon{}, err
	}
	return Polygon{P: pts}, nil
}

// decodeGeo decodes a value of a geometric type into its Go type.
func decodeGeo(t *typeInfo, format int16, src []byte) (any, error) {
	switch t.kind {
	case kindPoint:
		return decodePoint(t, format, src)
	case kindLseg:
		return decodeLseg(t, format, src)
	case kindBox:
		return decodeBox(t, format, src)
	case kindPath:
		return decodePath(t, format, src)
	case kindPolygon:
		return decodePolygon(t, format, src)
	case kindLine:
		return decodeLine(t, format, src)
	case kindCircle:
		return decodeCircle(t, format, src)
	}
	return nil, fmt.Errorf("pgtype: %s is not a geometric type", t.name)
}

// planGeo plans each geometric type into a pointer to its Go type. The
// fixed-size ones decode without allocating.
func planGeo(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *Point:
		if t.kind == kindPoint {
			return valuePlan(func(src []byte) (Point, error) { return decodePoint(t, format, src) })
		}
	case *Lseg:
		if t.kind == kindLseg {
			return valuePlan(func(src []byte) (Lseg, error) { return decodeLseg(t, format, src) })
		}
	case *Box:
		if t.kind == kindBox {
			return valuePlan(func(src []byte) (Box, error) { return decodeBox(t, format, src) })
		}
	case *Path:
		if t.kind == kindPath {
			return valuePlan(func(src []byte) (Path, error) { return decodePath(t, format, src) })
		}
	case *Polygon:
		if t.kind == kindPolygon {
			return valuePlan(func(src []byte) (Polygon, error) { return decodePolygon(t, format, src) })
		}
	case *Line:
		if t.kind == kindLine {
			return valuePlan(func(src []byte) (Line, error) { return decodeLine(t, format, src) })
		}
	case *Circle:
		if t.kind == kindCircle {
			return valuePlan(func(src []byte) (Circle, error) { return decodeCircle(t, format, src) })
		}
	}
	return nil
}

// appendGeoText appends the server's text form of a geometric value.
func appendGeoText(b []byte, t *typeInfo, format int16, src []byte) ([]byte, error) {
	v, err := decodeGeo(t, format, src)
	if err != nil {
		return nil, err
	}
	return appendGeoValueText(b, v), nil
}

// appendGeoValueText appends the text form of v, one of the geometric Go
// types.
func appendGeoValueText(b []byte, v any) []byte {
	switch v := v.(type) {
	case Point:
		return appendPointText(b, v)
	case Lseg:
		return append(appendPointsText(append(b, '['), v.P[:]), ']')
	case Box:
		return appendPointsText(b, v.P[:])
	case Path:
		if v.Closed {
			return append(appendPointsText(append(b, '('), v.P), ')')
		}
		return append(appendPointsText(append(b, '['), v.P), ']')
	case Polygon:
		return append(appendPointsText(append(b, '('), v.P), ')')
	case Line:
		b = appendFloat8Text(append(b, '{'), v.A)
		b = appendFloat8Text(append(b, ','), v.B)
		return append(appendFloat8Text(append(b, ','), v.C), '}')
	case Circle:
		b = appendPointText(append(b, '<'), v.P)
		return append(appendFloat8Text(append(b, ','), v.R), '>')
	}
	return b
}

func appendPointText(b []byte, p Point) []byte {
	b = appendFloat8Text(append(b, '('), p.X)
	return append(appendFloat8Text(append(b, ','), p.Y), ')')
}

func appendPointsText(b []byte, pts []Point) []byte {
	for i, p := range pts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPointText(b, p)
	}
	return b
}

// geoKind returns the kind of the type a geometric Go value encodes as.
func geoKind(arg any) kind {
	switch arg.(type) {
	case Point:
		return kindPoint
	case Lseg:
		return kindLseg
	case Box:
		return kindBox
	case Path:
		return kindPath
	case Polygon:
		return kindPolygon
	case Line:
		return kindLine
	case Circle:
		return kindCircle
	}
	return kindText
}

// encodeGeo encodes a geometric Go value for a parameter of its type, and
// as its text for text parameters.
func encodeGeo(t *typeInfo, arg any, buf []byte) ([]byte, int16, bool, error) {
	if t.kind == kindText {
		return appendGeoValueText(buf, arg), textFormat(t), false, nil
	}
	if t.kind != geoKind(arg) {
		return buf, 0, false, encErr(t, arg, errUnsupported)
	}
	switch v := arg.(type) {
	case Point:
		buf = appendPointBinary(buf, v)
	case Lseg:
		buf = appendPointBinary(appendPointBinary(buf, v.P[0]), v.P[1])
	case Box:
		buf = appendPointBinary(appendPointBinary(buf, v.P[0]), v.P[1])
	case Path:
		closed := byte(0)
		if v.Closed {
			closed = 1
		}
		out, err := appendPointsBinary(append(buf, closed), v.P)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		buf = out
	case Polygon:
		out, err := appendPointsBinary(buf, v.P)
		if err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		buf = out
	case Line:
		if err := checkLine(v); err != nil {
			return buf, 0, false, encErr(t, arg, err)
		}
		buf = appendFloat8(appendFloat8(appendFloat8(buf, v.A), v.B), v.C)
	case Circle:
		if v.R < 0 {
			return buf, 0, false, encErr(t, arg, errNegRadius)
		}
		buf = appendFloat8(appendPointBinary(buf, v.P), v.R)
	}
	return buf, 1, false, nil
}

// appendPointsBinary appends the int32 count and the points of a path or
// polygon.
func appendPointsBinary(buf []byte, pts []Point) ([]byte, error) {
	switch {
	case len(pts) == 0:
		return buf, errNoPoints
	case len(pts) > maxGeoPoints:
		return buf, errManyPoints
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(pts)))
	for _, p := range pts {
		buf = appendPointBinary(buf, p)
	}
	return buf, nil
}
