package pgtype

import (
	"fmt"
	"net"
)

// macaddr is 6 bytes in binary (macaddr_send), macaddr8 8 bytes; the
// text form is lowercase hex pairs joined by colons (08:00:2b:01:02:03).

// decodeMacaddr returns the address bytes of a macaddr or macaddr8 value
// (a new slice).
func decodeMacaddr(t *typeInfo, format int16, src []byte) (net.HardwareAddr, error) {
	if format == 0 {
		a, err := net.ParseMAC(string(src))
		if err != nil || len(a) != t.size {
			return nil, decodeErr(t, 0, "%q", clip(src))
		}
		return a, nil
	}
	if len(src) != t.size {
		return nil, errLen(t, len(src))
	}
	return net.HardwareAddr(copyBytes(src)), nil
}

// planMacaddr plans macaddr and macaddr8 into *net.HardwareAddr.
func planMacaddr(t *typeInfo, format int16, dst any) ScanPlan {
	if _, ok := dst.(*net.HardwareAddr); ok {
		return nilablePlan(func(src []byte) (net.HardwareAddr, error) { return decodeMacaddr(t, format, src) })
	}
	return nil
}

// encodeMacaddr encodes a for macaddr (6 bytes) and macaddr8 (8 bytes, or
// 6 bytes expanded to EUI-64 as the server does) parameters, and as its
// text for text parameters.
func encodeMacaddr(t *typeInfo, a net.HardwareAddr, buf []byte) ([]byte, int16, bool, error) {
	switch t.kind {
	case kindMacaddr:
		switch {
		case len(a) == t.size:
			return append(buf, a...), 1, false, nil
		case len(a) == 6 && t.size == 8:
			return append(buf, a[0], a[1], a[2], 0xff, 0xfe, a[3], a[4], a[5]), 1, false, nil
		}
		return buf, 0, false, encErr(t, a, fmt.Errorf("%d-byte address, want %d", len(a), t.size))
	case kindText:
		return append(buf, a.String()...), textFormat(t), false, nil
	}
	return buf, 0, false, encErr(t, a, errUnsupported)
}
