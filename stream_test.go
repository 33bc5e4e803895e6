package pgline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
)

const bigSize = 50 << 20 // 50 MiB

// randomReader returns n reproducible random bytes (letters, so that they
// are valid text too) and their SHA-256.
func randomReader(seed uint64, n int) (io.Reader, [32]byte) {
	rng := rand.New(rand.NewChaCha8([32]byte{byte(seed)}))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(26))
	}
	return bytes.NewReader(b), sha256.Sum256(b)
}

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLargeValues: 50 MiB bytea and text in through ReaderArg, out through
// Scan and StreamTo, with equal SHA-256 and bounded allocations.
func TestLargeValues(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE big(id int, b bytea, t text)"); err != nil {
		t.Fatal(err)
	}
	rb, sumB := randomReader(1, bigSize)
	rt, sumT := randomReader(2, bigSize)
	if _, err := c.Exec(ctx, "INSERT INTO big VALUES (1, $1, $2)", session.ReaderArg(rb, bigSize), session.ReaderArg(rt, bigSize)); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT length(b) + length(t) FROM big").Scan(&n); err != nil || n != 2*bigSize {
		t.Fatalf("stored %d bytes, %v", n, err)
	}

	for _, col := range []string{"b", "t"} {
		want := sumB
		if col == "t" {
			want = sumT
		}
		t.Run(col+"/bytes", func(t *testing.T) {
			var v []byte
			got := allocated(func() {
				if err := c.QueryRow(ctx, "SELECT "+col+" FROM big").Scan(&v); err != nil {
					t.Fatal(err)
				}
			})
			if sha256.Sum256(v) != want {
				t.Fatal("SHA-256 differs")
			}
			if limit := uint64(bigSize) * 105 / 100; got > limit {
				t.Fatalf("Scan into []byte allocated %d bytes for a %d-byte value (limit %d)", got, bigSize, limit)
			}
		})
		t.Run(col+"/string", func(t *testing.T) {
			var v string
			got := allocated(func() {
				if err := c.QueryRow(ctx, "SELECT "+col+" FROM big").Scan(&v); err != nil {
					t.Fatal(err)
				}
			})
			if sha256.Sum256([]byte(v)) != want {
				t.Fatal("SHA-256 differs")
			}
			if limit := uint64(bigSize) * 105 / 100; got > limit {
				t.Fatalf("Scan into string allocated %d bytes (limit %d)", got, limit)
			}
		})
		t.Run(col+"/StreamTo", func(t *testing.T) {
			h := sha256.New()
			dst := StreamTo(h)
			got := allocated(func() {
				if err := c.QueryRow(ctx, "SELECT "+col+" FROM big").Scan(dst); err != nil {
					t.Fatal(err)
				}
			})
			if !bytes.Equal(h.Sum(nil), want[:]) || dst.N != bigSize || dst.Null {
				t.Fatalf("SHA-256 differs (N=%d)", dst.N)
			}
			if got > 256<<10 {
				t.Fatalf("StreamTo allocated %d bytes", got)
			}
		})
	}
}

// TestLargeValueMixedRow: a row of small columns and one large one, the
// large one in each position; scanning only the small ones skips the large
// one without allocating it.
func TestLargeValueMixedRow(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	const size = 3 << 20
	const large = "repeat('x', 3145728)"
	smalls := []string{"7::int4", "'small'::text", "2.5::float8", "NULL::text"}
	for pos := 0; pos <= len(smalls); pos++ {
		order := append(append(append([]string(nil), smalls[:pos]...), large), smalls[pos:]...)
		sql := "SELECT " + strings.Join(order, ", ")
		t.Run("large-at-"+string(rune('0'+pos)), func(t *testing.T) {
			var i int32
			var s, big string
			var f float64
			var null *string
			dest := make([]any, 5)
			small := []any{&i, &s, &f, &null}
			k := 0
			for j := range order {
				if order[j] == large {
					dest[j] = &big
					continue
				}
				dest[j] = small[k]
				k++
			}
			if err := c.QueryRow(ctx, sql).Scan(dest...); err != nil {
				t.Fatal(err)
			}
			if i != 7 || s != "small" || f != 2.5 || null != nil || len(big) != size || strings.Trim(big, "x") != "" {
				t.Fatalf("got %d %q %v %v len(big)=%d", i, s, f, null, len(big))
			}
			// Skip the large column: nothing near its size is allocated.
			for j := range order {
				if order[j] == large {
					dest[j] = nil
				}
			}
			got := allocated(func() {
				if err := c.QueryRow(ctx, sql).Scan(dest...); err != nil {
					t.Fatal(err)
				}
			})
			if got > 256<<10 {
				t.Fatalf("skipping the large column allocated %d bytes", got)
			}
			if i != 7 || s != "small" || f != 2.5 {
				t.Fatalf("small columns: %d %q %v", i, s, f)
			}
		})
	}
}

