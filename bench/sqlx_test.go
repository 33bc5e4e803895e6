package main

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/pgline/pgline/pgtest"
)

// sqlxItem is a row of sqlx_items, mapped by sqlx through db tags.
type sqlxItem struct {
	ID      int64          `db:"id"`
	Name    string         `db:"name"`
	Price   float64        `db:"price"`
	Note    sql.NullString `db:"note"`
	Tags    []byte         `db:"tags"` // text[] in its text form
	Created time.Time      `db:"created"`
}

// TestSqlx runs a program written for sqlx against driver "pgline". sqlx
// knows the placeholder style of the drivers it has heard of; for any
// other it must be told, once, that PostgreSQL numbers them ($1).
func TestSqlx(t *testing.T) {
	srv, err := pgtest.Start(pgtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	sqlx.BindDriver("pgline", sqlx.DOLLAR)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sqlx.Open("pgline", srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.MustExecContext(ctx, `CREATE TABLE sqlx_items (id bigserial PRIMARY KEY, name text NOT NULL, price float8 NOT NULL,
		note text, tags text[] NOT NULL DEFAULT '{}', created timestamptz NOT NULL DEFAULT now())`)

	for _, it := range []sqlxItem{{Name: "pen", Price: 1.5}, {Name: "ink", Price: 7.25, Note: sql.NullString{String: "blue", Valid: true}}, {Name: "pad", Price: 3}} {
		res, err := db.NamedExecContext(ctx, `INSERT INTO sqlx_items (name, price, note) VALUES (:name, :price, :note)`, it)
		if err != nil {
			t.Fatalf("NamedExec: %v", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("NamedExec RowsAffected = %d", n)
		}
	}
	if _, err := db.NamedExecContext(ctx, `UPDATE sqlx_items SET tags = :tags WHERE name = :name`,
		map[string]any{"tags": []string{"a", "b c"}, "name": "pen"}); err != nil {
		t.Fatalf("NamedExec with a map: %v", err)
	}

	var items []sqlxItem
	if err := db.SelectContext(ctx, &items, "SELECT * FROM sqlx_items WHERE price > $1 ORDER BY id", 1.0); err != nil {
		t.Fatalf("Select: %v", err)
	}
	if len(items) != 3 || items[0].Name != "pen" || string(items[0].Tags) != `{a,"b c"}` || items[1].Note.String != "blue" ||
		items[2].Price != 3 || items[0].Note.Valid || items[2].Created.IsZero() {
		t.Fatalf("Select: %+v", items)
	}

	var one sqlxItem
	if err := db.GetContext(ctx, &one, "SELECT * FROM sqlx_items WHERE name = $1", "ink"); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if one.ID != items[1].ID || one.Price != 7.25 {
		t.Fatalf("Get: %+v", one)
	}
	var count int
	if err := db.GetContext(ctx, &count, "SELECT count(*) FROM sqlx_items"); err != nil || count != 3 {
		t.Fatalf("Get count: %d, %v", count, err)
	}
	if err := db.GetContext(ctx, &one, "SELECT * FROM sqlx_items WHERE name = $1", "none"); err != sql.ErrNoRows {
		t.Fatalf("Get of no row: %v", err)
	}

	// In with Rebind, and a transaction.
	q, args, err := sqlx.In("SELECT name FROM sqlx_items WHERE id IN (?) ORDER BY id", []int64{items[0].ID, items[2].ID})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := db.SelectContext(ctx, &names, db.Rebind(q), args...); err != nil || len(names) != 2 || names[1] != "pad" {
		t.Fatalf("In: %v, %v", names, err)
	}
	tx := db.MustBeginTx(ctx, nil)
	tx.MustExecContext(ctx, "DELETE FROM sqlx_items WHERE name = $1", "pad")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &count, "SELECT count(*) FROM sqlx_items"); err != nil || count != 3 {
		t.Fatalf("count after rollback: %d, %v", count, err)
	}
}
