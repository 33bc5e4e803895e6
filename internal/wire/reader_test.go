package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"testing/iotest"
)

// msg is one framed backend message for reader tests.
type msg struct {
	typ  byte
	body []byte
}

// frame returns the wire bytes of messages.
func frame(msgs ...msg) []byte {
	var b []byte
	for _, m := range msgs {
		b = append(b, m.typ)
		b = binary.BigEndian.AppendUint32(b, uint32(len(m.body)+4))
		b = append(b, m.body...)
	}
	return b
}

// header returns a 5-byte message header with an arbitrary length field.
func header(typ byte, length uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{typ}, length)
}

// dataRowBody returns a DataRow body with the given column values (nil = NULL).
func dataRowBody(t testing.TB, cols ...[]byte) []byte {
	b, err := AppendDataRow(nil, cols)
	if err != nil {
		t.Fatal(err)
	}
	return b[5:]
}

// testStream returns a varied sequence of messages, some larger than small
// buffers.
func testStream(t testing.TB) []msg {
	big := bytes.Repeat([]byte("0123456789"), 100)
	return []msg{
		{MsgAuthentication, []byte{0, 0, 0, 0}},
		{MsgParameterStatus, []byte("a\x00b\x00")},
		{MsgBackendKeyData, []byte{0, 0, 0, 1, 0, 0, 0, 2}},
		{MsgReadyForQuery, []byte("I")},
		{MsgParseComplete, nil},
		{MsgDataRow, dataRowBody(t, []byte("x"), nil, []byte{})},
		{MsgDataRow, dataRowBody(t, big, big[:37])},
		{MsgCopyData, big[:59]},
		{MsgCopyData, big[:60]},
		{MsgCopyData, big[:61]},
		{MsgCommandComplete, []byte("SELECT 2\x00")},
		{MsgReadyForQuery, []byte("T")},
	}
}

// readAll reads messages with Next until an error and returns them with that
// error, copying bodies since they are only valid until the next call.
func readAll(r *Reader) ([]msg, error) {
	var out []msg
	for {
		typ, body, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, msg{typ, bytes.Clone(body)})
	}
}

func checkMsgs(t *testing.T, got, want []msg) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].typ != want[i].typ || !bytes.Equal(got[i].body, want[i].body) {
			t.Fatalf("message %d = %q %x, want %q %x", i, got[i].typ, got[i].body, want[i].typ, want[i].body)
		}
	}
}

// chunkReader returns random-sized pieces of data.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.IntN(c.max))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// countReader counts Read calls and remembers the largest buffer offered.
type countReader struct {
	r       io.Reader
	reads   int
	largest int
}

func (c *countReader) Read(p []byte) (int, error) {
	c.reads++
	c.largest = max(c.largest, len(p))
	return c.r.Read(p)
}

func TestReaderSplits(t *testing.T) {
	want := testStream(t)
	data := frame(want...)
	sources := map[string]func() io.Reader{
		"whole":    func() io.Reader { return bytes.NewReader(data) },
		"onebyte":  func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		"dataeof":  func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		"halfread": func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		"random": func() io.Reader {
			return &chunkReader{data: data, rng: rand.New(rand.NewPCG(1, 2)), max: 97}
		},
	}
	for name, src := range sources {
		for _, size := range []int{16, 64, 100, 1024, 0} {
			r := NewReader(src(), size, 0)
			got, err := readAll(r)
			if err != io.EOF {
				t.Fatalf("%s/%d: error %v, want io.EOF", name, size, err)
			}
			checkMsgs(t, got, want)
			if size != 0 && len(r.buf) != max(size, minBufferSize) {
				t.Fatalf("%s/%d: buffer size changed to %d", name, size, len(r.buf))
			}
		}
	}
}

// TestReaderEveryBoundary splits the stream into two reads at every byte.
func TestReaderEveryBoundary(t *testing.T) {
	want := testStream(t)[:6]
	data := frame(want...)
	for k := range len(data) + 1 {
		for _, size := range []int{16, 32, 0} {
			src := io.MultiReader(bytes.NewReader(data[:k]), bytes.NewReader(data[k:]))
			got, err := readAll(NewReader(src, size, 0))
			if err != io.EOF {
				t.Fatalf("split at %d, buffer %d: %v", k, size, err)
			}
			checkMsgs(t, got, want)
		}
	}
}

