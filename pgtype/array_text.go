package pgtype

// textArrayParser parses the text form of an array: {1,2}, {{1,NULL},{"a
// b",x}}, with optional bounds decoration ([0:1]=) that is skipped.
type textArrayParser struct {
	t       *typeInfo
	src, s  []byte
	pos     int
	ndim    int
	dims    []int
	n       int // elements seen
	f       func(i int, elem []byte) error
	scratch []byte
	delim   byte // the element separator, arrayDelim(t.elem)
}

// parseTextArray parses a text array, calling f (when not nil) for each
// element in row-major order, and returns the dimensions (none for an
// empty array). Sub-arrays of different lengths are an error.
func parseTextArray(t *typeInfo, src []byte, f func(i int, elem []byte) error) ([]int, error) {
	p := &textArrayParser{t: t, src: src, s: src, f: f, delim: arrayDelim(t.elem)}
	p.space()
	if p.peek() == '[' { // bounds decoration: [1:3][0:1]=
		i := indexByte(p.s, '=')
		if i < 0 {
			return nil, p.bad("unterminated bounds")
		}
		p.pos = i + 1
		p.space()
	}
	for i := p.pos; i < len(p.s) && (p.s[i] == '{' || p.s[i] == ' '); i++ {
		if p.s[i] == '{' {
			p.ndim++
		}
	}
	if p.ndim == 0 {
		return nil, p.bad("missing braces")
	}
	if p.ndim > maxArrayDims {
		return nil, p.bad("more than 6 dimensions")
	}
	p.dims = make([]int, p.ndim)
	if err := p.level(0); err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.s) {
		return nil, p.bad("junk after the closing brace")
	}
	if p.n == 0 {
		return nil, nil
	}
	return p.dims, nil
}

func (p *textArrayParser) bad(why string) error {
	return decodeErr(p.t, 0, "%s in %q", why, clip(p.src))
}

func (p *textArrayParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *textArrayParser) space() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

// level parses the sub-array at p.pos (at its '{') of nesting level k.
func (p *textArrayParser) level(k int) error {
	p.pos++ // '{'
	p.space()
	if p.peek() == '}' {
		if k == 0 && p.ndim == 1 {
			p.pos++
			return nil // {}
		}
		return p.bad("empty sub-array")
	}
	count := 0
	for {
		p.space()
		if k < p.ndim-1 {
			if p.peek() != '{' {
				return p.bad("element where a sub-array was expected")
			}
			if err := p.level(k + 1); err != nil {
				return err
			}
		} else if err := p.elem(); err != nil {
			return err
		}
		count++
		p.space()
		switch p.peek() {
		case p.delim:
			p.pos++
			continue
		case '}':
			p.pos++
		default:
			return p.bad("missing comma")
		}
		break
	}
	switch {
	case p.dims[k] == 0:
		p.dims[k] = count
	case p.dims[k] != count:
		return p.bad("sub-arrays of different lengths")
	}
	return nil
}

// elem parses one element at p.pos and hands it to p.f.
func (p *textArrayParser) elem() error {
	s := p.s[p.pos:]
	var elem []byte
	if len(s) > 0 && s[0] == '"' {
		p.scratch = p.scratch[:0]
		i := 1
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' {
				i++
				if i == len(s) {
					break
				}
			}
			p.scratch = append(p.scratch, s[i])
		}
		if i >= len(s) {
			return p.bad("unterminated quoted element")
		}
		elem = p.scratch
		if elem == nil {
			elem = []byte{}
		}
		p.pos += i + 1
	} else {
		i := 0
		for i < len(s) && s[i] != p.delim && s[i] != '}' {
			if s[i] == '{' || s[i] == '"' || s[i] == '\\' {
				return p.bad("nested or malformed element")
			}
			i++
		}
		elem = s[:i]
		for len(elem) > 0 && elem[len(elem)-1] == ' ' {
			elem = elem[:len(elem)-1]
		}
		if len(elem) == 0 {
			return p.bad("empty element")
		}
		if isNullWord(elem) {
			elem = nil
		}
		p.pos += i
	}
	if p.f != nil {
		if err := p.f(p.n, elem); err != nil {
			return err
		}
	}
	p.n++
	return nil
}

// isNullWord reports whether b is NULL in any case.
func isNullWord(b []byte) bool {
	return len(b) == 4 && (b[0]|0x20) == 'n' && (b[1]|0x20) == 'u' && (b[2]|0x20) == 'l' && (b[3]|0x20) == 'l'
}
