package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/pgline/pgline"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

type bunAuthor struct {
	bun.BaseModel `bun:"table:authors,alias:a"`

	ID    int64      `bun:",pk,autoincrement"`
	Name  string     `bun:",notnull,unique"`
	Email *string    // nullable text
	Books []*bunBook `bun:"rel:has-many,join:id=author_id"`
}

// bunBook has a column of each common type.
type bunBook struct {
	bun.BaseModel `bun:"table:books,alias:b"`

	ID          int64          `bun:",pk,autoincrement"`
	AuthorID    int64          `bun:",notnull"`
	Author      *bunAuthor     `bun:"rel:belongs-to,join:author_id=id"`
	ISBN        string         `bun:"isbn,type:varchar(13),notnull,unique"`
	Title       string         `bun:",notnull"`
	Pages       int32          `bun:",notnull"`
	Edition     int16          `bun:",notnull"`
	Sold        int64          `bun:",notnull"`
	Price       string         `bun:",type:numeric(10,2),notnull"`
	Rating      *string        `bun:",type:numeric"`
	InPrint     bool           `bun:",notnull"`
	Cover       []byte         `bun:",type:bytea"`
	PublishedAt time.Time      `bun:",type:timestamptz,notnull"`
	PrintedAt   time.Time      `bun:",type:timestamp,notnull"`
	ReleaseDay  time.Time      `bun:",type:date,notnull"`
	UID         string         `bun:",type:uuid,notnull"`
	Meta        map[string]any `bun:",type:jsonb,notnull"`
	Tags        []string       `bun:",array"`
	Printings   []int64        `bun:",array"`
	Note        sql.NullString
	Genres      []bunGenre `bun:"m2m:book_genres,join:Book=Genre"`
}

type bunGenre struct {
	bun.BaseModel `bun:"table:genres,alias:g"`

	ID   int64  `bun:",pk,autoincrement"`
	Name string `bun:",notnull,unique"`
}

type bunBookGenre struct {
	bun.BaseModel `bun:"table:book_genres"`

	BookID  int64     `bun:",pk"`
	Book    *bunBook  `bun:"rel:belongs-to,join:book_id=id"`
	GenreID int64     `bun:",pk"`
	Genre   *bunGenre `bun:"rel:belongs-to,join:genre_id=id"`
}

type bunCounter struct {
	bun.BaseModel `bun:"table:counters"`

	Name  string `bun:",pk"`
	Value int64  `bun:",notnull"`
}

// checkBook compares a book read back with the one written (relations
// aside).
func checkBook(t *testing.T, got, want *bunBook) {
	t.Helper()
	if !got.PublishedAt.Equal(want.PublishedAt) || !got.PrintedAt.Equal(want.PrintedAt) || !got.ReleaseDay.Equal(want.ReleaseDay) {
		t.Errorf("%s: times %v %v %v, want %v %v %v", want.ISBN, got.PublishedAt, got.PrintedAt, got.ReleaseDay,
			want.PublishedAt, want.PrintedAt, want.ReleaseDay)
	}
	g, w := *got, *want
	g.Author, g.Genres, w.Author, w.Genres = nil, nil, nil, nil
	g.PublishedAt, g.PrintedAt, g.ReleaseDay = w.PublishedAt, w.PrintedAt, w.ReleaseDay
	if len(g.Cover) == 0 && len(w.Cover) == 0 {
		g.Cover = w.Cover
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("read back\n%+v\nwant\n%+v", g, w)
	}
}

