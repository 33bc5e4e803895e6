package pgtype

import (
	"math"
	"strconv"
)

// This file parses and prints the text forms of the geometric types. The
// parser takes what the server's input functions take (geo_ops.c's
// path_decode and pair_decode rules), except a line given by two points
// and hexadecimal numbers; the printer gives what the server's output
// functions give with the default extra_float_digits.

// geoParser reads a geometric text value.
type geoParser struct {
	s   []byte
	pos int
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func (p *geoParser) space() {
	for p.pos < len(p.s) && isSpace(p.s[p.pos]) {
		p.pos++
	}
}

// at reports whether the next byte is c (without skipping space).
func (p *geoParser) at(c byte) bool { return p.pos < len(p.s) && p.s[p.pos] == c }

// eat consumes c when it is the next byte.
func (p *geoParser) eat(c byte) bool {
	if p.at(c) {
		p.pos++
		return true
	}
	return false
}

func (p *geoParser) done() bool { return p.pos == len(p.s) }

// float reads a float8 as float8in does: space, a decimal number, NaN,
// Infinity or Inf (any case, signed), space.
func (p *geoParser) float() (float64, bool) {
	p.space()
	s := p.s[p.pos:]
	n := 0
	if n < len(s) && (s[n] == '+' || s[n] == '-') {
		n++
	}
	var v float64
	switch word := s[n:]; {
	case hasPrefixFold(word, "infinity"), hasPrefixFold(word, "inf"):
		if hasPrefixFold(word, "infinity") {
			n += 8
		} else {
			n += 3
		}
		v = math.Inf(1)
		if s[0] == '-' {
			v = math.Inf(-1)
		}
	case hasPrefixFold(word, "nan"):
		n += 3
		v = math.NaN()
	default:
		start := n
		digits := 0
		for ; n < len(s) && s[n] >= '0' && s[n] <= '9'; n++ {
			digits++
		}
		if n < len(s) && s[n] == '.' {
			for n++; n < len(s) && s[n] >= '0' && s[n] <= '9'; n++ {
				digits++
			}
		}
		if digits == 0 || n-start > 1100 {
			return 0, false
		}
		if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
			e := n + 1
			if e < len(s) && (s[e] == '+' || s[e] == '-') {
				e++
			}
			if e < len(s) && s[e] >= '0' && s[e] <= '9' {
				for e < len(s) && s[e] >= '0' && s[e] <= '9' {
					e++
				}
				n = e
			}
		}
		f, err := strconv.ParseFloat(string(s[:n]), 64)
		if err != nil || f == 0 && nonzeroDigit(s[:n]) {
			return 0, false // beyond float8 either way: the server refuses it too
		}
		v = f
	}
	p.pos += n
	p.space()
	return v, true
}

