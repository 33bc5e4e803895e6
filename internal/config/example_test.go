package config_test

import (
	"fmt"

	"github.com/pgline/pgline/internal/config"
	"github.com/pgline/pgline/internal/dsn"
)

func ExampleParse() {
	// No environment, no operating-system user: dsn.System() in a program.
	src := &dsn.Source{}
	s, err := config.Parse("postgres://bob:secret@db1,db2:6000/app?sslmode=require&pool_max_conns=8&search_path=app", src, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range s.Hosts {
		fmt.Println(h.Host, h.Port)
	}
	fmt.Println(s.User, s.Database, s.SSLMode, s.Pool.MaxConns, s.RuntimeParams)

	// An error names the key, never its value.
	_, err = config.Parse("user=bob password=secret port=secret", src, 4)
	fmt.Println(err)
	// Output:
	// db1 5432
	// db2 6000
	// bob app require 8 map[search_path:app]
	// pgline: cannot parse DSN: invalid port: must be a number from 1 to 65535
}
