package pgline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgline/pgline/internal/session"
)

// copyTable creates a temporary table for the COPY tests on c.
func copyTable(t *testing.T, c *Conn, name string) {
	t.Helper()
	sql := "CREATE TEMP TABLE " + name + "(a int4 CHECK (a >= 0), b text NOT NULL, c float8, d timestamptz, e bool)"
	if _, err := c.Exec(testCtx(t), sql); err != nil {
		t.Fatal(err)
	}
}

var copyCols = []string{"a", "b", "c", "d", "e"}

var copyEpoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// copyRow fills row with the values of row i.
func copyRow(row []any, i int) []any {
	row = append(row[:0], i, "row "+strconv.Itoa(i), float64(i)/4, copyEpoch.Add(time.Duration(i)*time.Second), i%3 == 0)
	return row
}

func TestCopyFromMillionRows(t *testing.T) {
	c := connect(t, srv.DSN())
	copyTable(t, c, "cp_big")
	const total = 1_000_000

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	row := make([]any, 0, 5)
	i := 0
	src := CopyFromFunc(func() ([]any, error) {
		if i == total {
			return nil, nil
		}
		i++
		if i%50_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		row = copyRow(row, i)
		return row, nil
	})
	n, err := c.CopyFrom(testCtx(t), Identifier{"cp_big"}, copyCols, src)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	if n != total {
		t.Fatalf("CopyFrom returned %d, want %d", n, total)
	}
	// The binary data is about 55 MB: holding it would show.
	if growth := int64(peak) - int64(base); growth > 32<<20 {
		t.Fatalf("heap grew by %d MiB during the COPY", growth>>20)
	}
	t.Logf("heap growth %.1f MiB", float64(int64(peak)-int64(base))/(1<<20))

	var cnt, sumA int64
	if err := c.QueryRow(testCtx(t), "SELECT count(*), sum(a) FROM cp_big").Scan(&cnt, &sumA); err != nil {
		t.Fatal(err)
	}
	if cnt != total || sumA != total*(total+1)/2 {
		t.Fatalf("count %d sum %d", cnt, sumA)
	}
	for _, k := range []int{1, 777_777, total} {
		var b string
		var cv float64
		var d time.Time
		var e bool
		if err := c.QueryRow(testCtx(t), "SELECT b, c, d, e FROM cp_big WHERE a = $1", k).Scan(&b, &cv, &d, &e); err != nil {
			t.Fatal(err)
		}
		want := copyRow(nil, k)
		if b != want[1] || cv != want[2] || !d.Equal(want[3].(time.Time)) || e != want[4] {
			t.Fatalf("row %d = %q %v %v %v, want %v", k, b, cv, d, e, want)
		}
	}
}

func TestCopyFromSourceError(t *testing.T) {
	c := connect(t, srv.DSN())
	copyTable(t, c, "cp_srcerr")
	boom := errors.New("source broke")
	row := make([]any, 0, 5)
	i := 0
	n, err := c.CopyFrom(testCtx(t), Identifier{"cp_srcerr"}, copyCols, CopyFromFunc(func() ([]any, error) {
		i++
		if i == 500_000 {
			return nil, boom
		}
		return copyRow(row, i), nil
	}))
	if !errors.Is(err, boom) || n != 0 {
		t.Fatalf("got %d, %v; want the source's error", n, err)
	}
	if got := idleRowCount(t, c, "cp_srcerr"); got != 0 {
		t.Fatalf("%d rows committed", got)
	}

	// A source failing before its first row sends nothing.
	n, err = c.CopyFrom(testCtx(t), Identifier{"cp_srcerr"}, copyCols, CopyFromFunc(func() ([]any, error) { return nil, boom }))
	if !errors.Is(err, boom) || n != 0 || !session.SafeToRetry(err) {
		t.Fatalf("got %d, %v", n, err)
	}
	// An empty source copies nothing, successfully.
	n, err = c.CopyFrom(testCtx(t), Identifier{"cp_srcerr"}, copyCols, CopyFromRows(nil))
	if err != nil || n != 0 {
		t.Fatalf("empty source: %d, %v", n, err)
	}
	if got := idleRowCount(t, c, "cp_srcerr"); got != 0 {
		t.Fatalf("%d rows", got)
	}
}