// TestLargeValueAbandoned: closing Rows, or cancelling ctx, in the middle
// of a large value leaves the connection usable, and pipelined requests
// of other goroutines get their own replies.
func TestLargeValueAbandoned(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	const sql = "SELECT repeat('y', 52428800), g FROM generate_series(1, 3) g"
	others := func() func() {
		var wg sync.WaitGroup
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var v int
				if err := c.QueryRow(ctx, "SELECT $1::int", i).Scan(&v); err != nil || v != i {
					t.Errorf("pipelined request %d: %d %v", i, v, err)
				}
			}()
		}
		return wg.Wait
	}

	t.Run("close", func(t *testing.T) {
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		wait := others()
		if !rows.Next() {
			t.Fatal(rows.Err())
		}
		rows.Close()
		wait()
	})

	t.Run("cancel", func(t *testing.T) {
		qctx, cancel := context.WithCancel(ctx)
		rows, err := c.Query(qctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		wait := others()
		rows.Next()
		w := &slowWriter{cancel: cancel, after: 1 << 20}
		err = rows.Scan(nil, StreamTo(w))
		for rows.Next() {
		}
		rows.Close()
		wait()
		if err := c.Ping(ctx); err != nil {
			t.Fatalf("connection after a cancelled stream: %v", err)
		}
	})

	t.Run("writer-fails", func(t *testing.T) {
		var g int
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		rows.Next()
		if err := rows.Scan(StreamTo(failingWriter{}), &g); err == nil || g != 1 {
			t.Fatalf("Scan with a failing writer: %v, g=%d", err, g)
		}
		rows.Close()
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// slowWriter cancels its ctx after some bytes and then writes slowly.
type slowWriter struct {
	n, after int
	cancel   func()
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.n > w.after {
		w.cancel()
	}
	return len(p), nil
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestMaxMessageSizeStreams: with a small max_message_size, a larger value
// cannot be scanned whole but can be streamed.
func TestMaxMessageSizeStreams(t *testing.T) {
	c := connect(t, srv.DSN("max_message_size=1048576"))
	ctx := testCtx(t)
	const sql = "SELECT repeat('z', 5242880), 42"
	var s string
	var n int
	err := c.QueryRow(ctx, sql).Scan(&s, &n)
	if err == nil || !strings.Contains(err.Error(), "max_message_size") {
		t.Fatalf("Scan of a value over max_message_size: %v", err)
	}
	var buf bytes.Buffer
	if err := c.QueryRow(ctx, sql).Scan(StreamTo(&buf), &n); err != nil || buf.Len() != 5<<20 || n != 42 {
		t.Fatalf("StreamTo: %d bytes, n=%d, %v", buf.Len(), n, err)
	}
}

// TestReaderArgShort: a reader that ends early cannot complete the
// message: the call fails and the connection is closed, nothing hangs.
func TestReaderArgShort(t *testing.T) {
	c := connect(t, srv.DSN())
	ctx := testCtx(t)
	_, err := c.Exec(ctx, "SELECT length($1::bytea)", session.ReaderArg(strings.NewReader("short"), 100))
	if err == nil || !strings.Contains(err.Error(), "ReaderArg gave 5 of its 100 bytes") {
		t.Fatalf("short ReaderArg: %v; want the reader's shortfall as the cause", err)
	}
	// A reader failing with an error of its own.
	c3 := connect(t, srv.DSN())
	bad := io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(errors.New("disk on fire")))
	if _, err := c3.Exec(ctx, "SELECT length($1::bytea)", session.ReaderArg(bad, 100)); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("failing ReaderArg: %v; want the reader's error", err)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after a short ReaderArg: %v", err)
	}
	c2 := connect(t, srv.DSN())
	if _, err := c2.Exec(ctx, "SELECT $1::int", session.ReaderArg(strings.NewReader("1"), 1)); err == nil {
		t.Fatal("ReaderArg for an int parameter accepted")
	}
	if err := c2.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestFakeServerBigRowBadColumn: a DataRow larger than the read buffer
// whose column claims more bytes than the message holds is a protocol
// error, with no allocation of that size.
func TestFakeServerBigRowBadColumn(t *testing.T) {
	body := make([]byte, 2+4+100000)
	binary.BigEndian.PutUint16(body, 1)
	binary.BigEndian.PutUint32(body[2:], 0x7FFF0000) // far beyond the message
	dsn := fakeRowServer(t, []wire.FieldDescription{{Name: "v", DataTypeOID: 17, DataTypeSize: -1}}, body)
	c := connect(t, dsn)
	var v []byte
	got := allocated(func() {
		err := c.QueryRow(testCtx(t), "SELECT v").Scan(&v)
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Fatalf("got %v, want a *ProtocolError", err)
		}
	})
	if got > 16<<20 {
		t.Fatalf("allocated %d bytes", got)
	}
	if !c.IsClosed() {
		t.Fatal("connection open after a protocol error")
	}
}

// TestBigMessagesDiscardedOrStreamed: rows larger than max_message_size
// that are thrown away (Exec without arguments, the reply of an abandoned
// request) are skipped a buffer at a time, and CopyTo streams a CopyData
// of any size; each used to close the connection with a protocol error.
func TestBigMessagesDiscardedOrStreamed(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN("max_message_size=1048576"))
	const big = "SELECT repeat('x', 2000000)"

	if tag, err := c.Exec(ctx, big); err != nil || tag.String() != "SELECT 1" {
		t.Fatalf("Exec of a big row: %v, %v", tag, err)
	}
	var buf bytes.Buffer
	if _, err := c.CopyTo(ctx, &buf, "COPY ("+big+") TO STDOUT"); err != nil || buf.Len() != 2000001 {
		t.Fatalf("CopyTo of a big row: %d bytes, %v", buf.Len(), err)
	}

	// An abandoned request whose reply holds a big row.
	if err := c.QueryRow(ctx, big).Scan(StreamTo(io.Discard)); err != nil {
		t.Fatal(err) // prepares the statement
	}
	rows, err := c.Query(ctx, "SELECT 1") // holds the head
	if err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.QueryRow(qctx, big).Scan(StreamTo(io.Discard)) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned request: %v", err)
	}
	rows.Close() // the head drains the abandoned reply
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("after draining a big row: %v", err)
	}
}

