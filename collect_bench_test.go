package pgline

import (
	"context"
	"testing"
	"time"
)

// benchRow is a row of bench_rows (see benchConn).
type benchRow struct {
	ID      int32
	Name    string
	Score   float64
	Created time.Time
	Hash    string
	Flag    bool
}

// BenchmarkCollectRowsStruct: 1000 rows of 6 columns into []benchRow, by
// the struct row functions and by a Scan loop appending to a slice (the
// floor; BenchmarkSelectRows/1000 scans into variables and keeps nothing).
func BenchmarkCollectRowsStruct(b *testing.B) {
	c := benchConn(b)
	ctx := context.Background()
	const q = "SELECT id, name, score, created, hash, flag FROM bench_rows WHERE id <= 1000"
	query := func(b *testing.B) *Rows {
		rows, err := c.Query(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		return rows
	}
	check := func(b *testing.B, n int, err error) {
		if err != nil || n != 1000 {
			b.Fatal(n, err)
		}
	}
	b.Run("ScanLoop", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows := query(b)
			out := []benchRow{}
			for rows.Next() {
				var r benchRow
				if err := rows.Scan(&r.ID, &r.Name, &r.Score, &r.Created, &r.Hash, &r.Flag); err != nil {
					b.Fatal(err)
				}
				out = append(out, r)
			}
			check(b, len(out), rows.Err())
		}
	})
	b.Run("ByName", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := CollectRows(query(b), RowToStructByName[benchRow])
			check(b, len(out), err)
		}
	})
	b.Run("ByPos", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := CollectRows(query(b), RowToStructByPos[benchRow])
			check(b, len(out), err)
		}
	})
	b.Run("AddrOfByName", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := CollectRows(query(b), RowToAddrOfStructByName[benchRow])
			check(b, len(out), err)
		}
	})
	b.Run("ByName_reused_slice", func(b *testing.B) {
		b.ReportAllocs()
		out := make([]benchRow, 0, 1000)
		for b.Loop() {
			var err error
			out, err = AppendRows(out[:0], query(b), RowToStructByName[benchRow])
			check(b, len(out), err)
		}
	})
}

// fakeRow is a CollectableRow whose Scan only checks the destinations: it
// measures the row functions' own cost, without a server.
type fakeRow struct{ fds []FieldDescription }

func (r *fakeRow) FieldDescriptions() []FieldDescription { return r.fds }
func (r *fakeRow) Values() ([]any, error)                { return make([]any, len(r.fds)), nil }
func (r *fakeRow) RawValues() [][]byte                   { return make([][]byte, len(r.fds)) }
func (r *fakeRow) Scan(dest ...any) error {
	if len(dest) != len(r.fds) {
		return errNilRow
	}
	if p, ok := dest[0].(*int32); ok {
		*p = 42
	}
	return nil
}

// BenchmarkRowToOverhead: the cost per row of the row functions around
// Scan (plan look-up, scratch value, copy out), on a fake row.
func BenchmarkRowToOverhead(b *testing.B) {
	row := &fakeRow{fds: []FieldDescription{{Name: "id"}, {Name: "name"}, {Name: "score"}, {Name: "created"}, {Name: "hash"}, {Name: "flag"}}}
	b.Run("ByName", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v, err := RowToStructByName[benchRow](row); err != nil || v.ID != 42 {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("ByPos", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v, err := RowToStructByPos[benchRow](row); err != nil || v.ID != 42 {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("RowTo", func(b *testing.B) {
		one := &fakeRow{fds: row.fds[:1]}
		b.ReportAllocs()
		for b.Loop() {
			if v, err := RowTo[int32](one); err != nil || v != 42 {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("Scan", func(b *testing.B) { // the floor: Scan into a struct's fields
		var v benchRow
		b.ReportAllocs()
		for b.Loop() {
			if err := row.Scan(&v.ID, &v.Name, &v.Score, &v.Created, &v.Hash, &v.Flag); err != nil || v.ID != 42 {
				b.Fatal(v, err)
			}
		}
	})
}
