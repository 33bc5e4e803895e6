package pgline_test

import (
	"context"
	"fmt"
	"os"

	"github.com/pgline/pgline"
)

// A Pool whose connections all know the application's types: LoadTypes
// in AfterConnect registers a composite type and the enum it is made of.
func ExampleConn_LoadTypes() {
	ctx := context.Background()
	setup, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer setup.Close()
	if _, err := setup.Exec(ctx, `DROP TYPE IF EXISTS ex_pet, ex_kind;
		CREATE TYPE ex_kind AS ENUM ('cat', 'dog');
		CREATE TYPE ex_pet AS (name text, kind ex_kind, age int4)`); err != nil {
		fmt.Println(err)
		return
	}

	cfg, err := pgline.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgline.Conn) error {
		return c.LoadTypes(ctx, []string{"ex_pet"})
	}
	pool, err := pgline.NewPoolConfig(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	type pet struct {
		Name string
		Kind string
		Age  int32
	}
	var pets []pet
	if err := pool.QueryRow(ctx, "SELECT ARRAY[ROW('Tom', 'cat', 3), ROW('Rex', 'dog', 5)]::ex_pet[]").Scan(&pets); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", pets)
	// Output: [{Name:Tom Kind:cat Age:3} {Name:Rex Kind:dog Age:5}]
}
