package stdlib_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/pgline/pgline"
)

const (
	benchPointSQL = "SELECT id, name, score, created, hash, flag FROM stdlib_bench WHERE id = $1"
	benchRowsSQL  = "SELECT id, name, score, created, hash, flag FROM stdlib_bench WHERE id <= $1"
)

// benchTable creates the 1000-row table of the benchmarks.
func benchTable(b *testing.B) {
	b.Helper()
	err := srv.Exec(`DROP TABLE IF EXISTS stdlib_bench;
		CREATE TABLE stdlib_bench (id int4 PRIMARY KEY, name text, score float8, created timestamptz, hash text, flag bool);
		INSERT INTO stdlib_bench SELECT n, 'name ' || n, n * 1.5, now() - n * interval '1 minute', md5(n::text), n % 2 = 0
			FROM generate_series(1, 1000) n`)
	if err != nil {
		b.Fatal(err)
	}
}

type benchRow struct {
	id      int32
	name    string
	score   float64
	created time.Time
	hash    string
	flag    bool
}

func BenchmarkPoint(b *testing.B) {
	benchTable(b)
	ctx := context.Background()
	b.Run("database-sql", func(b *testing.B) { pointLoop(b, pinConn(b, openDB(b, 1))) })
	b.Run("sql-only", func(b *testing.B) { pointLoop(b, newSQLOnlyDB(b)) })
	b.Run("native", func(b *testing.B) {
		c := nativeConn(b)
		var r benchRow
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			i = i%1000 + 1
			err := c.QueryRow(ctx, benchPointSQL, int32(i)).Scan(&r.id, &r.name, &r.score, &r.created, &r.hash, &r.flag)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRows1000(b *testing.B) {
	benchTable(b)
	ctx := context.Background()
	b.Run("database-sql", func(b *testing.B) { rowsLoop(b, pinConn(b, openDB(b, 1))) })
	b.Run("sql-only", func(b *testing.B) { rowsLoop(b, newSQLOnlyDB(b)) })
	b.Run("native", func(b *testing.B) {
		c := nativeConn(b)
		var r benchRow
		b.ReportAllocs()
		for b.Loop() {
			rows, err := c.Query(ctx, benchRowsSQL, int32(1000))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				if err := rows.Scan(&r.id, &r.name, &r.score, &r.created, &r.hash, &r.flag); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if rows.Err() != nil || n != 1000 {
				b.Fatalf("%d rows, %v", n, rows.Err())
			}
		}
	})
}

func scanBench(b *testing.B, rows *sql.Rows) {
	var r benchRow
	n := 0
	for rows.Next() {
		if err := rows.Scan(&r.id, &r.name, &r.score, &r.created, &r.hash, &r.flag); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if rows.Err() != nil || n != 1000 {
		b.Fatalf("%d rows, %v", n, rows.Err())
	}
	rows.Close()
}

func nativeConn(b *testing.B) *pgline.Conn {
	c, err := pgline.Connect(context.Background(), srv.DSN())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// sqlQueryer is what the database-sql and sql-only benchmarks query: a
// *sql.Conn or a *sql.DB.
type sqlQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// pointLoop runs the point select through database/sql.
func pointLoop(b *testing.B, q sqlQueryer) {
	ctx := context.Background()
	var r benchRow
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i = i%1000 + 1
		err := q.QueryRowContext(ctx, benchPointSQL, int32(i)).Scan(&r.id, &r.name, &r.score, &r.created, &r.hash, &r.flag)
		if err != nil || r.id != int32(i) {
			b.Fatal(r.id, err)
		}
	}
}

// rowsLoop runs the 1000-row select through database/sql.
func rowsLoop(b *testing.B, q sqlQueryer) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rows, err := q.QueryContext(ctx, benchRowsSQL, int32(1000))
		if err != nil {
			b.Fatal(err)
		}
		scanBench(b, rows)
	}
}
