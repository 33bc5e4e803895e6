package pgline_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/pgline/pgline"
)

// Fill @name placeholders from a map: the same name twice is one
// argument, a name missing from the map is NULL, and an @ inside a string,
// a quoted identifier, a dollar quote or a comment, or in an operator such
// as @>, is left alone.
func ExampleNamedArgs() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	var (
		greeting string
		sum      int
		contains bool
		missing  *string
	)
	err = conn.QueryRow(ctx,
		`SELECT @greeting::text || ' <@you>', @n::int + @n::int, '{1,2}'::int[] @> ARRAY[@n::int], @missing::text -- @not_this`,
		pgline.NamedArgs{"greeting": "hello", "n": 2},
	).Scan(&greeting, &sum, &contains, &missing)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(greeting, sum, contains, missing == nil)
	// Output: hello <@you> 4 true true
}

// With StrictNamedArgs a name missing from the map, or a key the SQL does
// not use, is an error, and nothing is sent.
func ExampleStrictNamedArgs() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	_, err = conn.Exec(ctx, "SELECT @a::int", pgline.StrictNamedArgs{"a": 1, "b": 2})
	fmt.Println(err)
	_, err = conn.Exec(ctx, "SELECT @a::int, @b::int", pgline.StrictNamedArgs{"a": 1})
	fmt.Println(err)
	// Output:
	// pgline: StrictNamedArgs key "b" is not used by the SQL
	// pgline: StrictNamedArgs has no value for @b
}

// ErrNoRows is also sql.ErrNoRows, for code written for database/sql.
func ExampleErrNoRows() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	var id int
	err = conn.QueryRow(ctx, "SELECT 1 WHERE false").Scan(&id)
	fmt.Println(errors.Is(err, pgline.ErrNoRows), errors.Is(err, sql.ErrNoRows))
	// Output: true true
}

// A statement's CommandTag says what it was and how many rows it affected.
func ExampleCommandTag() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	for _, sql := range []string{
		"CREATE TEMP TABLE example_tag (id int)",
		"INSERT INTO example_tag SELECT generate_series(1, 5)",
		"UPDATE example_tag SET id = id + 10 WHERE id <= 2",
		"DELETE FROM example_tag WHERE id > 10",
		"SELECT * FROM example_tag",
	} {
		tag, err := conn.Exec(ctx, sql)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-14q insert=%v update=%v delete=%v select=%v rows=%d\n",
			tag.String(), tag.Insert(), tag.Update(), tag.Delete(), tag.Select(), tag.RowsAffected())
	}
	// Output:
	// "CREATE TABLE" insert=false update=false delete=false select=false rows=0
	// "INSERT 0 5"   insert=true update=false delete=false select=false rows=5
	// "UPDATE 2"     insert=false update=true delete=false select=false rows=2
	// "DELETE 2"     insert=false update=false delete=true select=false rows=2
	// "SELECT 3"     insert=false update=false delete=false select=true rows=3
}