func TestReaderRandomChunksManySeeds(t *testing.T) {
	want := testStream(t)
	data := frame(want...)
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 7))
		size := 16 + rng.IntN(1200)
		src := &chunkReader{data: data, rng: rng, max: 1 + rng.IntN(300)}
		got, err := readAll(NewReader(src, size, 0))
		if err != io.EOF {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkMsgs(t, got, want)
	}
}

func TestReaderManyMessagesOneRead(t *testing.T) {
	want := testStream(t)
	src := &countReader{r: bytes.NewReader(frame(want...))}
	r := NewReader(src, 0, 0)
	got, err := readAll(r)
	if err != io.EOF {
		t.Fatal(err)
	}
	checkMsgs(t, got, want)
	if src.reads != 2 { // one with all the data, one returning io.EOF
		t.Fatalf("%d reads, want 2", src.reads)
	}
	if src.largest != DefaultBufferSize {
		t.Fatalf("largest read %d, want the whole buffer %d", src.largest, DefaultBufferSize)
	}
}

func TestReaderLargerThanBuffer(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 5000)
	body := dataRowBody(t, big, nil, big[:10])
	data := frame(msg{MsgReadyForQuery, []byte("I")}, msg{MsgDataRow, body}, msg{MsgReadyForQuery, []byte("E")})
	r := NewReader(bytes.NewReader(data), 64, 0)
	if typ, _, err := r.Next(); err != nil || typ != MsgReadyForQuery {
		t.Fatalf("first: %q %v", typ, err)
	}
	typ, got, err := r.Next()
	if err != nil || typ != MsgDataRow || !bytes.Equal(got, body) {
		t.Fatalf("big: %q %v equal=%v", typ, err, bytes.Equal(got, body))
	}
	if cap(got) != len(body) {
		t.Fatalf("big body cap %d, want exact %d", cap(got), len(body))
	}
	if typ, b, err := r.Next(); err != nil || typ != MsgReadyForQuery || string(b) != "E" {
		t.Fatalf("last: %q %q %v", typ, b, err)
	}
	if len(r.buf) != 64 {
		t.Fatalf("buffer grew to %d", len(r.buf))
	}
}

// isProtocolError reports whether err is a *ProtocolError.
func isProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}

func TestReaderBadLengths(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		max  int
	}{
		{"length 3", header(MsgDataRow, 3), 0},
		{"length 0", header(MsgCommandComplete, 0), 0},
		{"length -1", header(MsgDataRow, 0xffffffff), 0},
		{"length 2^31", header(MsgDataRow, 0x80000000), 0},
		{"length MaxInt32 DataRow", header(MsgDataRow, 0x7fffffff), 0},
		{"length MaxInt32 CopyData", header(MsgCopyData, 0x7fffffff), 0},
		{"length MaxInt32 ErrorResponse", header(MsgErrorResponse, 0x7fffffff), 0},
		{"over configured cap", header(MsgErrorResponse, 4+101), 100},
		{"DataRow over MaxStreamableSize", header(MsgDataRow, 4+MaxStreamableSize+1), 0},
		{"small type over 1 MiB", header(MsgParameterStatus, 4+1<<20+1), 0},
		{"auth over 1 MiB", header(MsgAuthentication, 4+1<<20+1), 0},
		{"unknown type", header('!', 8), 0},
		{"unknown type 0", header(0, 8), 0},
		{"ReadyForQuery 0", header(MsgReadyForQuery, 4), 0},
		{"ReadyForQuery 2", header(MsgReadyForQuery, 6), 0},
		{"ParseComplete 1", header(MsgParseComplete, 5), 0},
		{"BindComplete 1", header(MsgBindComplete, 5), 0},
		{"CloseComplete 1", header(MsgCloseComplete, 5), 0},
		{"NoData 1", header(MsgNoData, 5), 0},
		{"EmptyQueryResponse 1", header(MsgEmptyQueryResponse, 5), 0},
		{"PortalSuspended 1", header(MsgPortalSuspended, 5), 0},
		{"CopyDone 1", header(MsgCopyDone, 5), 0},
		{"BackendKeyData 261", header(MsgBackendKeyData, 4+4+MaxCancelKeyLen+1), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := append(bytes.Clone(tc.data), make([]byte, 64)...)
			for _, useHeader := range []bool{false, true} {
				r := NewReader(bytes.NewReader(data), 0, tc.max)
				var err error
				if useHeader {
					_, _, err = r.NextHeader()
				} else {
					_, _, err = r.Next()
				}
				if !isProtocolError(err) {
					t.Fatalf("header=%v: error %v, want *ProtocolError", useHeader, err)
				}
				// The error is permanent.
				if _, _, err2 := r.Next(); err2 != err {
					t.Fatalf("second Next: %v, want the same error", err2)
				}
			}
		})
	}
}

