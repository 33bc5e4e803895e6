package main

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgxDriver is pgx v5 used natively: pgx.Conn, pgx.Batch and pgxpool.
func pgxDriver() *driver {
	return &driver{
		name: namePgx,
		connect: func(ctx context.Context, dsn string) (conn, error) {
			c, err := pgx.Connect(ctx, dsn)
			if err != nil {
				return nil, err
			}
			return &pgxConn{c: c}, nil
		},
		pool: func(ctx context.Context, dsn string, size int) (conn, string, error) {
			cfg, err := pgxpool.ParseConfig(dsn)
			if err != nil {
				return nil, "", err
			}
			cfg.MaxConns, cfg.MinConns = int32(size), int32(size)
			p, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				return nil, "", err
			}
			if err := p.Ping(ctx); err != nil {
				p.Close()
				return nil, "", err
			}
			return &pgxPool{p: p}, "pgxpool", nil
		},
		textArray: func(s []string) any { return s },
	}
}

type pgxConn struct{ c *pgx.Conn }

func (p *pgxConn) Query(ctx context.Context, sql string, args ...any) (rows, error) {
	return p.c.Query(ctx, sql, args...)
}

func (p *pgxConn) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := p.c.Exec(ctx, sql, args...)
	return err
}

func (p *pgxConn) Prepare(ctx context.Context, name, sql string) (string, error) {
	_, err := p.c.Prepare(ctx, name, sql)
	return name, err
}

func (p *pgxConn) Close() error { return p.c.Close(context.Background()) }

// QueryIntBatch sends every query in one pgx.Batch.
func (p *pgxConn) QueryIntBatch(ctx context.Context, sql string, args []any, out []int32) error {
	b := &pgx.Batch{}
	for _, a := range args {
		if a == nil {
			b.Queue(sql)
		} else {
			b.Queue(sql, a)
		}
	}
	br := p.c.SendBatch(ctx, b)
	for i := range out {
		if err := br.QueryRow().Scan(&out[i]); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

type pgxPool struct{ p *pgxpool.Pool }

func (p *pgxPool) Query(ctx context.Context, sql string, args ...any) (rows, error) {
	return p.p.Query(ctx, sql, args...)
}

func (p *pgxPool) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := p.p.Exec(ctx, sql, args...)
	return err
}

// Prepare relies on pgx's per-connection statement cache.
func (p *pgxPool) Prepare(ctx context.Context, name, sql string) (string, error) {
	return sql, nil
}

func (p *pgxPool) Close() error { p.p.Close(); return nil }

// CollectStructs uses pgx.CollectRows with RowToStructByName.
func (p *pgxConn) CollectStructs(ctx context.Context, sql string, arg any) (int, error) {
	rows, err := p.c.Query(ctx, sql, arg)
	if err != nil {
		return 0, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[rowStruct])
	return len(out), err
}
