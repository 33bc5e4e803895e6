package floor

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// readBufSize is the size of the read buffer: the bytes a single read
// syscall can bring in.
const readBufSize = 64 << 10

// Config says where and as whom to connect.
type Config struct {
	Network  string // "tcp" or "unix"
	Addr     string // host:port, or the socket path for "unix"
	User     string
	Password string
	Database string
	// Timeout bounds the dial and the startup exchange. Zero means 10 s.
	Timeout time.Duration
}

// Result is what a query's reply held, as counted by its framing.
type Result struct {
	Rows  int   // DataRow messages
	Bytes int64 // bytes of every message, headers included
}

// Conn is one connection. It is not safe for concurrent use.
type Conn struct {
	nc  net.Conn
	r   *bufio.Reader
	wb  []byte // write buffer, reused
	bad error  // set after a protocol or I/O error; the Conn is then unusable
	// pending is the ErrorResponse of the reply being read (ExecValue).
	pending error
}

// ServerError is an ErrorResponse from the server.
type ServerError struct {
	Severity, Code, Message string
}

// Error returns "SEVERITY: message (SQLSTATE code)".
func (e *ServerError) Error() string {
	return fmt.Sprintf("%s: %s (SQLSTATE %s)", e.Severity, e.Message, e.Code)
}

// ErrBroken is wrapped by errors from a Conn that an earlier I/O or
// protocol error has made unusable.
var ErrBroken = errors.New("floor: connection broken by an earlier error")

