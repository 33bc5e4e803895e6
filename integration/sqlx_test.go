package integration

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pgline/pgline"
)

const sqlxSchema = `
CREATE TABLE products (
	id         bigserial PRIMARY KEY,
	sku        varchar(16) NOT NULL UNIQUE,
	name       text NOT NULL,
	qty        int4 NOT NULL,
	small      int2 NOT NULL,
	views      int8 NOT NULL,
	price      numeric(10, 2) NOT NULL,
	weight     numeric,
	active     bool NOT NULL,
	image      bytea,
	created_at timestamptz NOT NULL,
	local_at   timestamp NOT NULL,
	release    date,
	uid        uuid NOT NULL,
	attrs      jsonb NOT NULL,
	tags       text[] NOT NULL,
	sizes      int8[] NOT NULL,
	note       text
);
CREATE TABLE events (
	id     bigserial PRIMARY KEY,
	worker int4 NOT NULL,
	seq    int4 NOT NULL,
	amount numeric(12, 2) NOT NULL
);`

// sqlxProduct is a row of products with a field of each column type.
type sqlxProduct struct {
	ID        int64           `db:"id"`
	SKU       string          `db:"sku"`
	Name      string          `db:"name"`
	Qty       int32           `db:"qty"`
	Small     int16           `db:"small"`
	Views     int64           `db:"views"`
	Price     string          `db:"price"`
	Weight    sql.NullString  `db:"weight"`
	Active    bool            `db:"active"`
	Image     []byte          `db:"image"`
	CreatedAt time.Time       `db:"created_at"`
	LocalAt   time.Time       `db:"local_at"`
	Release   sql.NullTime    `db:"release"`
	UID       string          `db:"uid"`
	Attrs     json.RawMessage `db:"attrs"`
	Tags      pq.StringArray  `db:"tags"`
	Sizes     pq.Int64Array   `db:"sizes"`
	Note      *string         `db:"note"`
}

func sqlxProducts() []sqlxProduct {
	note := "fragile"
	created := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.FixedZone("CEST", 2*3600))
	return []sqlxProduct{
		{
			SKU: "A-1", Name: "anvil", Qty: 3, Small: -7, Views: 1 << 40, Price: "1234.50",
			Weight: sql.NullString{String: "70.125", Valid: true}, Active: true, Image: []byte{0, 1, 2, 255},
			CreatedAt: created, LocalAt: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
			Release: sql.NullTime{Time: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), Valid: true},
			UID:     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", Attrs: json.RawMessage(`{"color": "black", "dims": [1, 2]}`),
			Tags: pq.StringArray{"heavy", "iron, cast", `quote"d`}, Sizes: pq.Int64Array{1, 2, 1 << 50}, Note: &note,
		},
		{
			SKU: "B-2", Name: "bucket", Qty: 0, Small: 32767, Views: 0, Price: "0.99",
			Active: false, CreatedAt: created.Add(time.Hour), LocalAt: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC),
			UID: "00000000-0000-0000-0000-000000000001", Attrs: json.RawMessage(`[]`),
			Tags: pq.StringArray{}, Sizes: pq.Int64Array{},
		},
		{
			SKU: "C-3", Name: "crate ü", Qty: -2147483648, Small: -32768, Views: -1, Price: "99999999.99",
			Weight: sql.NullString{String: "0.000000000000000001", Valid: true}, Active: true, Image: []byte{},
			CreatedAt: created.Add(-24 * time.Hour), LocalAt: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
			UID: "ffffffff-ffff-ffff-ffff-ffffffffffff", Attrs: json.RawMessage(`{"n": null}`),
			Tags: pq.StringArray{"NULL", ""}, Sizes: pq.Int64Array{-1},
		},
	}
}

