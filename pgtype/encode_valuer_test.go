package pgtype

import (
	"database/sql/driver"
	"errors"
	"testing"
)

// ptrValuer implements driver.Valuer with a pointer receiver and handles a
// nil receiver.
type ptrValuer struct{ s string }

func (p *ptrValuer) Value() (driver.Value, error) {
	if p == nil {
		return "was-nil", nil
	}
	return p.s, nil
}

// derefValuer implements driver.Valuer with a pointer receiver that
// dereferences it: Value panics on a nil pointer.
type derefValuer struct{ s string }

func (p *derefValuer) Value() (driver.Value, error) { return p.s, nil }

// nilValuer implements driver.Valuer with a pointer receiver and gives nil
// for a nil receiver.
type nilValuer struct{}

func (p *nilValuer) Value() (driver.Value, error) {
	if p == nil {
		return nil, nil
	}
	return "set", nil
}

// A nil pointer is SQL NULL without a call to Value only when the pointed-to
// type implements driver.Valuer with a value receiver (calling Value would
// dereference nil); otherwise Value is called on the nil pointer, as
// database/sql does (callValuerValue).
func TestEncodeNilPointerValuer(t *testing.T) {
	m := NewMap()
	for _, tc := range []struct {
		name string
		arg  any
		null bool
		want string
	}{
		{"pointer receiver, nil", (*ptrValuer)(nil), false, "was-nil"},
		{"pointer receiver, set", &ptrValuer{"x"}, false, "x"},
		{"pointer receiver returning nil", (*nilValuer)(nil), true, ""},
		{"value receiver, nil", (*valuer)(nil), true, ""},
		{"value receiver, set", &valuer{"y"}, false, "y"},
		{"pointer to a nil pointer receiver", func() **ptrValuer { var p *ptrValuer; return &p }(), false, "was-nil"},
		{"nil pointer to a nil-pointer receiver", (**ptrValuer)(nil), true, ""},
		{"array element", []*ptrValuer{nil, {"z"}}, false, ""},
	} {
		oid := uint32(TextOID)
		if tc.name == "array element" {
			oid = TextArrayOID
		}
		out, _, null, err := m.Encode(oid, tc.arg, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if null != tc.null {
			t.Errorf("%s: null = %v, want %v", tc.name, null, tc.null)
			continue
		}
		if tc.name == "array element" {
			want, _, _, _ := m.Encode(TextArrayOID, []string{"was-nil", "z"}, nil)
			if string(out) != string(want) {
				t.Errorf("%s: % x, want % x", tc.name, out, want)
			}
			continue
		}
		if !null && string(out) != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, out, tc.want)
		}
	}
}

// A Value method that panics on its nil pointer receiver gives an
// EncodeError, not a panic.
func TestEncodeNilPointerValuerPanics(t *testing.T) {
	m := NewMap()
	_, _, null, err := m.Encode(TextOID, (*derefValuer)(nil), nil)
	var ee *EncodeError
	if !errors.As(err, &ee) || null {
		t.Fatalf("Encode((*derefValuer)(nil)): null %v, %v; want an *EncodeError", null, err)
	}
	if out, _, _, err := m.Encode(TextOID, &derefValuer{"ok"}, nil); err != nil || string(out) != "ok" {
		t.Errorf("Encode(&derefValuer{}): %q, %v", out, err)
	}
}

// TestEncodeNilPointerValuerCodec: the same rule for a type registered
// with a Codec of its own, when the Codec does not take the argument.
func TestEncodeNilPointerValuerCodec(t *testing.T) {
	m := NewMap()
	if err := m.RegisterType(Type{Name: "userpoint", OID: userPointOID, ArrayOID: userPointArrayOID, Codec: pointCodec{}}); err != nil {
		t.Fatal(err)
	}
	out, format, null, err := m.Encode(userPointOID, (*ptrValuer)(nil), nil)
	if err != nil || null || format != 0 || string(out) != "was-nil" {
		t.Errorf("pointer receiver, nil: %q %d %v %v", out, format, null, err)
	}
	if _, _, null, err := m.Encode(userPointOID, (*valuer)(nil), nil); err != nil || !null {
		t.Errorf("value receiver, nil: null %v, %v", null, err)
	}
	if _, _, null, err := m.Encode(userPointOID, (*pgPoint)(nil), nil); err != nil || !null {
		t.Errorf("nil *pgPoint: null %v, %v", null, err)
	}
}