func TestBun(t *testing.T) {
	t.Parallel()
	sqldb, _ := openDB(t, 8)
	db := bun.NewDB(sqldb, pgdialect.New())
	db.RegisterModel((*bunBookGenre)(nil))
	ctx := testCtx(t)

	for _, m := range []any{(*bunAuthor)(nil), (*bunGenre)(nil), (*bunBook)(nil), (*bunBookGenre)(nil), (*bunCounter)(nil)} {
		if _, err := db.NewCreateTable().Model(m).WithForeignKeys().Exec(ctx); err != nil {
			t.Fatalf("create table for %T: %v", m, err)
		}
	}
	var colType string
	if err := db.NewRaw("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'books'::regclass AND attname = 'price'").
		Scan(ctx, &colType); err != nil || colType != "numeric(10,2)" {
		t.Fatalf("books.price is %q, %v", colType, err)
	}

	email := "ursula@example.org"
	authors := []*bunAuthor{{Name: "Ursula", Email: &email}, {Name: "Stanisław"}}
	genres := []bunGenre{{Name: "fantasy"}, {Name: "science fiction"}, {Name: "satire"}}
	rating := "4.75"
	books := []*bunBook{
		{
			ISBN: "9780441478125", Title: "The Left Hand of Darkness", Pages: 304, Edition: 1, Sold: 1 << 33,
			Price: "15.99", Rating: &rating, InPrint: true, Cover: []byte{0xff, 0xd8, 0},
			PublishedAt: time.Date(1969, 3, 1, 12, 0, 0, 500000000, time.FixedZone("", -5*3600)),
			PrintedAt:   time.Date(2019, 7, 2, 8, 30, 0, 0, time.UTC), ReleaseDay: time.Date(1969, 3, 1, 0, 0, 0, 0, time.UTC),
			UID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", Meta: map[string]any{"series": "Hainish", "awards": []any{"Hugo", "Nebula"}, "n": 2.5},
			Tags: []string{"classic", "gender, politics", ""}, Printings: []int64{1969, 1976, 2019},
			Note: sql.NullString{String: "first", Valid: true},
		},
		{
			ISBN: "9780156027595", Title: "The Cyberiad", Pages: 295, Edition: -1, Sold: 0,
			Price: "0.00", InPrint: false,
			PublishedAt: time.Date(1965, 1, 1, 0, 0, 0, 0, time.UTC),
			PrintedAt:   time.Date(2002, 2, 28, 23, 59, 59, 999999000, time.UTC), ReleaseDay: time.Date(1965, 1, 1, 0, 0, 0, 0, time.UTC),
			UID: "00000000-0000-0000-0000-000000000000", Meta: map[string]any{},
			Tags: []string{}, Printings: []int64{},
		},
	}

	t.Run("CRUD", func(t *testing.T) {
		if _, err := db.NewInsert().Model(&authors).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if authors[0].ID == 0 || authors[1].ID == 0 {
			t.Fatalf("RETURNING ids: %d, %d", authors[0].ID, authors[1].ID)
		}
		if _, err := db.NewInsert().Model(&genres).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		books[0].AuthorID, books[1].AuthorID = authors[0].ID, authors[1].ID
		if _, err := db.NewInsert().Model(&books).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		links := []bunBookGenre{
			{BookID: books[0].ID, GenreID: genres[1].ID}, {BookID: books[0].ID, GenreID: genres[0].ID},
			{BookID: books[1].ID, GenreID: genres[1].ID}, {BookID: books[1].ID, GenreID: genres[2].ID},
		}
		if _, err := db.NewInsert().Model(&links).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		// Relations: belongs-to and m2m.
		var got []*bunBook
		err := db.NewSelect().Model(&got).Relation("Author").
			Relation("Genres", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("g.name") }).
			Order("b.id").Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%d books", len(got))
		}
		for i, b := range got {
			checkBook(t, b, books[i])
			if b.Author == nil || b.Author.Name != authors[i].Name || !reflect.DeepEqual(b.Author.Email, authors[i].Email) {
				t.Errorf("book %d: author %+v", i, b.Author)
			}
		}
		names := func(gs []bunGenre) (n []string) {
			for _, g := range gs {
				n = append(n, g.Name)
			}
			return n
		}
		if g := names(got[0].Genres); !reflect.DeepEqual(g, []string{"fantasy", "science fiction"}) {
			t.Errorf("book 0 genres %v", g)
		}
		if g := names(got[1].Genres); !reflect.DeepEqual(g, []string{"satire", "science fiction"}) {
			t.Errorf("book 1 genres %v", g)
		}

		// Has-many, with a condition on the relation.
		var a bunAuthor
		err = db.NewSelect().Model(&a).Where("a.name = ?", "Ursula").
			Relation("Books", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("b.pages > ?", 100) }).Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != authors[0].ID || len(a.Books) != 1 || a.Books[0].ISBN != books[0].ISBN {
			t.Fatalf("has-many: %+v", a)
		}
		checkBook(t, a.Books[0], books[0])

		// Update some columns, then read back.
		books[1].Title, books[1].Price, books[1].Tags, books[1].Meta = "The Cyberiad: Fables", "12.34", []string{"robots"}, map[string]any{"translated": true}
		res, err := db.NewUpdate().Model(books[1]).Column("title", "price", "tags", "meta").WherePK().Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("update: %d rows", n)
		}
		var b bunBook
		if err := db.NewSelect().Model(&b).Where("isbn = ?", books[1].ISBN).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		checkBook(t, &b, books[1])

		// An aggregate into plain variables.
		var n int
		var sum string
		if err := db.NewSelect().Model((*bunBook)(nil)).ColumnExpr("count(*), sum(price)::text").Scan(ctx, &n, &sum); err != nil || n != 2 || sum != "28.33" {
			t.Errorf("count, sum = %d, %q, %v", n, sum, err)
		}

		// Delete (the link rows first: foreign keys).
		if _, err := db.NewDelete().Model((*bunBookGenre)(nil)).Where("book_id = ?", books[1].ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		res, err = db.NewDelete().Model(books[1]).WherePK().Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("delete: %d rows", n)
		}
		if n, err := db.NewSelect().Model((*bunBook)(nil)).Count(ctx); n != 1 || err != nil {
			t.Fatalf("count after delete = %d, %v", n, err)
		}
	})

	t.Run("NestedTx", func(t *testing.T) {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewInsert().Model(&bunGenre{Name: "kept"}).Exec(ctx); err != nil {
				return err
			}
			// A nested transaction is a savepoint; its error rolls back to it.
			err := tx.RunInTx(ctx, nil, func(ctx context.Context, sp bun.Tx) error {
				if _, err := sp.NewInsert().Model(&bunGenre{Name: "rolled back"}).Exec(ctx); err != nil {
					return err
				}
				_, err := sp.NewInsert().Model(&bunGenre{Name: "kept"}).Exec(ctx) // unique violation
				return err
			})
			var pgErr *pgline.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
				return fmt.Errorf("nested transaction: %v, want a unique violation", err)
			}
			// The transaction goes on after ROLLBACK TO SAVEPOINT.
			sp, err := tx.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if _, err := sp.NewInsert().Model(&bunGenre{Name: "released"}).Exec(ctx); err != nil {
				return err
			}
			return sp.Commit() // RELEASE SAVEPOINT
		})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		if err := db.NewSelect().Model((*bunGenre)(nil)).Column("name").Where("name IN (?)", bun.In([]string{"kept", "rolled back", "released"})).
			Order("name").Scan(ctx, &names); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(names, []string{"kept", "released"}) {
			t.Errorf("after the nested transactions: %v", names)
		}

		// An error from the function rolls the whole transaction back.
		sentinel := errors.New("give up")
		err = db.RunInTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead}, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewInsert().Model(&bunGenre{Name: "never"}).Exec(ctx); err != nil {
				return err
			}
			return sentinel
		})
		if !errors.Is(err, sentinel) {
			t.Fatalf("RunInTx: %v", err)
		}
		if ok, err := db.NewSelect().Model((*bunGenre)(nil)).Where("name = 'never'").Exists(ctx); ok || err != nil {
			t.Errorf("rolled back row exists: %v, %v", ok, err)
		}
	})

	t.Run("Upsert", func(t *testing.T) {
		for i, title := range []string{"Left Hand", "The Left Hand of Darkness (50th)"} {
			b := *books[0]
			b.ID, b.Title, b.Sold, b.Genres, b.Author = 0, title, 10, nil, nil
			_, err := db.NewInsert().Model(&b).
				On("CONFLICT (isbn) DO UPDATE").
				Set("title = EXCLUDED.title").
				Set("sold = b.sold + EXCLUDED.sold").
				Returning("id, title, sold").Exec(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if b.ID != books[0].ID || b.Title != title || b.Sold != books[0].Sold+10*int64(i+1) {
				t.Errorf("upsert %d: id %d title %q sold %d", i, b.ID, b.Title, b.Sold)
			}
		}
		g := bunGenre{Name: "fantasy"}
		res, err := db.NewInsert().Model(&g).On("CONFLICT (name) DO NOTHING").Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Errorf("DO NOTHING inserted %d rows", n)
		}
	})

	t.Run("Goroutines", func(t *testing.T) {
		if _, err := db.NewInsert().Model(&bunCounter{Name: "hits"}).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		const workers, each = 50, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
						var c bunCounter
						if err := tx.NewSelect().Model(&c).Where("name = ?", "hits").For("UPDATE").Scan(ctx); err != nil {
							return err
						}
						c.Value++
						if _, err := tx.NewUpdate().Model(&c).WherePK().Exec(ctx); err != nil {
							return err
						}
						_, err := tx.NewInsert().Model(&bunGenre{Name: fmt.Sprintf("g-%02d-%02d", w, i)}).Exec(ctx)
						return err
					})
					if err != nil {
						errs <- fmt.Errorf("worker %d: %w", w, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var c bunCounter
		if err := db.NewSelect().Model(&c).Where("name = 'hits'").Scan(ctx); err != nil || c.Value != workers*each {
			t.Errorf("counter = %d, %v; want %d", c.Value, err, workers*each)
		}
		n, err := db.NewSelect().Model((*bunGenre)(nil)).Where("name LIKE 'g-%'").Count(ctx)
		if err != nil || n != workers*each {
			t.Errorf("%d genres, %v; want %d", n, err, workers*each)
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		checkDeadline(t, sqldb, func(ctx context.Context) error {
			_, err := db.NewRaw("SELECT pg_sleep(5)").Exec(ctx)
			return err
		})
	})
}

// ecosystem.md: TestEcosystemBun
// connectBun opens bun over pgline, with bun's PostgreSQL dialect.
func connectBun(dsn string) (*bun.DB, error) {
	sqldb, err := sql.Open("pgline", dsn)
	if err != nil {
		return nil, err
	}
	return bun.NewDB(sqldb, pgdialect.New()), nil
}

// ecosystem.md: end

func TestEcosystemBun(t *testing.T) {
	t.Parallel()
	db, err := connectBun(newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type pet struct {
		Name string   `bun:",pk"`
		Tags []string `bun:",array"`
	}
	ctx := testCtx(t)
	if _, err := db.NewCreateTable().Model((*pet)(nil)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewInsert().Model(&pet{Name: "cat", Tags: []string{"furry", "aloof"}}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var got pet
	if err := db.NewSelect().Model(&got).Where("name = ?", "cat").Scan(ctx); err != nil || !reflect.DeepEqual(got.Tags, []string{"furry", "aloof"}) {
		t.Errorf("%+v, %v", got, err)
	}
}
