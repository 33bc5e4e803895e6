package pgline

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/strblock"
	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtype"
)

// scanBenchRows returns Rows positioned on one row of bench_rows' shape
// (int4, text, float8, timestamptz, text, bool, in the formats pgline asks
// for), with no connection behind it beyond its type map: Scan alone.
func scanBenchRows(tb testing.TB) *Rows {
	tb.Helper()
	m := pgtype.NewMap()
	oids := []uint32{pgtype.Int4OID, pgtype.TextOID, pgtype.Float8OID, pgtype.TimestamptzOID, pgtype.TextOID, pgtype.BoolOID}
	fields := make([]wire.FieldDescription, len(oids))
	for i, oid := range oids {
		fields[i] = wire.FieldDescription{Name: "c", DataTypeOID: oid}
	}
	sd := &session.StmtDesc{}
	sd.SetFields(fields, m)
	row, err := wire.ParseDataRow(scanBenchBody(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return &Rows{c: &Conn{s: session.Session{Types: m}}, res: session.Result{Sd: sd, Row: row}}
}

// scanBenchBody returns the DataRow body of one bench_rows row, in
// binary but for its text columns.
func scanBenchBody(tb testing.TB) []byte {
	tb.Helper()
	vals := [][]byte{
		binary.BigEndian.AppendUint32(nil, 4711),
		[]byte("name 4711"),
		binary.BigEndian.AppendUint64(nil, math.Float64bits(2355.5)),
		binary.BigEndian.AppendUint64(nil, uint64(time.Hour/time.Microsecond)),
		[]byte("1c2b2b2a5bd7f5b47a5e5b0a7e2b4f4c"),
		{1},
	}
	msg, err := wire.AppendDataRow(nil, vals)
	if err != nil {
		tb.Fatal(err)
	}
	return msg[5:]
}

// BenchmarkScanRow: Rows.Scan of one six-column row into typed variables,
// 1,000 times per op (the client's decoding share of rows/1000, without
// the socket or the server), each time from the row as readRow leaves it
// (its lengths not yet checked).
func BenchmarkScanRow(b *testing.B) {
	r := scanBenchRows(b)
	body := scanBenchBody(b)
	var v benchRow
	dest := v.dest()
	b.ReportAllocs()
	for b.Loop() {
		for range 1000 {
			r.res.Row, _ = wire.SplitDataRow(body)
			if err := r.Scan(dest...); err != nil {
				b.Fatal(err)
			}
		}
	}
	checkScanBenchRow(b, &v)
}

// checkScanBenchRow checks that v holds scanBenchBody's row.
func checkScanBenchRow(b *testing.B, v *benchRow) {
	if v.ID != 4711 || v.Name != "name 4711" || v.Score != 2355.5 || v.Hash[0] != '1' || !v.Flag || v.Created.Unix() != 946688400 {
		b.Fatal(*v)
	}
}

// BenchmarkScanRowFloor decodes the same row as BenchmarkScanRow the way
// the bench command's floor client does (bench/driver_floor.go,
// decodeBenchRow): a walk of the row with each column's decoding written
// out for its known type, no plans. It is the floor BenchmarkScanRow is
// judged against.
func BenchmarkScanRowFloor(b *testing.B) {
	body := scanBenchBody(b)
	var v benchRow
	var block strblock.Block
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		for range 1000 {
			var cols [6][]byte
			off := 2
			for i := range cols {
				l := int(int32(binary.BigEndian.Uint32(body[off:])))
				off += 4
				if l < 0 || l > len(body)-off {
					b.Fatal("bad length")
				}
				cols[i] = body[off : off+l]
				off += l
			}
			if len(cols[0]) != 4 || len(cols[2]) != 8 || len(cols[3]) != 8 || len(cols[5]) != 1 {
				b.Fatal("bad sizes")
			}
			v.ID = int32(binary.BigEndian.Uint32(cols[0]))
			v.Score = math.Float64frombits(binary.BigEndian.Uint64(cols[2]))
			v.Created = epoch.Add(time.Duration(int64(binary.BigEndian.Uint64(cols[3]))) * time.Microsecond)
			v.Flag = cols[5][0] != 0
			v.Name, v.Hash = block.String(cols[1]), block.String(cols[4])
		}
	}
	checkScanBenchRow(b, &v)
}