// slowCancelWriter cancels after its first megabyte, then writes slowly.
type slowCancelWriter struct {
	n      int
	cancel context.CancelFunc
}

func (w *slowCancelWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.n > 1<<20 {
		w.cancel()
		time.Sleep(50 * time.Millisecond)
	}
	return len(p), nil
}

// TestBigRowCancelTimeoutError: when ctx ends while a big value streams to
// a slow writer and the cancel changes nothing (the server sent it all
// already), CancelTimeout closes the connection; Scan's error says the ctx
// ended, as Err's does, not only "i/o timeout".
func TestBigRowCancelTimeoutError(t *testing.T) {
	c := connectCancelTimeout(t, 300*time.Millisecond)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	rows, err := c.Query(ctx, "SELECT repeat('y', 50 << 20)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	err = rows.Scan(StreamTo(&slowCancelWriter{cancel: cancel}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan: %v; want it to wrap context.Canceled", err)
	}
}

// TestFakeServerBigRowEmptyJSONB: a big row whose binary jsonb column has
// no version byte (only a broken server sends one) gives a column error
// when scanned into a string, not a panic.
func TestFakeServerBigRowEmptyJSONB(t *testing.T) {
	pad := 100000
	body := make([]byte, 2+4+0+4+pad)
	binary.BigEndian.PutUint16(body, 2)
	binary.BigEndian.PutUint32(body[2:], 0)           // jsonb: no bytes at all
	binary.BigEndian.PutUint32(body[6:], uint32(pad)) // bytea padding
	dsn := fakeRowServer(t, []wire.FieldDescription{
		{Name: "j", DataTypeOID: 3802, DataTypeSize: -1},
		{Name: "pad", DataTypeOID: 17, DataTypeSize: -1}}, body)
	c := connect(t, dsn)
	var s string
	var p []byte
	err := c.QueryRow(testCtx(t), "SELECT j, pad").Scan(&s, &p)
	if err == nil || !strings.Contains(err.Error(), "version byte") {
		t.Fatalf("got %v, want an error about the missing version byte", err)
	}
}

// fakeRowServer serves one query: the describe of a statement with the
// result columns fields, then, for its run, one DataRow of body as given
// (malformed on purpose) and SELECT 1.
func fakeRowServer(t *testing.T, fields []wire.FieldDescription, body []byte) string {
	return fakeServer(t, func(t *testing.T, c net.Conn) {
		if cancel, err := fakeAccept(c); cancel || err != nil {
			return
		}
		// Parse/Describe/Sync, then Bind/Execute/Sync.
		for i := 0; i < 2; i++ {
			for {
				typ, _, err := wire.ReadFrontendMessage(c, false)
				if err != nil {
					return
				}
				if typ == wire.MsgSync {
					break
				}
			}
			var b []byte
			if i == 0 {
				b, _ = wire.AppendEmpty(nil, wire.MsgParseComplete)
				b, _ = wire.AppendParameterDescription(b, wire.ParameterDescription{})
				b, _ = wire.AppendRowDescription(b, fields)
			} else {
				b, _ = wire.AppendEmpty(nil, wire.MsgBindComplete)
				b = append(b, rawMsg('D', uint32(4+len(body)), body)...)
				b, _ = wire.AppendCommandComplete(b, "SELECT 1")
			}
			c.Write(wire.AppendReadyForQuery(b, 'I'))
		}
		waitClosed(c)
	})
}