// TestReaderHugeLengthNoAllocation checks that rejecting a huge declared
// length allocates nothing near that size.
func TestReaderHugeLengthNoAllocation(t *testing.T) {
	for _, length := range []uint32{0x80000000, 0x7fffffff, 0xffffffff, DefaultMaxMessageSize + 5} {
		data := header(MsgDataRow, length)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range 10 {
			r := NewReader(bytes.NewReader(data), 64, 0)
			if _, _, err := r.Next(); !isProtocolError(err) {
				t.Fatalf("length %#x: %v, want *ProtocolError", length, err)
			}
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Fatalf("length %#x: allocated %d bytes", length, d)
		}
	}
}

func TestReaderTruncated(t *testing.T) {
	full := frame(msg{MsgDataRow, dataRowBody(t, bytes.Repeat([]byte("z"), 300))})
	for _, cut := range []int{1, 3, 5, 6, 100, len(full) - 1} {
		for _, size := range []int{16, 0} {
			r := NewReader(bytes.NewReader(full[:cut]), size, 0)
			_, _, err := r.Next()
			if !errors.Is(err, io.ErrUnexpectedEOF) || !isProtocolError(err) {
				t.Fatalf("cut %d, buffer %d: %v, want a *ProtocolError wrapping io.ErrUnexpectedEOF", cut, size, err)
			}
		}
	}
	r := NewReader(bytes.NewReader(nil), 0, 0)
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("empty stream: %v, want io.EOF", err)
	}
}

func TestReaderNoProgress(t *testing.T) {
	r := NewReader(zeroReader{}, 0, 0)
	if _, _, err := r.Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("got %v, want io.ErrNoProgress", err)
	}
}

// zeroReader always returns 0, nil.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// errOnceReader fails one read with errTimeout once the first n bytes have
// been read, then carries on.
type errOnceReader struct {
	data   []byte
	n      int
	failed bool
}

var errTimeout = errors.New("timeout")

func (e *errOnceReader) Read(p []byte) (int, error) {
	if e.n == 0 && !e.failed {
		e.failed = true
		return 0, errTimeout
	}
	if len(e.data) == 0 {
		return 0, io.EOF
	}
	k := len(p)
	if e.n > 0 {
		k = min(k, e.n)
	}
	k = copy(p, e.data[:min(k, len(e.data))])
	e.data = e.data[k:]
	e.n -= k
	if e.n < 0 {
		e.n = 0
	}
	return k, nil
}

// TestReaderRetryAfterError checks that an I/O error while a buffered
// message is incomplete consumes nothing, so the call can be retried.
func TestReaderRetryAfterError(t *testing.T) {
	want := testStream(t)[:6]
	data := frame(want...)
	for k := 1; k < len(data); k++ {
		src := &errOnceReader{data: data, n: k}
		r := NewReader(src, 0, 0)
		var got []msg
		for {
			typ, body, err := r.Next()
			if err == errTimeout {
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("k=%d: %v", k, err)
			}
			got = append(got, msg{typ, bytes.Clone(body)})
		}
		checkMsgs(t, got, want)
	}
}

