package pgtype

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// Binary inet/cidr layout (inet_send): uint8 family (2 IPv4, 3 IPv6),
// uint8 mask bits, uint8 is_cidr, uint8 address length (4 or 16), then
// the address bytes. Text: 192.168.1.5/24, or the bare address for an
// inet with a full mask; cidr always shows its mask (10.0.0.0/8).

const (
	pgAFInet  = 2
	pgAFInet6 = 3
)

// errNotHost is the reason for an inet value with a mask scanned into a
// netip.Addr.
var errNotHost = errors.New("the value has a netmask; scan into netip.Prefix")

// decodeInet returns the address and mask of an inet or cidr value. The
// address keeps its host bits (an inet 192.168.1.5/24 is not masked).
func decodeInet(t *typeInfo, format int16, src []byte) (netip.Prefix, error) {
	if format == 0 {
		s := string(src)
		if i := indexByte(src, '/'); i >= 0 {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return netip.Prefix{}, decodeErr(t, 0, "%q", clip(src))
			}
			return p, nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, decodeErr(t, 0, "%q", clip(src))
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	if len(src) < 4 {
		return netip.Prefix{}, decodeErr(t, 1, "%d bytes, want at least 4", len(src))
	}
	family, bits, isCIDR, n := src[0], int(src[1]), src[2], int(src[3])
	var a netip.Addr
	switch {
	case isCIDR > 1:
		return netip.Prefix{}, decodeErr(t, 1, "is_cidr %d", isCIDR)
	case len(src) != 4+n:
		return netip.Prefix{}, decodeErr(t, 1, "%d address bytes in %d", n, len(src)-4)
	case family == pgAFInet && n == 4:
		a = netip.AddrFrom4([4]byte(src[4:8]))
	case family == pgAFInet6 && n == 16:
		a = netip.AddrFrom16([16]byte(src[4:20]))
	default:
		return netip.Prefix{}, decodeErr(t, 1, "family %d with %d address bytes", family, n)
	}
	if bits > a.BitLen() {
		return netip.Prefix{}, decodeErr(t, 1, "%d mask bits for a %d-bit address", bits, a.BitLen())
	}
	return netip.PrefixFrom(a, bits), nil
}

// appendInetText appends the server's text form of p for t.
func appendInetText(b []byte, t *typeInfo, p netip.Prefix) []byte {
	b = p.Addr().AppendTo(b)
	if t.base == CIDROID || p.Bits() != p.Addr().BitLen() {
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(p.Bits()), 10)
	}
	return b
}

// planInet plans inet and cidr into *netip.Prefix, *netip.Addr (a value
// with a full mask only) and *net.IPNet.
func planInet(t *typeInfo, format int16, dst any) ScanPlan {
	switch dst.(type) {
	case *netip.Prefix:
		return valuePlan(func(src []byte) (netip.Prefix, error) { return decodeInet(t, format, src) })
	case *netip.Addr:
		return valuePlan(func(src []byte) (netip.Addr, error) {
			p, err := decodeInet(t, format, src)
			if err != nil {
				return netip.Addr{}, err
			}
			if p.Bits() != p.Addr().BitLen() {
				return netip.Addr{}, scanErr(t, p.String(), (*netip.Addr)(nil), errNotHost)
			}
			return p.Addr(), nil
		})
	case *net.IPNet:
		return valuePlan(func(src []byte) (net.IPNet, error) {
			p, err := decodeInet(t, format, src)
			if err != nil {
				return net.IPNet{}, err
			}
			a := p.Addr()
			return net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}, nil
		})
	}
	return nil
}

// encodeInet encodes p for inet and cidr parameters (host bits set are an
// error for cidr), and as its text for text parameters.
func encodeInet(t *typeInfo, arg any, p netip.Prefix, buf []byte) ([]byte, int16, bool, error) {
	a := p.Addr()
	if !p.IsValid() || a.Zone() != "" {
		return buf, 0, false, encErr(t, arg, fmt.Errorf("invalid or zoned address %v", p))
	}
	switch t.kind {
	case kindInet:
		isCIDR := byte(0)
		if t.base == CIDROID {
			if p.Masked() != p {
				return buf, 0, false, encErr(t, arg, fmt.Errorf("%v has bits set right of its mask", p))
			}
			isCIDR = 1
		}
		family := byte(pgAFInet6)
		if a.Is4() {
			family = pgAFInet
		}
		raw := a.AsSlice()
		buf = append(buf, family, byte(p.Bits()), isCIDR, byte(len(raw)))
		return append(buf, raw...), 1, false, nil
	case kindText:
		return appendInetText(buf, t, p), textFormat(t), false, nil
	}
	return buf, 0, false, encErr(t, arg, errUnsupported)
}

// inetArg converts the inet argument types to a prefix; ok is false for
// other types. A nil *net.IPNet or nil net.IP is NULL.
func inetArg(arg any) (p netip.Prefix, null, ok bool, err error) {
	switch v := arg.(type) {
	case netip.Addr:
		if v.Zone() != "" {
			return p, false, true, fmt.Errorf("zoned address %v", v)
		}
		return netip.PrefixFrom(v, v.BitLen()), false, true, nil
	case netip.Prefix:
		return v, false, true, nil
	case net.IP:
		if v == nil {
			return p, true, true, nil
		}
		a, good := netip.AddrFromSlice(v)
		if !good {
			return p, false, true, fmt.Errorf("net.IP of %d bytes", len(v))
		}
		if a.Is4In6() {
			a = a.Unmap()
		}
		return netip.PrefixFrom(a, a.BitLen()), false, true, nil
	case *net.IPNet:
		if v == nil {
			return p, true, true, nil
		}
		a, good := netip.AddrFromSlice(v.IP)
		ones, bits := v.Mask.Size()
		if !good || bits == 0 {
			return p, false, true, fmt.Errorf("invalid net.IPNet %v", v)
		}
		if a.Is4In6() && bits == 32 {
			a = a.Unmap()
		}
		if a.BitLen() != bits {
			return p, false, true, fmt.Errorf("net.IPNet %v mixes address families", v)
		}
		return netip.PrefixFrom(a, ones), false, true, nil
	}
	return p, false, false, nil
}