// checkProduct compares a product read back with the one written.
func checkProduct(t *testing.T, got, want sqlxProduct) {
	t.Helper()
	if !got.CreatedAt.Equal(want.CreatedAt) || !got.LocalAt.Equal(want.LocalAt) ||
		got.Release.Valid != want.Release.Valid || !got.Release.Time.Equal(want.Release.Time) {
		t.Errorf("%s: times %v %v %v, want %v %v %v", want.SKU, got.CreatedAt, got.LocalAt, got.Release,
			want.CreatedAt, want.LocalAt, want.Release)
	}
	var ga, wa any
	if err := json.Unmarshal(got.Attrs, &ga); err != nil {
		t.Errorf("%s: attrs %q: %v", want.SKU, got.Attrs, err)
	}
	_ = json.Unmarshal(want.Attrs, &wa)
	if !reflect.DeepEqual(ga, wa) {
		t.Errorf("%s: attrs %s, want %s", want.SKU, got.Attrs, want.Attrs)
	}
	if (got.Note == nil) != (want.Note == nil) || got.Note != nil && *got.Note != *want.Note {
		t.Errorf("%s: note %v, want %v", want.SKU, got.Note, want.Note)
	}
	if want.Image == nil && got.Image != nil || want.Image != nil && (got.Image == nil || string(got.Image) != string(want.Image)) {
		t.Errorf("%s: image %#v, want %#v", want.SKU, got.Image, want.Image)
	}
	want.ID = got.ID
	got.CreatedAt, got.LocalAt, got.Release, got.Attrs, got.Note, got.Image = want.CreatedAt, want.LocalAt, want.Release, want.Attrs, want.Note, want.Image
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
}

const sqlxInsert = `INSERT INTO products (sku, name, qty, small, views, price, weight, active, image, created_at,
	local_at, release, uid, attrs, tags, sizes, note)
	VALUES (:sku, :name, :qty, :small, :views, :price, :weight, :active, :image, :created_at,
	:local_at, :release, :uid, :attrs, :tags, :sizes, :note)`

