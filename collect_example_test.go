package pgline_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/pgline/pgline"
)

// Rows into a slice of structs: columns go into fields by db tag, or by
// name ignoring case and underscores.
func ExampleCollectRows() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	type Task struct {
		ID        int32
		Title     string `db:"name"`
		DueAt     time.Time
		Done      bool
		internal  int    // unexported: ignored
		Temporary string `db:"-"`
	}
	rows, err := conn.Query(ctx, `
		SELECT g AS id, 'task ' || g AS name, '2025-03-01'::timestamptz + g * interval '1 day' AS due_at, g = 1 AS done
		FROM generate_series(1, $1::int) g`, 3)
	if err != nil {
		log.Fatal(err)
	}
	tasks, err := pgline.CollectRows(rows, pgline.RowToStructByName[Task])
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tasks {
		fmt.Println(t.ID, t.Title, t.DueAt.UTC().Format(time.DateOnly), t.Done)
	}
	// Output:
	// 1 task 1 2025-03-02 true
	// 2 task 2 2025-03-03 false
	// 3 task 3 2025-03-04 false
}

// One column of each row into a slice.
func ExampleRowTo() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	rows, err := conn.Query(ctx, "SELECT unnest($1::text[])", []string{"a", "b", "c"})
	if err != nil {
		log.Fatal(err)
	}
	letters, err := pgline.CollectRows(rows, pgline.RowTo[string])
	fmt.Println(letters, err)
	// Output: [a b c] <nil>
}

// The first row, or ErrNoRows.
func ExampleCollectOneRow() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	for _, n := range []int{3, 0} {
		rows, err := conn.Query(ctx, "SELECT g * 10 FROM generate_series(1, $1::int) g", n)
		if err != nil {
			log.Fatal(err)
		}
		first, err := pgline.CollectOneRow(rows, pgline.RowTo[int32])
		fmt.Println(first, errors.Is(err, pgline.ErrNoRows))
	}
	// Output:
	// 10 false
	// 0 true
}

// Exactly one row: none is ErrNoRows, more is ErrTooManyRows.
func ExampleCollectExactlyOneRow() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	type Account struct {
		ID      int32
		Balance float64
	}
	for _, n := range []int{1, 2} {
		rows, err := conn.Query(ctx, "SELECT g AS id, g * 1.5::float8 AS balance FROM generate_series(1, $1::int) g", n)
		if err != nil {
			log.Fatal(err)
		}
		acct, err := pgline.CollectExactlyOneRow(rows, pgline.RowToAddrOfStructByName[Account])
		if errors.Is(err, pgline.ErrTooManyRows) {
			fmt.Println("more than one account")
			continue
		}
		fmt.Printf("%+v %v\n", *acct, err)
	}
	// Output:
	// {ID:1 Balance:1.5} <nil>
	// more than one account
}

// Columns into fields in order, whatever their names.
func ExampleRowToStructByPos() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	type Pair struct {
		Key   string
		Value int32
	}
	rows, err := conn.Query(ctx, "SELECT k, length(k) FROM unnest(ARRAY['one', 'three']) k")
	if err != nil {
		log.Fatal(err)
	}
	pairs, err := pgline.CollectRows(rows, pgline.RowToStructByPos[Pair])
	fmt.Printf("%+v %v\n", pairs, err)
	// Output: [{Key:one Value:3} {Key:three Value:5}] <nil>
}

// Each row as a map from column name to value.
func ExampleRowToMap() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	rows, err := conn.Query(ctx, "SELECT 1 AS id, 'ada' AS name, NULL::text AS email")
	if err != nil {
		log.Fatal(err)
	}
	m, err := pgline.CollectOneRow(rows, pgline.RowToMap)
	fmt.Println(m, err)
	// Output: map[email:<nil> id:1 name:ada] <nil>
}

// Scan each row into the same variables and act on them.
func ExampleForEachRow() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	rows, err := conn.Query(ctx, "SELECT g, g * g FROM generate_series(1, 4) g")
	if err != nil {
		log.Fatal(err)
	}
	var n, square, sum int32
	tag, err := pgline.ForEachRow(rows, []any{&n, &square}, func() error {
		sum += square
		return nil
	})
	fmt.Println(sum, tag, err)
	// Output: 30 SELECT 4 <nil>
}
