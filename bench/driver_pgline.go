package main

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/pgline/pgline"
)

// pglineDriver is pgline's Conn. A pgline Conn is safe for concurrent
// use: the concurrent cases share one Conn with no lock, and its requests
// are pipelined automatically. Until pgline has a Pool, the runner pools
// Conns through a channel, and until it has Batch, QueryIntBatch runs its
// queries serially; each of those is noted in the report.
func pglineDriver() *driver {
	connect := func(ctx context.Context, dsn string) (conn, error) {
		c, err := pgline.Connect(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return &pglineConn{c: c}, nil
	}
	return &driver{
		name:    namePgline,
		connect: connect,
		shared: func(ctx context.Context, dsn string) (conn, string, error) {
			c, err := connect(ctx, dsn)
			return c, "one Conn shared by all goroutines, pipelined automatically", err
		},
		pool: func(ctx context.Context, dsn string, size int) (conn, string, error) {
			p, err := pgline.NewPool(ctx, withParam(dsn, "pool_max_conns", strconv.Itoa(size)))
			if err != nil {
				return nil, "", err
			}
			return &pglinePool{p: p}, "pgline.Pool: statements multiplexed over the pool's connections", nil
		},
		textArray: func(s []string) any { return s },
	}
}

// pglinePool is a pgline Pool.
type pglinePool struct{ p *pgline.Pool }

func (p *pglinePool) Query(ctx context.Context, sql string, args ...any) (rows, error) {
	return p.p.Query(ctx, sql, args...)
}

func (p *pglinePool) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := p.p.Exec(ctx, sql, args...)
	return err
}

func (p *pglinePool) Prepare(ctx context.Context, name, sql string) (string, error) {
	return sql, nil
}

func (p *pglinePool) Close() error {
	p.p.Close()
	return nil
}

// withParam appends key=value to a DSN in either form.
func withParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + key + "=" + value
	}
	return dsn + " " + key + "=" + value
}

type pglineConn struct{ c *pgline.Conn }

func (p *pglineConn) Query(ctx context.Context, sql string, args ...any) (rows, error) {
	return p.c.Query(ctx, sql, args...)
}

func (p *pglineConn) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := p.c.Exec(ctx, sql, args...)
	return err
}

// Prepare relies on pgline's statement cache, which prepares each
// statement once per connection.
func (p *pglineConn) Prepare(ctx context.Context, name, sql string) (string, error) {
	return sql, nil
}

func (p *pglineConn) Close() error { return p.c.Close() }

// QueryIntBatch sends the queries as one pgline Batch: one write, one
// round trip, one Sync for all, the semantics of a pgx Batch (a Sync per
// query, pgline's default, costs the server a transaction end each).
func (p *pglineConn) QueryIntBatch(ctx context.Context, sql string, args []any, out []int32) error {
	b := &pgline.Batch{AllOrNothing: true}
	for _, a := range args {
		if a == nil {
			b.Queue(sql)
		} else {
			b.Queue(sql, a)
		}
	}
	br := p.c.SendBatch(ctx, b)
	for i := range args {
		if err := br.QueryRow().Scan(&out[i]); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

func (p *pglineConn) batchNote() string { return "pgline Batch{AllOrNothing: true}: one Sync, as pgx" }

// StreamValue scans the first column of the first row into pgline.StreamTo.
func (p *pglineConn) StreamValue(ctx context.Context, w io.Writer, sql string, args ...any) error {
	return p.c.QueryRow(ctx, sql, args...).Scan(pgline.StreamTo(w))
}

// CollectStructs uses pgline.CollectRows with RowToStructByName.
func (p *pglineConn) CollectStructs(ctx context.Context, sql string, arg any) (int, error) {
	rows, err := p.c.Query(ctx, sql, arg)
	if err != nil {
		return 0, err
	}
	out, err := pgline.CollectRows(rows, pgline.RowToStructByName[rowStruct])
	return len(out), err
}