// TestReaderNoAllocs checks that reading and decoding buffered DataRows
// allocates nothing.
func TestReaderNoAllocs(t *testing.T) {
	one := frame(msg{MsgDataRow, dataRowBody(t, []byte{0, 0, 0, 1}, nil, []byte("text"))})
	data := bytes.Repeat(one, 200)
	src := bytes.NewReader(data)
	r := NewReader(src, 1024, 0)
	n := testing.AllocsPerRun(20, func() {
		src.Reset(data)
		for range 200 {
			typ, body, err := r.Next()
			if err != nil || typ != MsgDataRow {
				t.Fatal(typ, err)
			}
			d, err := ParseDataRow(body)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, _, ok := d.Next(); !ok {
					break
				}
			}
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}

// TestReaderStreamOverCap: a DataRow larger than maxMessageSize (but within
// MaxStreamableSize) is refused whole (Next, Body) but can be consumed piece
// by piece, and CopyN streams it through the buffer.
func TestReaderStreamOverCap(t *testing.T) {
	body := bytes.Repeat([]byte("abcdefgh"), 40) // 320 bytes
	msg := append(header(MsgDataRow, uint32(4+len(body))), body...)
	if _, _, err := NewReader(bytes.NewReader(msg), 64, 100).Next(); !isProtocolError(err) {
		t.Fatalf("Next: %v, want *ProtocolError", err)
	}
	r := NewReader(bytes.NewReader(msg), 64, 100)
	if _, n, err := r.NextHeader(); err != nil || n != len(body) {
		t.Fatalf("NextHeader: %d %v", n, err)
	}
	if _, err := r.Body(); !isProtocolError(err) {
		t.Fatalf("Body: %v, want *ProtocolError", err)
	}
	r = NewReader(bytes.NewReader(msg), 64, 100)
	r.NextHeader()
	var out bytes.Buffer
	if err := r.CopyN(&out, len(body)); err != nil || !bytes.Equal(out.Bytes(), body) {
		t.Fatalf("CopyN: %v, %d bytes", err, out.Len())
	}
	if r.Size() != 64 {
		t.Fatalf("buffer grew to %d", r.Size())
	}
	// A failing writer: the bytes are consumed all the same.
	r = NewReader(bytes.NewReader(append(msg, msg...)), 64, 100)
	r.NextHeader()
	if err := r.CopyN(failWriter{}, len(body)); err == nil {
		t.Fatal("CopyN into a failing writer: no error")
	}
	if _, n, err := r.NextHeader(); err != nil || n != len(body) {
		t.Fatalf("next message after a failed CopyN: %d %v", n, err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestReaderPeekType: PeekType buffers the next header and consumes
// nothing; Next then returns the same message.
func TestReaderPeekType(t *testing.T) {
	msg := append(header(MsgNotificationResponse, 4+4+2+2), 0, 0, 0, 7, 'c', 0, 'p', 0)
	r := NewReader(iotest.OneByteReader(bytes.NewReader(msg)), 0, 0)
	for range 2 {
		typ, err := r.PeekType()
		if err != nil || typ != MsgNotificationResponse {
			t.Fatalf("PeekType: %q %v", typ, err)
		}
	}
	typ, body, err := r.Next()
	if err != nil || typ != MsgNotificationResponse || len(body) != 8 {
		t.Fatalf("Next after PeekType: %q %d %v", typ, len(body), err)
	}
	if _, err := r.PeekType(); err != io.EOF {
		t.Fatalf("PeekType at the end: %v, want io.EOF", err)
	}
}

// TestBufferedTypes: the types of the messages buffered after the current
// one, in order, stopping where fn says or where a header is incomplete.
func TestBufferedTypes(t *testing.T) {
	var data []byte
	data = append(data, frame(msg{MsgCommandComplete, []byte("SELECT 1\x00")})...)
	data = append(data, frame(msg{MsgReadyForQuery, []byte("I")})...)
	data = append(data, frame(msg{MsgDataRow, []byte{0, 0}})...)
	data = append(data, 'C', 0, 0) // an incomplete header
	r := NewReader(bytes.NewReader(data), 64, 0)
	if typ, _, err := r.Next(); err != nil || typ != MsgCommandComplete {
		t.Fatalf("Next: %q, %v", typ, err)
	}
	var got []byte
	r.BufferedTypes(func(typ byte) bool { got = append(got, typ); return true })
	if string(got) != "ZD" {
		t.Fatalf("BufferedTypes saw %q, want \"ZD\"", got)
	}
	got = got[:0]
	r.BufferedTypes(func(typ byte) bool { got = append(got, typ); return false })
	if string(got) != "Z" {
		t.Fatalf("BufferedTypes went on after false: %q", got)
	}
}

// deadlineReader returns os.ErrDeadlineExceeded once, after the first n
// bytes, then the rest of data a few bytes at a time.
type deadlineReader struct {
	data   []byte
	n      int
	failed bool
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.n <= 0 && !d.failed {
		d.failed = true
		return 0, os.ErrDeadlineExceeded
	}
	if len(d.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p, d.data[:min(len(p), len(d.data), 7)])
	d.data = d.data[k:]
	d.n -= k
	return k, nil
}

// readPastDeadlines calls next until io.EOF, calling again after each
// read deadline, and returns the messages read (bodies copied).
func readPastDeadlines(t *testing.T, k int, next func() (byte, []byte, error)) []msg {
	t.Helper()
	var got []msg
	for {
		typ, body, err := next()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue
		case err == io.EOF:
			return got
		case err != nil:
			t.Fatalf("k=%d: %v", k, err)
		}
		got = append(got, msg{typ, bytes.Clone(body)})
	}
}

// TestDiscardResumesAfterDeadline: a read deadline that expires while
// NextDiscarding skips a message larger than the buffer leaves the Reader
// usable; the next call skips the rest and returns the message after it.
func TestDiscardResumesAfterDeadline(t *testing.T) {
	data := frame(msg{MsgDataRow, bytes.Repeat([]byte{1}, 100)}, msg{MsgCommandComplete, []byte("SELECT 1\x00")})
	for k := 1; k < len(data); k++ {
		r := NewReader(&deadlineReader{data: data, n: k}, 16, 0)
		var typs []byte
		for _, m := range readPastDeadlines(t, k, r.NextDiscarding) {
			typs = append(typs, m.typ)
		}
		if len(typs) == 0 || typs[len(typs)-1] != MsgCommandComplete {
			t.Fatalf("k=%d: read %q, want the CommandComplete last", k, typs)
		}
	}
}

// TestNextHeaderRetryAfterDeadline: a read deadline while a message that
// fits in the buffer arrives consumes nothing, through NextHeader and Body
// too: every message is read once, whole.
func TestNextHeaderRetryAfterDeadline(t *testing.T) {
	want := testStream(t)[:6]
	data := frame(want...)
	for k := 1; k < len(data); k++ {
		r := NewReader(&deadlineReader{data: data, n: k}, 0, 0)
		got := readPastDeadlines(t, k, func() (byte, []byte, error) {
			typ, _, err := r.NextHeader()
			if err != nil {
				return 0, nil, err
			}
			body, err := r.Body()
			if err != nil {
				t.Fatalf("k=%d: Body: %v", k, err)
			}
			return typ, body, nil
		})
		if len(got) != len(want) {
			t.Fatalf("k=%d: %d messages, want %d", k, len(got), len(want))
		}
		for i := range want {
			if got[i].typ != want[i].typ || !bytes.Equal(got[i].body, want[i].body) {
				t.Fatalf("k=%d: message %d differs", k, i)
			}
		}
	}
}

// TestReadFullDeadlineLeavesRest: a read deadline in the middle of
// ReadFull of a large message leaves the Reader usable; Next then skips
// the rest of that message and returns the one after it.
func TestReadFullDeadlineLeavesRest(t *testing.T) {
	data := frame(msg{MsgDataRow, bytes.Repeat([]byte{1}, 100)}, msg{MsgCommandComplete, []byte("SELECT 1\x00")})
	for k := 6; k < 100; k += 7 {
		r := NewReader(&deadlineReader{data: data, n: k}, 16, 0)
		if _, n, err := r.NextHeader(); err != nil || n != 100 {
			t.Fatalf("k=%d: NextHeader %d, %v", k, n, err)
		}
		err := r.ReadFull(make([]byte, 100))
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("k=%d: ReadFull: %v, want the deadline", k, err)
		}
		typ, body, err := r.Next()
		if err != nil || typ != MsgCommandComplete || string(body) != "SELECT 1\x00" {
			t.Fatalf("k=%d: after the deadline: %q %q %v", k, typ, body, err)
		}
	}
}