func TestSqlx(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	ctx := testCtx(t)

	// sqlx picks the placeholder style from the driver name, from a fixed
	// list that lacks "pgline"; BindDriver adds it (sqlx keeps it in a
	// sync.Map, so calling it from parallel tests is safe).
	sqlx.BindDriver("pgline", sqlx.DOLLAR)
	db, err := sqlx.Open("pgline", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(8)
	if got := db.Rebind("a = ? AND b = ?"); got != "a = $1 AND b = $2" {
		t.Fatalf("Rebind = %q", got)
	}
	db.MustExecContext(ctx, sqlxSchema)

	t.Run("WithoutBindDriver", func(t *testing.T) {
		// What users see before BindDriver: sqlx keeps "?", PostgreSQL refuses it.
		unbound := sqlx.NewDb(db.DB, "pgline-unbound")
		if got := unbound.Rebind("a = ?"); got != "a = ?" {
			t.Fatalf("Rebind for an unknown driver name = %q", got)
		}
		_, err := unbound.NamedExecContext(ctx, "SELECT CAST(:n AS int)", map[string]any{"n": 1})
		var pgErr *pgline.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42601" {
			t.Fatalf("named query without BindDriver: %v, want SQLSTATE 42601", err)
		}
	})

	want := sqlxProducts()
	t.Run("CRUD", func(t *testing.T) {
		// A batch insert: NamedExec expands VALUES for a slice.
		res, err := db.NamedExecContext(ctx, sqlxInsert, want)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := res.RowsAffected(); n != 3 || err != nil {
			t.Fatalf("RowsAffected = %d, %v", n, err)
		}
		var got []sqlxProduct
		if err := db.SelectContext(ctx, &got, "SELECT * FROM products ORDER BY sku"); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d rows, want %d", len(got), len(want))
		}
		for i := range want {
			checkProduct(t, got[i], want[i])
			want[i].ID = got[i].ID
		}

		// Get by a named parameter, In with Rebind.
		var one sqlxProduct
		q, args, err := sqlx.Named("SELECT * FROM products WHERE sku = :sku AND active = :active", map[string]any{"sku": "A-1", "active": true})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.GetContext(ctx, &one, db.Rebind(q), args...); err != nil {
			t.Fatal(err)
		}
		checkProduct(t, one, want[0])
		q, args, err = sqlx.In("SELECT sku FROM products WHERE id IN (?) AND qty >= ? ORDER BY id", []int64{want[0].ID, want[2].ID}, -5)
		if err != nil {
			t.Fatal(err)
		}
		var skus []string
		if err := db.SelectContext(ctx, &skus, db.Rebind(q), args...); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(skus, []string{"A-1"}) {
			t.Errorf("In: %v", skus)
		}

		// Update with a struct, then read it back.
		want[1].Qty, want[1].Price, want[1].Tags, want[1].Sizes = 12, "5.55", pq.StringArray{"new"}, pq.Int64Array{7, 8}
		want[1].Weight = sql.NullString{String: "1.5", Valid: true}
		res, err = db.NamedExecContext(ctx, `UPDATE products SET qty = :qty, price = :price, tags = :tags, sizes = :sizes,
			weight = :weight WHERE id = :id`, want[1])
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("update: %d rows", n)
		}
		if err := db.GetContext(ctx, &one, "SELECT * FROM products WHERE id = $1", want[1].ID); err != nil {
			t.Fatal(err)
		}
		checkProduct(t, one, want[1])

		// Arrays as pgline encodes Go slices, and jsonb from a map, through sqlx too.
		var tags []byte
		if err := db.QueryRowxContext(ctx, "SELECT $1::text[]", []string{"x", "y z"}).Scan(&tags); err != nil || string(tags) != `{x,"y z"}` {
			t.Errorf("[]string argument: %q, %v", tags, err)
		}

		// Delete.
		res, err = db.ExecContext(ctx, "DELETE FROM products WHERE sku = $1", "C-3")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("delete: %d rows", n)
		}
		var n int
		if err := db.GetContext(ctx, &n, "SELECT count(*) FROM products"); err != nil || n != 2 {
			t.Fatalf("count after delete = %d, %v", n, err)
		}
	})

	t.Run("TxSavepoint", func(t *testing.T) {
		tx, err := db.BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		ins := func(worker, seq int) error {
			_, err := tx.NamedExecContext(ctx, "INSERT INTO events (worker, seq, amount) VALUES (:w, :s, :a)",
				map[string]any{"w": worker, "s": seq, "a": "1.25"})
			return err
		}
		if err := ins(-1, 1); err != nil {
			t.Fatal(err)
		}
		tx.MustExecContext(ctx, "SAVEPOINT sp1")
		if err := ins(-1, 2); err != nil {
			t.Fatal(err)
		}
		// An error inside the transaction, recovered by the savepoint.
		_, err = tx.ExecContext(ctx, "INSERT INTO products (sku, name) VALUES ('A-1', 'dup')")
		var pgErr *pgline.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23502" && pgErr.Code != "23505" {
			t.Fatalf("insert of a bad row: %v", err)
		}
		tx.MustExecContext(ctx, "ROLLBACK TO SAVEPOINT sp1")
		if err := ins(-1, 3); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var seqs []int
		if err := db.SelectContext(ctx, &seqs, "SELECT seq FROM events WHERE worker = -1 ORDER BY seq"); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seqs, []int{1, 3}) {
			t.Errorf("after ROLLBACK TO SAVEPOINT: seqs %v, want [1 3]", seqs)
		}

		// A rolled back transaction leaves nothing.
		tx, err = db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			t.Fatal(err)
		}
		var iso string
		if err := tx.GetContext(ctx, &iso, "SHOW transaction_isolation"); err != nil || iso != "serializable" {
			t.Errorf("isolation %q, %v", iso, err)
		}
		if err := ins(-2, 1); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.GetContext(ctx, &n, "SELECT count(*) FROM events WHERE worker = -2"); err != nil || n != 0 {
			t.Errorf("after Rollback: %d rows, %v", n, err)
		}
	})

	t.Run("Upsert", func(t *testing.T) {
		type result struct {
			Qty      int32  `db:"qty"`
			Name     string `db:"name"`
			Inserted bool   `db:"inserted"`
		}
		p := sqlxProducts()[2] // C-3 was deleted above
		p.SKU, p.Qty = "U-1", 5
		upsert := sqlxInsert + ` ON CONFLICT (sku) DO UPDATE SET qty = products.qty + EXCLUDED.qty, name = EXCLUDED.name
			RETURNING qty, name, xmax = 0 AS inserted`
		var got []result
		for i, name := range []string{"first", "second", "third"} {
			p.Name = name
			rows, err := db.NamedQueryContext(ctx, upsert, p)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var r result
				if err := rows.StructScan(&r); err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
			}
			if err := rows.Close(); err != nil || len(got) != i+1 {
				t.Fatalf("upsert %d: %d results, %v", i, len(got), err)
			}
		}
		want := []result{{5, "first", true}, {10, "second", false}, {15, "third", false}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("upserts: %+v, want %+v", got, want)
		}
		var id int64
		err := db.GetContext(ctx, &id, "INSERT INTO products (sku, name, qty, small, views, price, active, created_at, local_at, uid, attrs, tags, sizes) "+
			"SELECT sku, name, qty, small, views, price, active, created_at, local_at, uid, attrs, tags, sizes FROM products WHERE sku = 'U-1' "+
			"ON CONFLICT DO NOTHING RETURNING id")
		if !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("ON CONFLICT DO NOTHING RETURNING: %v, want sql.ErrNoRows", err)
		}
	})

	t.Run("Goroutines", func(t *testing.T) {
		const workers, each = 50, 20
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				errs <- sqlxWorker(ctx, db, w, each)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		var rows, workersSeen int
		var total string
		err := db.QueryRowxContext(ctx, "SELECT count(*), count(DISTINCT worker), sum(amount)::text FROM events WHERE worker >= 0").
			Scan(&rows, &workersSeen, &total)
		if err != nil {
			t.Fatal(err)
		}
		// Amount of row (w, s) is w.s/100: the sum is fixed.
		var want float64
		for w := range workers {
			for s := range each {
				want += float64(w) + float64(s)/100
			}
		}
		if rows != workers*each || workersSeen != workers || total != fmt.Sprintf("%.2f", want) {
			t.Errorf("%d rows from %d workers, sum %s; want %d, %d, %.2f", rows, workersSeen, total, workers*each, workers, want)
		}
		if open := db.Stats().OpenConnections; open > 8 {
			t.Errorf("%d open connections, max 8", open)
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		checkDeadline(t, db.DB, func(ctx context.Context) error {
			var s string
			return db.GetContext(ctx, &s, "SELECT pg_sleep(5)::text")
		})
	})
}