func TestCopyFromServerError(t *testing.T) {
	c := connect(t, srv.DSN())
	copyTable(t, c, "cp_bad")
	const total, badAt = 1_000_000, 100_000
	cases := []struct {
		name string
		bad  func(row []any)
		code string
	}{
		{"not null", func(row []any) { row[1] = nil }, "23502"},
		{"check", func(row []any) { row[0] = -1 }, "23514"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row := make([]any, 0, 5)
			produced := 0
			_, err := c.CopyFrom(testCtx(t), Identifier{"cp_bad"}, copyCols, CopyFromFunc(func() ([]any, error) {
				if produced == total {
					return nil, nil
				}
				produced++
				row = copyRow(row, produced)
				if produced == badAt {
					tc.bad(row)
				}
				return row, nil
			}))
			var pgErr *PgError
			if !errors.As(err, &pgErr) || pgErr.Code != tc.code {
				t.Fatalf("got %v, want a PgError %s", err, tc.code)
			}
			// The server's error stops the sending soon after it: the
			// source is not read to its end.
			if produced > total/2 {
				t.Errorf("source read up to row %d after the server failed at row %d", produced, badAt)
			}
			if got := idleRowCount(t, c, "cp_bad"); got != 0 {
				t.Fatalf("%d rows committed", got)
			}
		})
	}
	// A missing table or column is the describe's error, before any COPY.
	var pgErr *PgError
	if _, err := c.CopyFrom(testCtx(t), Identifier{"cp_nope"}, []string{"a"}, CopyFromRows([][]any{{1}})); !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Fatalf("missing table: %v", err)
	}
	if _, err := c.CopyFrom(testCtx(t), Identifier{"cp_bad"}, []string{"zz"}, CopyFromRows([][]any{{1}})); !errors.As(err, &pgErr) || pgErr.Code != "42703" {
		t.Fatalf("missing column: %v", err)
	}
	if got := idleRowCount(t, c, "cp_bad"); got != 0 {
		t.Fatalf("%d rows", got)
	}
}

func TestCopyFromEncodeErrors(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyTable(t, c, "cp_enc")
	if _, err := c.Exec(ctx, "CREATE TYPE cp_mood AS ENUM ('sad', 'ok'); CREATE TEMP TABLE cp_enum(m cp_mood)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(context.Background(), "DROP TABLE IF EXISTS cp_enum; DROP TYPE IF EXISTS cp_mood") })

	// A value whose text is no value of its column's type, in the first
	// row: an error before the COPY is sent (a string that is, "7", goes
	// through the column's codec: TestCopyFromTextOnlyValues).
	_, err := c.CopyFrom(ctx, Identifier{"cp_enc"}, copyCols, CopyFromRows([][]any{{"seven", "x", 1.0, copyEpoch, true}}))
	if err == nil || !strings.Contains(err.Error(), `column "a"`) || !strings.Contains(err.Error(), "string") || !session.SafeToRetry(err) {
		t.Fatalf("text-only value: %v", err)
	}
	_, err = c.CopyFrom(ctx, Identifier{"cp_enum"}, []string{"m"}, CopyFromRows([][]any{{"ok"}}))
	if err == nil || !strings.Contains(err.Error(), `column "m"`) || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("enum: %v", err)
	}
	// The same in a later row, after data went out: the COPY is aborted.
	rows := make([][]any, 5000)
	for i := range rows {
		rows[i] = copyRow(nil, i)
	}
	rows[4000][3] = "not a date"
	_, err = c.CopyFrom(ctx, Identifier{"cp_enc"}, copyCols, CopyFromRows(rows))
	if err == nil || !strings.Contains(err.Error(), "row 4001") || !strings.Contains(err.Error(), `column "d"`) {
		t.Fatalf("bad row 4001: %v", err)
	}
	rows[4000] = []any{1, "too short"}
	if _, err = c.CopyFrom(ctx, Identifier{"cp_enc"}, copyCols, CopyFromRows(rows)); err == nil || !strings.Contains(err.Error(), "2 values for 5 columns") {
		t.Fatalf("short row: %v", err)
	}
	if got := idleRowCount(t, c, "cp_enc"); got != 0 {
		t.Fatalf("%d rows committed", got)
	}
	if _, err := c.CopyFrom(ctx, Identifier{"cp_enc"}, copyCols, nil); err == nil {
		t.Fatal("nil source: no error")
	}
}

