package pgtype

import (
	"sync"
	"testing"
)

// TestMapRegisterWhileInUse: registrations while other goroutines plan,
// encode and decode (run with -race) are seen whole or not at all, and
// every registration lands.
func TestMapRegisterWhileInUse(t *testing.T) {
	m := NewMap()
	const n = 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				select {
				case <-stop:
					return
				default:
				}
				var s string
				plan, err := m.PlanScan(900300, 1, &s)
				if err == nil {
					err = plan.Scan([]byte("ok"), &s)
				}
				if err != nil || s != "ok" {
					t.Errorf("Scan: %q, %v", s, err)
					return
				}
				if buf, _, _, err = m.Encode(900300, "ok", buf[:0]); err != nil || string(buf) != "ok" {
					t.Errorf("Encode: %q, %v", buf, err)
					return
				}
			}
		}()
	}
	for i := range n {
		oid := uint32(900300 + 2*i)
		if err := m.RegisterEnum("e", oid, oid+1); err != nil {
			t.Fatal(err)
		}
		if err := m.RegisterComposite("c", oid+1000, 0, oid, Int4OID); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	for i := range n {
		oid := uint32(900300 + 2*i)
		if !m.Known(oid) || !m.Known(oid+1) || !m.Known(oid+1000) {
			t.Fatalf("registration %d lost", i)
		}
		if e, ok := m.ArrayElem(oid + 1); !ok || e != oid {
			t.Fatalf("array %d: %d %v", oid+1, e, ok)
		}
	}
}

// TestMapClone: a clone knows what its original knew when cloned, and
// registrations on either are not seen by the other.
func TestMapClone(t *testing.T) {
	m := NewMap()
	if err := m.RegisterEnum("a", 900400, 0); err != nil {
		t.Fatal(err)
	}
	c := m.Clone()
	if err := m.RegisterEnum("b", 900401, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterEnum("c", 900402, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    *Map
		oid  uint32
		want bool
	}{
		{c, 900400, true}, {c, 900401, false}, {c, 900402, true},
		{m, 900400, true}, {m, 900401, true}, {m, 900402, false},
		{NewMap(), 900400, false}, {NewMap(), Int4OID, true},
	} {
		if got := tc.m.Known(tc.oid); got != tc.want {
			t.Errorf("Known(%d) = %v", tc.oid, got)
		}
	}
	// A failed registration changes nothing.
	if err := c.RegisterDomain("d", 900403, 900404, 123456789); err == nil {
		t.Fatal("domain over an unknown base registered")
	}
	if c.Known(900403) || c.Known(900404) {
		t.Fatal("a failed registration left a type behind")
	}
}

// TestRegisterRange: a user range over float8 decodes and encodes like
// the built-in ranges.
func TestRegisterRange(t *testing.T) {
	m := NewMap()
	if err := m.RegisterRange("floatrange", 900500, 900501, Float8OID); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterRange("x", 900502, 0, 900999); err == nil {
		t.Fatal("range over an unknown subtype registered")
	}
	r := Range[float64]{Lower: 1.5, Upper: 2, LowerType: Inclusive, UpperType: Exclusive}
	buf, format, null, err := m.Encode(900500, r, nil)
	if err != nil || format != 1 || null {
		t.Fatalf("Encode: %v %d %v", err, format, null)
	}
	var got Range[float64]
	plan, err := m.PlanScan(900500, 1, &got)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Scan(buf, &got); err != nil || got != r {
		t.Fatalf("got %+v, %v", got, err)
	}
	if m.ResultFormat(900501) != 1 || m.TypeName(900501) != "floatrange[]" {
		t.Fatalf("array: format %d, name %q", m.ResultFormat(900501), m.TypeName(900501))
	}
}

// TestRegisterMultirange: a multirange over a registered user range
// decodes and encodes; one over a type that is not a range is refused.
func TestRegisterMultirange(t *testing.T) {
	m := NewMap()
	if err := m.RegisterRange("floatrange", 900600, 0, Float8OID); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterMultirange("floatmultirange", 900601, 900602, 900600); err != nil {
		t.Fatal(err)
	}
	if err := m.RegisterMultirange("x", 900603, 0, Float8OID); err == nil {
		t.Fatal("multirange over float8 registered")
	}
	mr := Multirange[float64]{{Lower: 1, Upper: 2, LowerType: Inclusive, UpperType: Exclusive}, {UpperType: Unbounded, LowerType: Inclusive, Lower: 5}}
	buf, format, _, err := m.Encode(900601, mr, nil)
	if err != nil || format != 1 {
		t.Fatalf("Encode: %v, format %d", err, format)
	}
	var got Multirange[float64]
	plan, err := m.PlanScan(900601, 1, &got)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Scan(buf, &got); err != nil || len(got) != 2 || got[0] != mr[0] || got[1] != mr[1] {
		t.Fatalf("got %+v, %v", got, err)
	}
	if m.ResultFormat(900602) != 1 || m.ResultFormat(900601) != 1 {
		t.Fatal("not requested in binary")
	}
}
