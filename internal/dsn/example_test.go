package dsn_test

import (
	"fmt"

	"github.com/pgline/pgline/internal/dsn"
)

func ExampleSplit() {
	known := func(key string) bool { return key == "host" || key == "dbname" }
	for _, s := range []string{
		"postgres://bob:p%40ss@db1:5433,db2/app?sslmode=require",
		"host=db1 dbname='my db' host=db2",
		"host db1",
	} {
		pairs, err := dsn.Split(s, known)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		host, _ := dsn.Lookup(pairs, "host")
		fmt.Printf("%q host=%s\n", pairs, host)
		fmt.Println(dsn.Render(pairs))
	}
	// Output:
	// [{"user" "bob"} {"password" "p@ss"} {"host" "db1,db2"} {"port" "5433,"} {"dbname" "app"} {"sslmode" "require"}] host=db1,db2
	// user=bob password=p@ss host=db1,db2 port=5433, dbname=app sslmode=require
	// [{"host" "db1"} {"dbname" "my db"} {"host" "db2"}] host=db2
	// host=db1 dbname='my db' host=db2
	// error: missing "=" after key "host"
}

func ExampleSet() {
	fmt.Println(dsn.Set("postgres://h/db?sslmode=disable", "application_name", "my app"))
	fmt.Println(dsn.Set("host=h dbname=db", "application_name", "my app"))
	// Output:
	// postgres://h/db?sslmode=disable&application_name=my%20app
	// host=h dbname=db application_name='my app'
}