func TestCopyFromQuotedNames(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, `CREATE TEMP TABLE "cp we""ird" ("Mixed Case" int8, "sel;ect" bytea)`); err != nil {
		t.Fatal(err)
	}
	n, err := c.CopyFrom(ctx, Identifier{`cp we"ird`}, []string{"Mixed Case", "sel;ect"}, CopyFromRows([][]any{{int64(1) << 40, []byte{0, 1, 2}}, {nil, nil}}))
	if err != nil || n != 2 {
		t.Fatalf("%d, %v", n, err)
	}
	var v int64
	var b []byte
	if err := c.QueryRow(ctx, `SELECT "Mixed Case", "sel;ect" FROM "cp we""ird" WHERE "Mixed Case" IS NOT NULL`).Scan(&v, &b); err != nil {
		t.Fatal(err)
	}
	if v != 1<<40 || !bytes.Equal(b, []byte{0, 1, 2}) {
		t.Fatalf("%d %x", v, b)
	}
}

func TestCopyFromReaderCSV(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE cp_csv(a int, b text)"); err != nil {
		t.Fatal(err)
	}
	csv := "1,plain\n2,\"with, comma\"\n3,\"quote \"\"q\"\"\"\n4,\n"
	tag, err := c.CopyFromReader(ctx, "COPY cp_csv FROM STDIN (FORMAT csv)", strings.NewReader(csv))
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("%q, %v", tag, err)
	}
	var got []string
	rows, err := c.Query(ctx, "SELECT a, coalesce(b, '<null>') FROM cp_csv ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a int
		var b string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d=%s", a, b))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := `1=plain 2=with, comma 3=quote "q" 4=<null>`; strings.Join(got, " ") != want {
		t.Fatalf("got %q", strings.Join(got, " "))
	}

	// Many chunks, from a reader giving small pieces.
	var big strings.Builder
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&big, "%d,line %d\n", i, i)
	}
	tag, err = c.CopyFromReader(ctx, "COPY cp_csv FROM STDIN (FORMAT csv)", &copySlowReader{r: strings.NewReader(big.String()), n: 1000})
	if err != nil || tag.RowsAffected() != 100_000 {
		t.Fatalf("%q, %v", tag, err)
	}

	// A reader failing midway: nothing committed.
	boom := errors.New("disk gone")
	r := io.MultiReader(strings.NewReader(big.String()), &copyFailReader{err: boom})
	if _, err := c.CopyFromReader(ctx, "COPY cp_csv FROM STDIN (FORMAT csv)", r); !errors.Is(err, boom) {
		t.Fatalf("failing reader: %v", err)
	}
	// Bad data: the server's error.
	var pgErr *PgError
	if _, err := c.CopyFromReader(ctx, "COPY cp_csv FROM STDIN (FORMAT csv)", strings.NewReader("5,ok\nx,bad\n")); !errors.As(err, &pgErr) || pgErr.Code != "22P02" {
		t.Fatalf("bad csv: %v", err)
	}
	// Not a COPY FROM STDIN.
	if _, err := c.CopyFromReader(ctx, "SELECT 1", strings.NewReader("")); err == nil || !strings.Contains(err.Error(), "not a COPY") {
		t.Fatalf("SELECT: %v", err)
	}
	if _, err := c.CopyFromReader(ctx, "COPY cp_csv TO STDOUT", strings.NewReader("")); err == nil {
		t.Fatal("COPY TO: no error")
	}
	if got := idleRowCount(t, c, "cp_csv"); got != 100_004 {
		t.Fatalf("%d rows, want 100004", got)
	}
}