// Connect dials cfg, runs the startup exchange and waits for the server to
// be ready for queries.
func Connect(ctx context.Context, cfg Config) (*Conn, error) {
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	network := cfg.Network
	if network == "" {
		network = "tcp"
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	c := &Conn{nc: nc, r: bufio.NewReaderSize(nc, readBufSize)}
	dl, _ := ctx.Deadline()
	nc.SetDeadline(dl)
	if err := c.startup(&cfg); err != nil {
		nc.Close()
		return nil, err
	}
	nc.SetDeadline(time.Time{})
	return c, nil
}

// Close sends Terminate and closes the socket.
func (c *Conn) Close() error {
	if c.bad == nil {
		c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		c.nc.Write([]byte{'X', 0, 0, 0, 4})
	}
	c.bad = ErrBroken
	return c.nc.Close()
}

// Prepare parses sql as the named statement; the server infers parameter
// types. It waits for the reply.
func (c *Conn) Prepare(name, sql string) error {
	if err := c.usable(); err != nil {
		return err
	}
	b := c.wb[:0]
	b, start := begin(b, 'P')
	b = appendCString(b, name)
	b = appendCString(b, sql)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = finish(b, start)
	b = append(b, 'S', 0, 0, 0, 4)
	c.wb = b
	if err := c.flush(); err != nil {
		return err
	}
	_, err := c.readUntilReady()
	return err
}

// Exec binds params to the named statement, executes it and discards the
// reply up to ReadyForQuery. formats holds one format code per parameter
// (0 text, 1 binary), or is empty for all text; a nil param is NULL. Every
// result column is asked for in binary.
func (c *Conn) Exec(stmt string, params [][]byte, formats []int16) (Result, error) {
	if err := c.usable(); err != nil {
		return Result{}, err
	}
	c.wb = appendQuery(c.wb[:0], stmt, params, formats)
	if err := c.flush(); err != nil {
		return Result{}, err
	}
	return c.readUntilReady()
}

// Request is one query of a pipeline.
type Request struct {
	Stmt    string
	Params  [][]byte
	Formats []int16
}

// Independent sends every request followed by the prepared statements
// begin and commit (BEGIN and COMMIT), with one Sync at the end, in one
// write, and reads the reply up to its ReadyForQuery. BEGIN makes the
// implicit transaction a request ran in explicit and COMMIT ends it, so
// each request commits on its own: the fewest messages that keep
// pipelined requests independent, as pgline's shared Syncs send them
// (a Sync per request costs the server more). An error skips everything
// after it up to the Sync; unlike pgline, the floor does not send the
// skipped requests again.
func (c *Conn) Independent(reqs []Request, begin, commit string) (Result, error) {
	if err := c.usable(); err != nil {
		return Result{}, err
	}
	b := c.wb[:0]
	for i := range reqs {
		b = appendBindExecute(b, reqs[i].Stmt, reqs[i].Params, reqs[i].Formats)
		b = appendBindExecute(b, begin, nil, nil)
		b = appendBindExecute(b, commit, nil, nil)
	}
	c.wb = append(b, 'S', 0, 0, 0, 4)
	if err := c.flush(); err != nil {
		return Result{}, err
	}
	return c.readUntilReady()
}

// Batch sends every request with one Sync at the end, in one write, and
// reads the reply up to its one ReadyForQuery: the requests form one
// implicit transaction and an error skips the rest (pgx's Batch).
func (c *Conn) Batch(reqs []Request) (Result, error) {
	if err := c.usable(); err != nil {
		return Result{}, err
	}
	b := c.wb[:0]
	for i := range reqs {
		b = appendBindExecute(b, reqs[i].Stmt, reqs[i].Params, reqs[i].Formats)
	}
	c.wb = append(b, 'S', 0, 0, 0, 4)
	if err := c.flush(); err != nil {
		return Result{}, err
	}
	return c.readUntilReady()
}

func (c *Conn) usable() error {
	if c.bad != nil {
		return fmt.Errorf("%w: %v", ErrBroken, c.bad)
	}
	return nil
}

func (c *Conn) flush() error {
	if _, err := c.nc.Write(c.wb); err != nil {
		return c.fail(fmt.Errorf("floor: write: %w", err))
	}
	return nil
}

// fail marks the connection unusable and returns err.
func (c *Conn) fail(err error) error {
	if c.bad == nil {
		c.bad = err
	}
	return err
}

// readUntilReady discards messages up to and including ReadyForQuery,
// counting DataRows. An ErrorResponse is decoded and returned once
// ReadyForQuery has arrived, so the connection stays usable.
func (c *Conn) readUntilReady() (Result, error) {
	var res Result
	var srvErr error
	for {
		typ, n, err := c.header()
		if err != nil {
			return res, err
		}
		body := n - 4
		res.Bytes += int64(n + 1)
		switch typ {
		case 'D':
			res.Rows++
		case 'E':
			if body > 1<<20 {
				return res, c.fail(fmt.Errorf("floor: protocol error: ErrorResponse of %d bytes", body))
			}
			buf := make([]byte, body)
			if _, err := io.ReadFull(c.r, buf); err != nil {
				return res, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
			}
			if srvErr == nil {
				srvErr = parseError(buf)
			}
			continue
		case 'Z':
			if _, err := c.r.Discard(body); err != nil {
				return res, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
			}
			return res, srvErr
		}
		if _, err := c.r.Discard(body); err != nil {
			return res, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
		}
	}
}

// header reads the next message's type and length (which counts
// itself: the body is n-4 bytes); a failed read or a length under 4 makes
// the connection unusable.
func (c *Conn) header() (typ byte, n int, err error) {
	h, err := c.r.Peek(5)
	if err != nil {
		return 0, 0, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
	}
	typ = h[0]
	n = int(binary.BigEndian.Uint32(h[1:]))
	if n < 4 {
		return 0, 0, c.fail(fmt.Errorf("floor: protocol error: message %q declares length %d", typ, n))
	}
	c.r.Discard(5)
	return typ, n, nil
}

func eofToUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ExecValue is Exec for a statement returning one row of one column: the
// value is read from the socket straight into a slice allocated for it,
// which the caller then owns (nil for NULL). It is the floor for reading
// a value into a []byte, as Exec, which discards the reply, is for
// streaming it.
func (c *Conn) ExecValue(stmt string, params [][]byte, formats []int16) ([]byte, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	c.wb = appendQuery(c.wb[:0], stmt, params, formats)
	if err := c.flush(); err != nil {
		return nil, err
	}
	var val []byte
	rows := 0
	for {
		typ, n, err := c.header()
		if err != nil {
			return nil, err
		}
		if typ != 'D' {
			res, err := c.readRest(typ, n-4)
			if res {
				if err == nil && rows != 1 {
					err = fmt.Errorf("floor: %d rows, want 1", rows)
				}
				return val, err
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		rows++
		var hdr [6]byte // column count, value length
		if n-4 < len(hdr) {
			return nil, c.fail(fmt.Errorf("floor: protocol error: DataRow of %d bytes", n-4))
		}
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return nil, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
		}
		size := int32(binary.BigEndian.Uint32(hdr[2:]))
		if binary.BigEndian.Uint16(hdr[:2]) != 1 || int(size) > n-4-len(hdr) {
			return nil, c.fail(fmt.Errorf("floor: protocol error: DataRow not of one column"))
		}
		if size < 0 {
			val = nil
			continue
		}
		val = make([]byte, size)
		if _, err := io.ReadFull(c.r, val); err != nil {
			return nil, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
		}
	}
}

// readRest handles a message other than DataRow of body bytes, its
// header read: it reports done at ReadyForQuery, with the ErrorResponse's
// error if one came.
func (c *Conn) readRest(typ byte, body int) (done bool, err error) {
	switch typ {
	case 'E':
		if body > 1<<20 {
			return false, c.fail(fmt.Errorf("floor: protocol error: ErrorResponse of %d bytes", body))
		}
		buf := make([]byte, body)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return false, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
		}
		c.pending = parseError(buf)
		return false, nil
	case 'Z':
		if _, err := c.r.Discard(body); err != nil {
			return false, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
		}
		err, c.pending = c.pending, nil
		return true, err
	}
	if _, err := c.r.Discard(body); err != nil {
		return false, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
	}
	return false, nil
}

// ExecRows is Exec that hands each DataRow's body (column count, then
// each column's length and bytes), while it is in the read buffer, to
// row, which decodes it into values of its own; an error from row ends
// the query with that error once the reply is read. It is the floor for
// scanning rows into Go values, as Exec, which discards them, is for
// counting them. A row larger than the read buffer is an error.
func (c *Conn) ExecRows(stmt string, params [][]byte, formats []int16, row func(body []byte) error) (Result, error) {
	if err := c.usable(); err != nil {
		return Result{}, err
	}
	c.wb = appendQuery(c.wb[:0], stmt, params, formats)
	if err := c.flush(); err != nil {
		return Result{}, err
	}
	var res Result
	var rowErr error
	for {
		typ, n, err := c.header()
		if err != nil {
			return res, err
		}
		res.Bytes += int64(n + 1)
		if typ != 'D' {
			done, err := c.readRest(typ, n-4)
			if done {
				if err == nil {
					err = rowErr
				}
				return res, err
			}
			if err != nil {
				return res, err
			}
			continue
		}
		if n-4 > readBufSize {
			return res, c.fail(fmt.Errorf("floor: DataRow of %d bytes exceeds the read buffer", n-4))
		}
		body, err := c.r.Peek(n - 4)
		if err != nil {
			return res, c.fail(fmt.Errorf("floor: read: %w", eofToUnexpected(err)))
		}
		res.Rows++
		if err := row(body); err != nil && rowErr == nil {
			rowErr = err
		}
		c.r.Discard(n - 4)
	}
}