// nonzeroDigit reports whether the mantissa of the number s has a digit
// other than 0.
func nonzeroDigit(s []byte) bool {
	for _, c := range s {
		switch {
		case c == 'e' || c == 'E':
			return false
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with the lower-case ASCII word,
// in any case.
func hasPrefixFold(s []byte, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if s[i]|0x20 != word[i] {
			return false
		}
	}
	return true
}

// pair reads x,y or (x,y), and the space after a closing parenthesis.
func (p *geoParser) pair() (Point, bool) {
	p.space()
	paren := p.eat('(')
	x, ok := p.float()
	if !ok || !p.eat(',') {
		return Point{}, false
	}
	y, ok := p.float()
	if !ok {
		return Point{}, false
	}
	if paren {
		if !p.eat(')') {
			return Point{}, false
		}
		p.space()
	}
	return Point{x, y}, true
}

// path reads len(pts) points as path_decode does: an optional [ (when
// openOK) or ( around them, each point x,y or (x,y), separated by
// commas. open reports the [ form.
func (p *geoParser) path(openOK bool, pts []Point) (open, ok bool) {
	p.space()
	depth := 0
	switch {
	case p.at('['):
		if !openOK {
			return false, false
		}
		open = true
		depth++
		p.pos++
	case p.at('('):
		q := p.pos + 1
		for q < len(p.s) && isSpace(p.s[q]) {
			q++
		}
		if q < len(p.s) && p.s[q] == '(' || lastIndexByte(p.s, '(') == p.pos {
			// "((x,y),…)", or the only ( of "(x,y,…)": a delimiter
			// around the points rather than around the first one.
			depth++
			p.pos = q
		}
	}
	for i := range pts {
		pt, ok := p.pair()
		if !ok {
			return false, false
		}
		pts[i] = pt
		p.eat(',')
	}
	for ; depth > 0; depth-- {
		if !p.eat(')') && !(open && depth == 1 && p.eat(']')) {
			return false, false
		}
		p.space()
	}
	return open, true
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// pairCount returns the number of points of a path or polygon text, from
// its commas (an odd number: 2n-1 for n points), or -1.
func pairCount(s []byte) int {
	n := 0
	for _, c := range s {
		if c == ',' {
			n++
		}
	}
	if n%2 == 0 {
		return -1
	}
	return (n + 1) / 2
}

func geoSyntax(t *typeInfo, src []byte) error {
	return decodeErr(t, 0, "%q is not a %s", clip(src), t.name)
}

func parsePoint(t *typeInfo, src []byte) (Point, error) {
	p := geoParser{s: src}
	pt, ok := p.pair()
	if !ok || !p.done() {
		return Point{}, geoSyntax(t, src)
	}
	return pt, nil
}

func parseLseg(t *typeInfo, src []byte) (Lseg, error) {
	var l Lseg
	p := geoParser{s: src}
	if _, ok := p.path(true, l.P[:]); !ok || !p.done() {
		return Lseg{}, geoSyntax(t, src)
	}
	return l, nil
}

// parseBox parses a box and orders its corners as the server does:
// upper right first (NaN counts as larger than any number).
func parseBox(t *typeInfo, src []byte) (Box, error) {
	var b Box
	p := geoParser{s: src}
	if _, ok := p.path(false, b.P[:]); !ok || !p.done() {
		return Box{}, geoSyntax(t, src)
	}
	if pgFloatLess(b.P[0].X, b.P[1].X) {
		b.P[0].X, b.P[1].X = b.P[1].X, b.P[0].X
	}
	if pgFloatLess(b.P[0].Y, b.P[1].Y) {
		b.P[0].Y, b.P[1].Y = b.P[1].Y, b.P[0].Y
	}
	return b, nil
}

// pgFloatLess is the server's float8 order: NaN after everything.
func pgFloatLess(a, b float64) bool {
	switch {
	case a != a:
		return false
	case b != b:
		return true
	}
	return a < b
}

func parsePath(t *typeInfo, src []byte) (Path, error) {
	n := pairCount(src)
	if n <= 0 {
		return Path{}, geoSyntax(t, src)
	}
	p := geoParser{s: src}
	p.space()
	depth := 0
	if p.at('(') && lastIndexByte(src, '(') == p.pos { // "(x1,y1,x2,y2)"
		depth++
		p.pos++
	}
	pts := make([]Point, n)
	open, ok := p.path(true, pts)
	if !ok || depth == 1 && !p.eat(')') {
		return Path{}, geoSyntax(t, src)
	}
	p.space()
	if !p.done() {
		return Path{}, geoSyntax(t, src)
	}
	return Path{P: pts, Closed: !open}, nil
}

func parsePolygon(t *typeInfo, src []byte) (Polygon, error) {
	n := pairCount(src)
	if n <= 0 {
		return Polygon{}, geoSyntax(t, src)
	}
	pts := make([]Point, n)
	p := geoParser{s: src}
	if _, ok := p.path(false, pts); !ok || !p.done() {
		return Polygon{}, geoSyntax(t, src)
	}
	return Polygon{P: pts}, nil
}

// parseLine parses {A,B,C}. (The server also takes a line as two of its
// points, which it never prints.)
func parseLine(t *typeInfo, src []byte) (Line, error) {
	p := geoParser{s: src}
	p.space()
	if !p.eat('{') {
		return Line{}, geoSyntax(t, src)
	}
	var v [3]float64
	for i := range v {
		f, ok := p.float()
		if !ok || i < 2 && !p.eat(',') {
			return Line{}, geoSyntax(t, src)
		}
		v[i] = f
	}
	if !p.eat('}') {
		return Line{}, geoSyntax(t, src)
	}
	p.space()
	if !p.done() {
		return Line{}, geoSyntax(t, src)
	}
	l := Line{A: v[0], B: v[1], C: v[2]}
	if err := checkLine(l); err != nil {
		return Line{}, decodeErr(t, 0, "%v", err)
	}
	return l, nil
}

// parseCircle parses <(x,y),r>, ((x,y),r), (x,y),r or x,y,r.
func parseCircle(t *typeInfo, src []byte) (Circle, error) {
	p := geoParser{s: src}
	p.space()
	depth := 0
	switch {
	case p.eat('<'):
		depth++
	case p.at('('):
		q := p.pos + 1
		for q < len(src) && isSpace(src[q]) {
			q++
		}
		if q < len(src) && src[q] == '(' {
			depth++
			p.pos = q
		}
	}
	var c Circle
	pt, ok := p.pair()
	if !ok {
		return Circle{}, geoSyntax(t, src)
	}
	c.P = pt
	p.eat(',')
	if c.R, ok = p.float(); !ok {
		return Circle{}, geoSyntax(t, src)
	}
	if c.R < 0 {
		return Circle{}, decodeErr(t, 0, "%v", errNegRadius)
	}
	for ; depth > 0; depth-- {
		if !p.eat(')') && !(depth == 1 && p.eat('>')) {
			return Circle{}, geoSyntax(t, src)
		}
		p.space()
	}
	if !p.done() {
		return Circle{}, geoSyntax(t, src)
	}
	return c, nil
}