// copySlowReader returns at most n bytes per Read.
type copySlowReader struct {
	r io.Reader
	n int
}

func (s *copySlowReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

type copyFailReader struct{ err error }

func (f *copyFailReader) Read([]byte) (int, error) { return 0, f.err }

func TestCopyTo(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	var buf bytes.Buffer
	tag, err := c.CopyTo(ctx, &buf, "COPY (SELECT i, 'v' || i FROM generate_series(1, 10000) i) TO STDOUT (FORMAT csv)")
	if err != nil || tag.String() != "COPY 10000" {
		t.Fatalf("%q, %v", tag, err)
	}
	var want strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&want, "%d,v%d\n", i, i)
	}
	if buf.String() != want.String() {
		t.Fatalf("CopyTo wrote %d bytes, want %d", buf.Len(), want.Len())
	}

	// A writer failing midway of a long COPY: the statement is cancelled,
	// not read to its end.
	boom := errors.New("pipe closed")
	fw := &copyFailWriter{after: 3, err: boom}
	start := time.Now()
	_, err = c.CopyTo(ctx, fw, "COPY (SELECT generate_series(1, 100000000)) TO STDOUT")
	if !errors.Is(err, boom) {
		t.Fatalf("failing writer: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing writer: took %v", d)
	}
	if fw.writes != 4 {
		t.Fatalf("%d writes after the failure", fw.writes-4)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	var pgErr *PgError
	if _, err := c.CopyTo(ctx, io.Discard, "COPY cp_none TO STDOUT"); !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Fatalf("missing table: %v", err)
	}
	if _, err := c.CopyTo(ctx, io.Discard, "SELECT 1"); err == nil || !strings.Contains(err.Error(), "not a COPY") {
		t.Fatalf("SELECT: %v", err)
	}
	// A COPY FROM STDIN given to CopyTo is refused, cleanly.
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE cp_to(a int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyTo(ctx, io.Discard, "COPY cp_to FROM STDIN"); err == nil {
		t.Fatal("COPY FROM given to CopyTo: no error")
	}
	if got := idleRowCount(t, c, "cp_to"); got != 0 {
		t.Fatalf("%d rows", got)
	}
}

type copyFailWriter struct {
	after, writes int
	err           error
}

func (f *copyFailWriter) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > f.after {
		return 0, f.err
	}
	return len(p), nil
}

func TestCopyCancel(t *testing.T) {
	c := connect(t, srv.DSN())
	copyTable(t, c, "cp_cancel")

	// CopyFrom: ctx ends while rows stream (an endless source).
	ctx, cancel := context.WithCancel(testCtx(t))
	row := make([]any, 0, 5)
	i := 0
	start := time.Now()
	_, err := c.CopyFrom(ctx, Identifier{"cp_cancel"}, copyCols, CopyFromFunc(func() ([]any, error) {
		i++
		if i == 200_000 {
			cancel()
		}
		return copyRow(row, i), nil
	}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CopyFrom: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("CopyFrom took %v to stop", d)
	}
	if got := idleRowCount(t, c, "cp_cancel"); got != 0 {
		t.Fatalf("%d rows committed", got)
	}

	// CopyTo: ctx ends while data arrives.
	ctx, cancel = context.WithCancel(testCtx(t))
	defer cancel()
	w := &copyCancelWriter{cancel: cancel}
	_, err = c.CopyTo(ctx, w, "COPY (SELECT generate_series(1, 100000000)) TO STDOUT")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CopyTo: %v, want context.Canceled", err)
	}
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}

	// CopyFromReader: ctx ends between chunks.
	ctx, cancel = context.WithCancel(testCtx(t))
	defer cancel()
	r := &copyCancelReader{cancel: cancel, line: []byte("1,x,0,2024-01-01,t\n")}
	if _, err := c.CopyFromReader(ctx, "COPY cp_cancel FROM STDIN (FORMAT csv)", r); !errors.Is(err, context.Canceled) {
		t.Fatalf("CopyFromReader: %v, want context.Canceled", err)
	}
	if got := idleRowCount(t, c, "cp_cancel"); got != 0 {
		t.Fatalf("%d rows committed", got)
	}

	// A ctx already done: nothing sent.
	ctx, cancel = context.WithCancel(testCtx(t))
	cancel()
	if _, err := c.CopyFrom(ctx, Identifier{"cp_cancel"}, copyCols, CopyFromRows([][]any{copyRow(nil, 1)})); !errors.Is(err, context.Canceled) {
		t.Fatalf("done ctx: %v", err)
	}
	if got := idleRowCount(t, c, "cp_cancel"); got != 0 {
		t.Fatalf("%d rows", got)
	}
}

