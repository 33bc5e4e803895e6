package main

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/strblock"
)

// dataRow builds a DataRow body of cols (binary values, none NULL).
func dataRow(cols ...[]byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(cols)))
	for _, c := range cols {
		b = binary.BigEndian.AppendUint32(b, uint32(len(c)))
		b = append(b, c...)
	}
	return b
}

// TestDecodeWideRow: the floor's decoding of bench_wide's 14 columns gets
// every value, and a row of another shape is an error, not a panic.
func TestDecodeWideRow(t *testing.T) {
	u32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	created := time.Date(2023, 6, 1, 1, 0, 0, 0, time.UTC)
	updated := created.AddDate(1, 0, 0)
	micros := func(t time.Time) []byte { return u64(uint64(t.Sub(pgEpoch).Microseconds())) }
	cols := [][]byte{u32(7), u32(0), []byte("customer 7"), []byte("user7@example.com"), []byte("city 7"),
		[]byte("country 7"), []byte("55433"), []byte("+1-555-0000007"), u64(math.Float64bits(22.75)), u64(77),
		{1}, micros(created), micros(updated), []byte("note x")}
	var v wideVals
	var block strblock.Block
	if err := decodeWideRow(dataRow(cols...), &v, &block); err != nil {
		t.Fatal(err)
	}
	want := wideVals{id: 7, grp: 0, name: "customer 7", email: "user7@example.com", city: "city 7", country: "country 7",
		zip: "55433", phone: "+1-555-0000007", amount: 22.75, qty: 77, active: true, created: created, updated: updated, note: "note x"}
	if !v.created.Equal(want.created) || !v.updated.Equal(want.updated) {
		t.Errorf("times %v %v, want %v %v", v.created, v.updated, want.created, want.updated)
	}
	v.created, v.updated, want.created, want.updated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if v != want {
		t.Errorf("decoded %+v\nwant    %+v", v, want)
	}
	full := dataRow(cols...)
	for _, bad := range [][]byte{nil, full[:1], full[:len(full)-1], dataRow(cols[:13]...), dataRow(append(cols[:13:13], nil, nil)...)} {
		if err := decodeWideRow(bad, &v, &block); err == nil {
			t.Errorf("decoded a malformed row of %d bytes", len(bad))
		}
	}
	short := append([][]byte{}, cols...)
	short[8] = u32(1) // float8 of 4 bytes
	if err := decodeWideRow(dataRow(short...), &v, &block); err == nil {
		t.Error("decoded a float8 of 4 bytes")
	}
}
