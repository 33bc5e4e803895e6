package floor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pgline/pgline/pgtest"
)

var srv *pgtest.Server

func TestMain(m *testing.M) {
	os.Exit(pgtest.Run(m, pgtest.Options{Users: []pgtest.User{
		{Name: "pw_clear", Password: "clear secret", Method: "password"},
		{Name: "pw_md5", Password: "md5 secret", Method: "md5"},
		{Name: "pw_scram", Password: "scram secret", Method: "scram-sha-256"},
	}}, &srv))
}

func connect(t *testing.T, user, password string) *Conn {
	t.Helper()
	c, err := Connect(context.Background(), Config{Addr: srv.Addr(), User: user, Password: password, Database: "postgres"})
	if err != nil {
		t.Fatalf("Connect as %s: %v", user, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestExecCountsRowsAndBytes(t *testing.T) {
	c := connect(t, srv.User, "")
	if err := c.Prepare("gs", "SELECT g FROM generate_series(1, $1::int) g"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 1000, 100000} {
		res, err := c.Exec("gs", [][]byte{[]byte(strconv.Itoa(n))}, nil)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		// BindComplete 5, DataRow 5+2+4+4 each, CommandComplete
		// 5+len("SELECT n\0"), ReadyForQuery 6.
		want := int64(5 + 15*n + 5 + len("SELECT "+strconv.Itoa(n)) + 1 + 6)
		if res.Rows != n || res.Bytes != want {
			t.Errorf("n=%d: got %d rows, %d bytes; want %d rows, %d bytes", n, res.Rows, res.Bytes, n, want)
		}
	}
}

func TestBinaryParamAndLargeRow(t *testing.T) {
	c := connect(t, srv.User, "")
	if err := c.Prepare("", "SELECT repeat('x', $1::int4)"); err != nil {
		t.Fatal(err)
	}
	const size = 300000 // several read buffers
	res, err := c.Exec("", [][]byte{{0, 4, 147, 224}}, []int16{1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 1 || res.Bytes < size {
		t.Fatalf("got %+v, want 1 row of more than %d bytes", res, size)
	}
}

func TestServerErrorKeepsConnection(t *testing.T) {
	c := connect(t, srv.User, "")
	if err := c.Prepare("bad", "SELECT * FROM no_such_table"); err == nil {
		t.Fatal("Prepare of a bad statement succeeded")
	} else if se := (*ServerError)(nil); !errors.As(err, &se) || se.Code != "42P01" {
		t.Fatalf("got %v, want SQLSTATE 42P01", err)
	}
	if err := c.Prepare("div", "SELECT 1 / $1::int"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec("div", [][]byte{[]byte("0")}, nil)
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "22012" {
		t.Fatalf("error %v, want division by zero", err)
	}
	if res, err := c.Exec("div", [][]byte{[]byte("1")}, nil); err != nil || res.Rows != 1 {
		t.Fatalf("after errors: %+v, %v", res, err)
	}
}

// Independent commits each request on its own: a failure rolls back only
// its own request and skips the rest up to the Sync.
func TestIndependentCommitsEach(t *testing.T) {
	c := connect(t, srv.User, "")
	for _, st := range [][2]string{
		{"mk", "CREATE TEMP TABLE indep (id int PRIMARY KEY)"},
		{"ins", "INSERT INTO indep VALUES ($1::int) RETURNING id"},
		{"begin", "BEGIN"},
		{"commit", "COMMIT"},
		{"count", "SELECT id FROM indep"},
	} {
		if err := c.Prepare(st[0], st[1]); err != nil {
			t.Fatal(st[0], err)
		}
		if st[0] == "mk" {
			if _, err := c.Exec("mk", nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	req := func(v string) Request { return Request{Stmt: "ins", Params: [][]byte{[]byte(v)}} }
	res, err := c.Independent([]Request{req("1"), req("2")}, "begin", "commit")
	if err != nil || res.Rows != 2 {
		t.Fatalf("independent: %+v, %v; want 2 rows", res, err)
	}
	res, err = c.Independent([]Request{req("3"), req("1"), req("4")}, "begin", "commit")
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "23505" || res.Rows != 1 {
		t.Fatalf("independent with a duplicate: %+v, %v; want 1 row and unique_violation", res, err)
	}
	// 1, 2 and 3 committed; 4 was skipped; the connection is idle again.
	if res, err := c.Exec("count", nil, nil); err != nil || res.Rows != 3 {
		t.Fatalf("after the failure: %+v, %v; want 3 rows", res, err)
	}
}

func TestAuthMethods(t *testing.T) {
	for _, tc := range []struct{ user, password string }{
		{"pw_clear", "clear secret"}, {"pw_md5", "md5 secret"}, {"pw_scram", "scram secret"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			c := connect(t, tc.user, tc.password)
			if err := c.Prepare("", "SELECT 1"); err != nil {
				t.Fatal(err)
			}
			_, err := Connect(context.Background(), Config{Addr: srv.Addr(), User: tc.user, Password: "wrong", Database: "postgres"})
			var se *ServerError
			if !errors.As(err, &se) || se.Code != "28P01" {
				t.Fatalf("wrong password: got %v, want SQLSTATE 28P01", err)
			}
		})
	}
}

// fakeServer accepts one connection and writes reply after reading the
// startup message.
func fakeServer(t *testing.T, reply []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 1024)
		c.Read(buf)
		c.Write(reply)
		time.Sleep(2 * time.Second)
	}()
	return ln.Addr().String()
}

func TestProtocolErrors(t *testing.T) {
	for name, reply := range map[string][]byte{
		"short length":   {'R', 0, 0, 0, 2},
		"huge length":    {'R', 0x7f, 0, 0, 0},
		"unknown auth":   {'R', 0, 0, 0, 8, 0, 0, 0, 99},
		"truncated":      {'R', 0, 0, 0, 8, 0},
		"bad md5 salt":   {'R', 0, 0, 0, 9, 0, 0, 0, 5, 1},
		"sasl no scram":  append([]byte{'R', 0, 0, 0, 15, 0, 0, 0, 10}, "PLAIN\x00\x00"...),
		"sasl cont only": {'R', 0, 0, 0, 8, 0, 0, 0, 11},
	} {
		t.Run(name, func(t *testing.T) {
			addr := fakeServer(t, reply)
			_, err := Connect(context.Background(), Config{Addr: addr, User: "u", Timeout: time.Second})
			if err == nil {
				t.Fatal("Connect succeeded against a broken server")
			}
		})
	}
}

func TestConnectUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := Connect(context.Background(), Config{Addr: addr, User: "u"}); err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
}

func TestBatchOneSync(t *testing.T) {
	c := connect(t, srv.User, "")
	if err := c.Prepare("div", "SELECT 10 / $1::int"); err != nil {
		t.Fatal(err)
	}
	req := func(v string) Request { return Request{Stmt: "div", Params: [][]byte{[]byte(v)}} }
	res, err := c.Batch([]Request{req("1"), req("2"), req("5")})
	if err != nil || res.Rows != 3 {
		t.Fatalf("batch: %+v, %v; want 3 rows", res, err)
	}
	// Under one Sync an error skips everything after it.
	res, err = c.Batch([]Request{req("1"), req("0"), req("5")})
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "22012" || res.Rows != 1 {
		t.Fatalf("batch with an error: %+v, %v; want 1 row and division by zero", res, err)
	}
	if res, err := c.Exec("div", [][]byte{[]byte("2")}, nil); err != nil || res.Rows != 1 {
		t.Fatalf("after the failed batch: %+v, %v", res, err)
	}
}

// TestPipeSharedByGoroutines: both kinds of Pipe answer every goroutine
// with its own rows; a failing query gets its error and the Pipe goes on.
// On a reader Pipe, a caller whose ctx ends is answered at once while the
// others get theirs.
func TestPipeSharedByGoroutines(t *testing.T) {
	for _, kind := range []string{"turn", "reader"} {
		t.Run(kind, func(t *testing.T) {
			c := connect(t, srv.User, "")
			for _, st := range [][2]string{
				{"rows", "SELECT generate_series(1, $1::int)"},
				{"sleep", "SELECT pg_sleep($1::float8)"},
				{"div", "SELECT 1 / $1::int"},
				{"begin", "BEGIN"},
				{"commit", "COMMIT"},
			} {
				if err := c.Prepare(st[0], st[1]); err != nil {
					t.Fatal(st[0], err)
				}
			}
			var p *Pipe
			if kind == "turn" {
				p = NewPipe(c, "begin", "commit")
			} else {
				p = NewReaderPipe(c, "begin", "commit")
			}
			const workers, each = 20, 200
			errs := make(chan error, workers+1)
			for w := range workers {
				go func() {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					for i := range each {
						n := (w*each+i)%7 + 1
						rows, err := p.ExecContext(ctx, "rows", [][]byte{[]byte(strconv.Itoa(n))}, nil)
						if err != nil || rows != n {
							errs <- fmt.Errorf("worker %d query %d: %d rows, %v; want %d", w, i, rows, err, n)
							return
						}
					}
					errs <- nil
				}()
			}
			if kind == "reader" {
				// One caller gives up on a slow query; the others'
				// replies come behind it.
				ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
				start := time.Now()
				_, err := p.ExecContext(ctx, "sleep", [][]byte{[]byte("0.5")}, nil)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 300*time.Millisecond {
					t.Errorf("slow query under a 50ms deadline: %v after %v", err, time.Since(start))
				}
			}
			for range workers {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			var se *ServerError
			if _, err := p.Exec("div", [][]byte{[]byte("0")}, nil); !errors.As(err, &se) || se.Code != "22012" {
				t.Fatalf("division by zero: %v; want 22012", err)
			}
			if rows, err := p.Exec("rows", [][]byte{[]byte("3")}, nil); err != nil || rows != 3 {
				t.Fatalf("after the failure: %d rows, %v", rows, err)
			}
			p.Close()
			if _, err := p.Exec("rows", [][]byte{[]byte("1")}, nil); !errors.Is(err, ErrBroken) {
				t.Fatalf("after Close: %v; want ErrBroken", err)
			}
		})
	}
}

func TestExecValue(t *testing.T) {
	c := connect(t, srv.User, "")
	if err := c.Prepare("val", "SELECT CASE WHEN $1::int < 0 THEN NULL ELSE decode(repeat('ab', $1::int), 'hex') END"); err != nil {
		t.Fatal(err)
	}
	if err := c.Prepare("div", "SELECT (1 / $1::int)::text::bytea"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 3, 200000} {
		v, err := c.ExecValue("val", [][]byte{[]byte(strconv.Itoa(n))}, nil)
		if err != nil || len(v) != n || n > 0 && (v[0] != 0xab || v[n-1] != 0xab) {
			t.Fatalf("value of %d bytes: %d bytes, %v", n, len(v), err)
		}
	}
	if v, err := c.ExecValue("val", [][]byte{[]byte("-1")}, nil); err != nil || v != nil {
		t.Fatalf("NULL: %q, %v", v, err)
	}
	var se *ServerError
	if _, err := c.ExecValue("div", [][]byte{[]byte("0")}, nil); !errors.As(err, &se) || se.Code != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
	if v, err := c.ExecValue("val", [][]byte{[]byte("2")}, nil); err != nil || len(v) != 2 {
		t.Fatalf("after the error: %d bytes, %v", len(v), err)
	}
}