// copyCancelWriter cancels at its 100th write.
type copyCancelWriter struct {
	cancel func()
	n      int
}

func (w *copyCancelWriter) Write(p []byte) (int, error) {
	if w.n++; w.n == 100 {
		w.cancel()
	}
	return len(p), nil
}

// copyCancelReader repeats line for ever, cancelling after 1 MiB.
type copyCancelReader struct {
	cancel func()
	line   []byte
	n      int
}

func (r *copyCancelReader) Read(p []byte) (int, error) {
	k := 0
	for k+len(r.line) <= len(p) {
		k += copy(p[k:], r.line)
	}
	if r.n += k; r.n > 1<<20 {
		r.cancel()
	}
	return k, nil
}

func TestCopyFromTx(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyTable(t, c, "cp_tx")
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]any, 1000)
	for i := range rows {
		rows[i] = copyRow(nil, i)
	}

	// Another goroutine of the same transaction waits for the COPY.
	started := make(chan struct{})
	var copyEnded atomic.Bool
	var other error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-started
		_, other = tx.Exec(ctx, "INSERT INTO cp_tx (a, b) VALUES ($1, $2)", 5000, "other")
		if other == nil && !copyEnded.Load() {
			other = errors.New("the INSERT ran during the COPY")
		}
	}()
	src := CopyFromFunc(func() ([]any, error) {
		if len(rows) == 0 {
			copyEnded.Store(true)
			return nil, nil
		}
		if len(rows) == 500 {
			close(started)
			time.Sleep(50 * time.Millisecond) // let the INSERT try to get in
		}
		r := rows[0]
		rows = rows[1:]
		return r, nil
	})
	n, err := tx.CopyFrom(ctx, Identifier{"cp_tx"}, copyCols, src)
	if err != nil || n != 1000 {
		t.Fatalf("%d, %v", n, err)
	}
	wg.Wait()
	if other != nil {
		t.Fatal(other)
	}
	var cnt int64
	if err := tx.QueryRow(ctx, "SELECT count(*) FROM cp_tx").Scan(&cnt); err != nil || cnt != 1001 {
		t.Fatalf("in tx: %d, %v", cnt, err)
	}
	var buf bytes.Buffer
	if _, err := tx.CopyTo(ctx, &buf, "COPY (SELECT count(*) FROM cp_tx) TO STDOUT"); err != nil || buf.String() != "1001\n" {
		t.Fatalf("CopyTo in tx: %q, %v", buf.String(), err)
	}
	if _, err := tx.CopyFromReader(ctx, "COPY cp_tx (a, b) FROM STDIN", strings.NewReader("1\tx\n")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := idleRowCount(t, c, "cp_tx"); got != 0 {
		t.Fatalf("%d rows after rollback", got)
	}
	if _, err := tx.CopyFrom(ctx, Identifier{"cp_tx"}, copyCols, CopyFromRows(nil)); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("after rollback: %v", err)
	}
	if _, err := tx.CopyTo(ctx, io.Discard, "COPY cp_tx TO STDOUT"); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("after rollback: %v", err)
	}
	if _, err := tx.CopyFromReader(ctx, "COPY cp_tx FROM STDIN", strings.NewReader("")); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("after rollback: %v", err)
	}
}

