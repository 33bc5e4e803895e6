package pgline_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/pgline/pgline"
)

// Connect, query one row, and run a statement. The DSN comes from
// DATABASE_URL, in URL or key=value form.
func Example() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	var greeting string
	var answer int
	err = conn.QueryRow(ctx, "SELECT $1::text || ', world', $2::int * 2", "hello", 21).Scan(&greeting, &answer)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(greeting, answer)
	// Output: hello, world 42
}

// Read many rows: close them (Next returning false does) and check Err.
func ExampleConn_Query() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	rows, err := conn.Query(ctx, "SELECT g, 'item ' || g FROM generate_series(1, $1::int) g", 3)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			log.Fatal(err)
		}
		fmt.Println(id, name)
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 1 item 1
	// 2 item 2
	// 3 item 3
}

// Many goroutines share one Conn: their statements are pipelined, and each
// gets its own answer.
func ExampleConn_pipelining() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	squares := make([]int, 100)
	var wg sync.WaitGroup
	for i := range squares {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := conn.QueryRow(ctx, "SELECT $1::int * $1::int", i).Scan(&squares[i]); err != nil {
				log.Print(err)
			}
		}()
	}
	wg.Wait()
	fmt.Println(squares[7], squares[99])
	// Output: 49 9801
}

// A Pool multiplexes statements over a few connections.
func ExampleNewPool() {
	ctx := context.Background()
	// SetDSNParam adds a setting to a DSN in either form (URL or
	// key=value).
	pool, err := pgline.NewPool(ctx, pgline.SetDSNParam(os.Getenv("DATABASE_URL"), "pool_max_conns", "4"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, 1000)").Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n)
	// Output: 1000
}

// A transaction holds its connection until Commit or Rollback; deferring
// Rollback is harmless after Commit.
func ExampleConn_Begin() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	tx, err := conn.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE accounts(id int, balance int)"); err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO accounts VALUES ($1, $2), ($3, $4)", 1, 100, 2, 50); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	var total int
	if err := conn.QueryRow(ctx, "SELECT sum(balance)::int FROM accounts").Scan(&total); err != nil {
		log.Fatal(err)
	}
	fmt.Println(total)
	// Output: 150
}

// A Batch sends several statements in one round trip; by default each
// runs on its own, so an error in one leaves the others alone.
func ExampleConn_SendBatch() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	b := &pgline.Batch{}
	b.Queue("SELECT $1::int", 1)
	b.Queue("SELECT 1/0")
	b.Queue("SELECT $1::int", 3)
	br := conn.SendBatch(ctx, b)
	for range b.Len() {
		var v int
		if err := br.QueryRow().Scan(&v); err != nil {
			fmt.Println("error:", err.(*pgline.PgError).Code)
			continue
		}
		fmt.Println(v)
	}
	br.Close()
	// Output:
	// 1
	// error: 22012
	// 3
}

// StreamTo sends a column's value to an io.Writer a buffer at a time, and
// ReaderArg sends a parameter from an io.Reader: neither holds the value
// in memory whole.
func ExampleStreamTo() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	const size = 10 << 20
	value := strings.NewReader(strings.Repeat("x", size))
	h := sha256.New()
	dst := pgline.StreamTo(h)
	if err := conn.QueryRow(ctx, "SELECT $1::bytea", pgline.ReaderArg(value, size)).Scan(dst); err != nil {
		log.Fatal(err)
	}
	fmt.Println(dst.N, fmt.Sprintf("%x", h.Sum(nil)) == fmt.Sprintf("%x", sha256.Sum256([]byte(strings.Repeat("x", size)))))
	// Output: 10485760 true
}

// Listen on a channel and wait for a notification.
func ExampleConn_WaitForNotification() {
	ctx := context.Background()
	conn, err := pgline.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	if err := conn.Listen(ctx, "events"); err != nil {
		log.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_notify('events', 'ready')"); err != nil {
		log.Fatal(err)
	}
	n, err := conn.WaitForNotification(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n.Channel, n.Payload)
	// Output: events ready
}

// Logging every statement, connect and acquisition with log/slog; failed
// statements are logged at ERROR with their SQLSTATE.
func ExampleSlogTracer() {
	ctx := context.Background()
	cfg, err := pgline.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		fmt.Println(err)
		return
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg.Tracer = pgline.SlogTracer(logger, &pgline.SlogTracerOptions{Level: slog.LevelDebug})
	c, err := pgline.ConnectConfig(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.Exec(ctx, "SELECT 1/0") // logged: level=ERROR msg="pgline statement" … sqlstate=22012
	fmt.Println(err != nil)
	// Output: true
}
