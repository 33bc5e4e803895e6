package pgxapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Product is a row of product; its nullable columns are pgtype values.
type Product struct {
	ID    int64
	Name  string
	Note  pgtype.Text
	Stock pgtype.Int4
	Price pgtype.Numeric
	Added pgtype.Timestamptz
	Ref   pgtype.UUID
}

// counter counts the statements it sees.
type counter struct{ n atomic.Int64 }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Run runs the program against the database at dsn and writes what it
// finds to w.
func Run(ctx context.Context, dsn string, w io.Writer) error {
	config, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return err
	}
	config.MaxConns = 4
	var prepared atomic.Int64
	config.BeforeAcquire = func(ctx context.Context, c *pgx.Conn) bool {
		prepared.Add(1)
		return true
	}
	config.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "SET application_name = 'shop'")
		return err
	}
	statements, slow := &counter{}, &counter{}
	config.ConnConfig.Tracer = multitracer.New(statements, slow)
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return err
	}
	defer pool.Close()

	_, err = pool.Exec(ctx, `CREATE TABLE product (
		id bigserial PRIMARY KEY,
		name text NOT NULL CONSTRAINT product_name_key UNIQUE,
		note text, stock int4, price numeric(10, 2), added timestamptz, ref uuid)`)
	if err != nil {
		return err
	}

	added := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	rows := [][]any{
		{"desk", pgtype.Text{String: "oak", Valid: true}, pgtype.Int4{Int32: 2, Valid: true}, "249.00",
			pgtype.Timestamptz{Time: added, Valid: true}, pgtype.UUID{Bytes: [16]byte{15: 7}, Valid: true}},
		{"chair", pgtype.Text{}, pgtype.Int4{}, nil, pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}, nil},
	}
	n, err := pool.CopyFrom(ctx, pgx.Identifier{"product"},
		[]string{"name", "note", "stock", "price", "added", "ref"}, pgx.CopyFromRows(rows))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "copied %d\n", n)

	var price pgtype.Numeric
	if err := price.Scan("19.99"); err != nil {
		return err
	}
	_, err = pool.Exec(ctx, "INSERT INTO product (name, price, stock) VALUES (@name, @price, @stock)",
		pgx.NamedArgs{"name": "lamp", "price": price, "stock": pgtype.Int4{Int32: 3, Valid: true}})
	if err != nil {
		return err
	}

	_, err = pool.Exec(ctx, "INSERT INTO product (name) VALUES ($1)", "lamp")
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		fmt.Fprintf(w, "duplicate: %s %s on %s\n", pgErr.Code, pgErr.ConstraintName, pgErr.TableName)
	}

	all, _ := pool.Query(ctx, "SELECT id, name, note, stock, price, added, ref FROM product ORDER BY id")
	products, err := pgx.CollectRows(all, pgx.RowToStructByName[Product])
	if err != nil {
		return err
	}
	for _, p := range products {
		f, err := p.Price.Float64Value()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%d %s note=%v:%q stock=%v:%d price=%v:%.2f added=%v:%v:%s ref=%q\n",
			p.ID, p.Name, p.Note.Valid, p.Note.String, p.Stock.Valid, p.Stock.Int32, f.Valid, f.Float64,
			p.Added.Valid, p.Added.InfinityModifier, p.Added.Time.UTC().Format(time.RFC3339), p.Ref.String())
	}

	bad, _ := pool.Query(ctx, "SELECT no_such_column FROM product")
	if _, err := pgx.CollectRows(bad, pgx.RowTo[int64]); errors.As(err, &pgErr) {
		fmt.Fprintf(w, "bad query: %s\n", pgErr.Code)
	}

	var name string
	err = pool.QueryRow(ctx, "SELECT name FROM product WHERE id = $1", -1).Scan(&name)
	fmt.Fprintf(w, "missing: %v\n", errors.Is(err, pgx.ErrNoRows))

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE product SET stock = stock + 10 WHERE name = $1", "desk")
		return err
	})
	if err != nil {
		return err
	}

	batch := &pgx.Batch{}
	batch.Queue("UPDATE product SET stock = stock - 1 WHERE name = $1", "lamp")
	batch.Queue("SELECT sum(stock) FROM product")
	br := pool.SendBatch(ctx, batch)
	tag, err := br.Exec()
	if err != nil {
		return err
	}
	var total pgtype.Int8
	if err := br.QueryRow().Scan(&total); err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	fmt.Fprintf(w, "batch: %s, stock %d\n", tag, total.Int64)

	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	var app string
	if err := conn.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&app); err != nil {
		return err
	}
	conn.Release()
	fmt.Fprintf(w, "application_name %s, prepared %v, traced %v\n", app, prepared.Load() > 0, statements.n.Load() > 0)
	return nil
}