func TestCopyFromConcurrentStatements(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN())
	copyTable(t, c, "cp_conc")
	const total, others = 300_000, 20

	// Statements in flight before the COPY, then statements sent during it.
	var srcEnded atomic.Bool
	errs := make(chan error, 2*others)
	var wg sync.WaitGroup
	query := func(i int, during bool) {
		defer wg.Done()
		var v int
		if err := c.QueryRow(ctx, "SELECT $1::int4 + 1", i).Scan(&v); err != nil {
			errs <- err
			return
		}
		if v != i+1 {
			errs <- fmt.Errorf("query %d got %d", i, v)
		}
		if during && !srcEnded.Load() {
			errs <- fmt.Errorf("query %d ran during the COPY", i)
		}
	}
	for i := 0; i < others; i++ {
		wg.Add(1)
		go query(i, false)
	}
	row := make([]any, 0, 5)
	i := 0
	n, err := c.CopyFrom(ctx, Identifier{"cp_conc"}, copyCols, CopyFromFunc(func() ([]any, error) {
		if i == total {
			srcEnded.Store(true)
			return nil, nil
		}
		i++
		if i == 1000 {
			for k := 0; k < others; k++ {
				wg.Add(1)
				go query(100+k, true)
			}
		}
		return copyRow(row, i), nil
	}))
	if err != nil || n != total {
		t.Fatalf("%d, %v", n, err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := idleRowCount(t, c, "cp_conc"); got != total {
		t.Fatalf("%d rows", got)
	}
}

func TestPoolCopy(t *testing.T) {
	ctx := testCtx(t)
	p, err := NewPool(ctx, srv.DSN("pool_max_conns=2"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Exec(ctx, "DROP TABLE IF EXISTS cp_pool; CREATE TABLE cp_pool(a int4, b text NOT NULL, c float8, d timestamptz, e bool)"); err != nil {
		t.Fatal(err)
	}
	defer p.Exec(context.Background(), "DROP TABLE IF EXISTS cp_pool")
	rows := make([][]any, 10_000)
	for i := range rows {
		rows[i] = copyRow(nil, i)
	}
	if n, err := p.CopyFrom(ctx, Identifier{"public", "cp_pool"}, copyCols, CopyFromRows(rows)); err != nil || n != 10_000 {
		t.Fatalf("%d, %v", n, err)
	}
	if tag, err := p.CopyFromReader(ctx, "COPY cp_pool (a, b) FROM STDIN", strings.NewReader("1\tone\n2\ttwo\n")); err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("%q, %v", tag, err)
	}
	var buf bytes.Buffer
	if _, err := p.CopyTo(ctx, &buf, "COPY (SELECT count(*) FROM cp_pool) TO STDOUT"); err != nil || buf.String() != "10002\n" {
		t.Fatalf("%q, %v", buf.String(), err)
	}
	rows[5000][1] = nil
	var pgErr *PgError
	if _, err := p.CopyFrom(ctx, Identifier{"cp_pool"}, copyCols, CopyFromRows(rows)); !errors.As(err, &pgErr) {
		t.Fatalf("NOT NULL: %v", err)
	}
	if s := p.Stat(); s.AcquiredConns != 0 {
		t.Fatalf("%d connections still held", s.AcquiredConns)
	}
}

// TestCopyToCtxDeadline: a COPY TO STDOUT whose ctx ends returns at the
// deadline with ctx's error; the COPY is canceled and drained behind it,
// and the connection serves the next statement.
func TestCopyToCtxDeadline(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.CopyTo(ctx, io.Discard, "COPY (SELECT g, pg_sleep(0.001) FROM generate_series(1, 1000000) g) TO STDOUT")
	if took := time.Since(start); took > time.Second {
		t.Errorf("CopyTo returned after %v", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CopyTo: %v, want DeadlineExceeded", err)
	}
	var one int
	if err := c.QueryRow(testCtx(t), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the COPY: %d, %v", one, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the next statement waited %v: the COPY was not canceled", took)
	}
}