// sqlxWorker inserts n events for worker w, every other one in a
// transaction, reading each back.
func sqlxWorker(ctx context.Context, db *sqlx.DB, w, n int) error {
	for s := range n {
		amount := fmt.Sprintf("%d.%02d", w, s)
		ev := map[string]any{"w": w, "s": s, "a": amount}
		var id int64
		if s%2 == 0 {
			rows, err := db.NamedQueryContext(ctx, "INSERT INTO events (worker, seq, amount) VALUES (:w, :s, :a) RETURNING id", ev)
			if err != nil {
				return err
			}
			for rows.Next() {
				if err := rows.Scan(&id); err != nil {
					return err
				}
			}
			if err := rows.Close(); err != nil {
				return err
			}
		} else {
			tx, err := db.BeginTxx(ctx, nil)
			if err != nil {
				return err
			}
			if err := tx.GetContext(ctx, &id, "INSERT INTO events (worker, seq, amount) VALUES ($1, $2, $3) RETURNING id", w, s, amount); err != nil {
				tx.Rollback()
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
		}
		var got struct {
			Worker int    `db:"worker"`
			Seq    int    `db:"seq"`
			Amount string `db:"amount"`
		}
		if err := db.GetContext(ctx, &got, "SELECT worker, seq, amount FROM events WHERE id = $1", id); err != nil {
			return err
		}
		if got.Worker != w || got.Seq != s || got.Amount != amount {
			return fmt.Errorf("worker %d seq %d: read back %+v", w, s, got)
		}
	}
	return nil
}

// ecosystem.md: TestEcosystemSqlx
// connectSqlx opens sqlx over pgline.
func connectSqlx(dsn string) (*sqlx.DB, error) {
	// sqlx chooses between ? and $1 by the driver's name, from a list that
	// lacks "pgline": without this, named queries and Rebind keep "?" and
	// PostgreSQL answers SQLSTATE 42601.
	sqlx.BindDriver("pgline", sqlx.DOLLAR)
	return sqlx.Open("pgline", dsn)
}

// ecosystem.md: end

func TestEcosystemSqlx(t *testing.T) {
	t.Parallel()
	db, err := connectSqlx(newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.MustExec("CREATE TABLE pets (name text PRIMARY KEY, legs int2)")
	if _, err := db.NamedExec("INSERT INTO pets (name, legs) VALUES (:name, :legs)",
		[]map[string]any{{"name": "cat", "legs": 4}, {"name": "hen", "legs": 2}}); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := db.Select(&names, db.Rebind("SELECT name FROM pets WHERE legs > ? ORDER BY name"), 1); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, []string{"cat", "hen"}) {
		t.Errorf("names %v", names)
	}
}
