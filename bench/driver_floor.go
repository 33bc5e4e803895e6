package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgline/pgline/bench/internal/floor"
	"github.com/pgline/pgline/internal/strblock"
)

// floorClientDriver is the raw floor: the same Bind/Execute/Sync, the
// reply discarded unparsed. It cannot scan, so workloads call Discard.
func floorClientDriver() *driver {
	d := &driver{
		name: nameFloor,
		connect: func(ctx context.Context, dsn string) (conn, error) {
			cfg, err := floorConfig(dsn)
			if err != nil {
				return nil, err
			}
			c, err := floor.Connect(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return &floorConn{c: c, stmts: map[string]string{}}, nil
		},
		textArray: func(s []string) any { return s },
	}
	d.shared = func(ctx context.Context, dsn string) (conn, string, error) {
		c, err := d.connect(ctx, dsn)
		if err != nil {
			return nil, "", err
		}
		return floorShared{&mutexConn{c: c}}, "one connection shared under a mutex", nil
	}
	d.pool = func(ctx context.Context, dsn string, size int) (conn, string, error) {
		p, err := newChanPool(ctx, size, func(ctx context.Context) (conn, error) { return d.connect(ctx, dsn) })
		if err != nil {
			return nil, "", err
		}
		return floorPool{p}, "connections checked out through a channel", nil
	}
	return d
}

// floorConfig reads host, port, user, password and database from dsn the
// way libpq does (pgconn's parser); the first host is used, without TLS.
func floorConfig(dsn string) (floor.Config, error) {
	pc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return floor.Config{}, err
	}
	cfg := floor.Config{User: pc.User, Password: pc.Password, Database: pc.Database, Timeout: 10 * time.Second}
	if strings.HasPrefix(pc.Host, "/") {
		cfg.Network = "unix"
		cfg.Addr = fmt.Sprintf("%s/.s.PGSQL.%d", pc.Host, pc.Port)
	} else {
		cfg.Network = "tcp"
		cfg.Addr = net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port)))
	}
	return cfg, nil
}

// floorConn prepares each distinct query once and encodes arguments in
// text format ([]byte in binary), into buffers it reuses.
type floorConn struct {
	c       *floor.Conn
	stmts   map[string]string // sql → statement name
	params  [][]byte
	formats []int16
	arena   []byte
	reqs    []floor.Request
	counts  []int
}

func (f *floorConn) Query(context.Context, string, ...any) (rows, error) {
	return nil, errUnsupported
}

func (f *floorConn) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := f.Discard(ctx, sql, args...)
	return err
}

func (f *floorConn) Prepare(ctx context.Context, name, sql string) (string, error) {
	_, err := f.stmt(sql)
	return sql, err
}

func (f *floorConn) Close() error { return f.c.Close() }

func (f *floorConn) stmt(sql string) (string, error) {
	if name, ok := f.stmts[sql]; ok {
		return name, nil
	}
	name := "floor" + strconv.Itoa(len(f.stmts))
	if err := f.c.Prepare(name, sql); err != nil {
		return "", err
	}
	f.stmts[sql] = name
	return name, nil
}

// Discard runs sql with args and returns the number of rows.
func (f *floorConn) Discard(ctx context.Context, sql string, args ...any) (int, error) {
	name, err := f.bind(sql, args)
	if err != nil {
		return 0, err
	}
	res, err := f.c.Exec(name, f.params, f.formats)
	return res.Rows, err
}

// bind returns the statement prepared for sql, with args encoded into
// f.params and f.formats.
func (f *floorConn) bind(sql string, args []any) (string, error) {
	name, err := f.stmt(sql)
	if err != nil {
		return "", err
	}
	f.arena = f.arena[:0]
	f.params, f.formats = f.params[:0], f.formats[:0]
	for _, a := range args {
		if err := f.appendArg(a); err != nil {
			return "", err
		}
	}
	return name, nil
}

// QueryIntBatch sends the queries in one write under one Sync, as pgx's
// Batch does, and discards the replies; out is left untouched.
func (f *floorConn) QueryIntBatch(ctx context.Context, sql string, args []any, out []int32) error {
	return f.queryInts(sql, args, f.c.Batch)
}

// QueryIntIndependent is QueryIntBatch with BEGIN and COMMIT after every
// query, so each query commits on its own under the one Sync, as pgline's
// automatic pipelining sends independent queries.
func (f *floorConn) QueryIntIndependent(ctx context.Context, sql string, args []any, out []int32) error {
	begin, err := f.stmt("BEGIN")
	if err != nil {
		return err
	}
	commit, err := f.stmt("COMMIT")
	if err != nil {
		return err
	}
	return f.queryInts(sql, args, func(reqs []floor.Request) (floor.Result, error) {
		return f.c.Independent(reqs, begin, commit)
	})
}

func (f *floorConn) queryInts(sql string, args []any, send func([]floor.Request) (floor.Result, error)) error {
	name, err := f.stmt(sql)
	if err != nil {
		return err
	}
	f.arena = f.arena[:0]
	f.params, f.formats = f.params[:0], f.formats[:0]
	f.reqs = f.reqs[:0]
	counts := f.counts[:0]
	for _, a := range args {
		start := len(f.params)
		if a != nil {
			if err := f.appendArg(a); err != nil {
				return err
			}
		}
		counts = append(counts, len(f.params)-start)
		f.counts = counts
	}
	// Slice params only now: appending may have moved them.
	at := 0
	for _, n := range counts {
		f.reqs = append(f.reqs, floor.Request{Stmt: name, Params: f.params[at : at+n : at+n], Formats: f.formats[at : at+n : at+n]})
		at += n
	}
	res, err := send(f.reqs)
	if err == nil && res.Rows != len(args) {
		err = fmt.Errorf("floor: pipeline returned %d rows for %d queries", res.Rows, len(args))
	}
	return err
}

// appendArg encodes one argument into the arena and re-points every param
// at the arena, which appending may have moved.
func (f *floorConn) appendArg(a any) error {
	start := len(f.arena)
	format := int16(0)
	switch v := a.(type) {
	case nil:
		f.params = append(f.params, nil)
		f.formats = append(f.formats, 0)
		return nil
	case int:
		f.arena = strconv.AppendInt(f.arena, int64(v), 10)
	case int32:
		f.arena = strconv.AppendInt(f.arena, int64(v), 10)
	case int64:
		f.arena = strconv.AppendInt(f.arena, v, 10)
	case float64:
		f.arena = strconv.AppendFloat(f.arena, v, 'g', -1, 64)
	case bool:
		f.arena = strconv.AppendBool(f.arena, v)
	case string:
		f.arena = append(f.arena, v...)
	case []byte:
		f.arena = append(f.arena, v...)
		format = 1
	case time.Time:
		f.arena = v.AppendFormat(f.arena, "2006-01-02 15:04:05.999999Z07:00")
	case []string:
		f.arena = appendTextArray(f.arena, v)
	default:
		return fmt.Errorf("floor: cannot encode argument of type %T", a)
	}
	f.params = append(f.params, f.arena[start:len(f.arena):len(f.arena)])
	f.formats = append(f.formats, format)
	f.rebase()
	return nil
}

// rebase re-points every param at the current arena after it may have
// grown (params are contiguous in arena order).
func (f *floorConn) rebase() {
	off := 0
	for i, p := range f.params {
		if p == nil {
			continue
		}
		n := len(p)
		f.params[i] = f.arena[off : off+n : off+n]
		off += n
	}
}

// appendTextArray writes s as a text[] literal: {"a","b\"c"}.
func appendTextArray(b []byte, s []string) []byte {
	b = append(b, '{')
	for i, e := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for j := 0; j < len(e); j++ {
			if e[j] == '"' || e[j] == '\\' {
				b = append(b, '\\')
			}
			b = append(b, e[j])
		}
		b = append(b, '"')
	}
	return append(b, '}')
}

// floorShared is one floor connection shared under a mutex.
type floorShared struct{ *mutexConn }

func (f floorShared) Discard(ctx context.Context, sql string, args ...any) (int, error) {
	return f.do(func(c *floorConn) (int, error) { return c.Discard(ctx, sql, args...) })
}

func (f floorShared) DecodeRows(ctx context.Context, sql string, arg any) (int, error) {
	return f.do(func(c *floorConn) (int, error) { return c.DecodeRows(ctx, sql, arg) })
}

func (f floorShared) DecodeWide(ctx context.Context, grp int32) (int, error) {
	return f.do(func(c *floorConn) (int, error) { return c.DecodeWide(ctx, grp) })
}

// do runs op on the connection under the mutex.
func (f floorShared) do(op func(*floorConn) (int, error)) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return op(f.c.(*floorConn))
}

// floorPool is floor connections checked out through a channel.
type floorPool struct{ *chanPool }

func (f floorPool) Discard(ctx context.Context, sql string, args ...any) (int, error) {
	return f.do(ctx, func(c *floorConn) (int, error) { return c.Discard(ctx, sql, args...) })
}

func (f floorPool) DecodeRows(ctx context.Context, sql string, arg any) (int, error) {
	return f.do(ctx, func(c *floorConn) (int, error) { return c.DecodeRows(ctx, sql, arg) })
}

func (f floorPool) DecodeWide(ctx context.Context, grp int32) (int, error) {
	return f.do(ctx, func(c *floorConn) (int, error) { return c.DecodeWide(ctx, grp) })
}

// do runs op on a connection checked out for it.
func (f floorPool) do(ctx context.Context, op func(*floorConn) (int, error)) (int, error) {
	c, err := f.get(ctx)
	if err != nil {
		return 0, err
	}
	defer f.put(c)
	return op(c.(*floorConn))
}

// floorPipe is one floor connection shared by goroutines through a
// floor.Pipe made by NewReaderPipe: the floor for goroutines sharing a
// connection, each getting its own reply with its ctx's deadline kept, as
// pgline's Conn is shared (the floor that gives the same guarantee; its
// NewPipe, which looks at no ctx, runs within noise of it:
// go test -bench Pipe ./internal/floor).
type floorPipe struct {
	f *floorConn
	p *floor.Pipe
}

// newFloorPipe prepares BEGIN and COMMIT on c and shares it; c must not
// be used otherwise afterwards.
func newFloorPipe(c *floorConn) (*floorPipe, error) {
	begin, err := c.stmt("BEGIN")
	if err != nil {
		return nil, err
	}
	commit, err := c.stmt("COMMIT")
	if err != nil {
		return nil, err
	}
	return &floorPipe{f: c, p: floor.NewReaderPipe(c.c, begin, commit)}, nil
}

// Discard runs the statement prepared for sql (by Prepare before the
// Pipe was made) with one int32 argument or none, in text format, and
// returns the number of rows.
func (f *floorPipe) Discard(ctx context.Context, sql string, args ...any) (int, error) {
	name, ok := f.f.stmts[sql]
	if !ok {
		return 0, fmt.Errorf("floor: %q was not prepared before sharing", sql)
	}
	var arena [12]byte
	var params [1][]byte
	switch len(args) {
	case 0:
		return f.p.ExecContext(ctx, name, nil, nil)
	case 1:
		v, ok := args[0].(int32)
		if !ok {
			return 0, fmt.Errorf("floor: shared connection takes an int32, not %T", args[0])
		}
		params[0] = strconv.AppendInt(arena[:0], int64(v), 10)
		return f.p.ExecContext(ctx, name, params[:], nil)
	}
	return 0, fmt.Errorf("floor: shared connection takes at most one argument, got %d", len(args))
}

// Close closes the shared connection.
func (f *floorPipe) Close() error { return f.p.Close() }

// ReadValue runs sql, which returns one row of one column, reading the
// value into a slice allocated for it (floor.Conn.ExecValue), and returns
// its length.
func (f *floorConn) ReadValue(ctx context.Context, sql string, args ...any) (int, error) {
	name, err := f.bind(sql, args)
	if err != nil {
		return 0, err
	}
	v, err := f.c.ExecValue(name, f.params, f.formats)
	return len(v), err
}

// DecodeRows runs sql (bench_rows' six columns, in binary) with arg and
// decodes each row into a rowVals: the floor for scanning rows. Its
// strings are copied into blocks shared by the query's rows, as pgline's
// short strings are (strblock).
func (f *floorConn) DecodeRows(ctx context.Context, sql string, arg any) (int, error) {
	name, err := f.bind(sql, []any{arg})
	if err != nil {
		return 0, err
	}
	var v rowVals
	var block strblock.Block
	res, err := f.c.ExecRows(name, f.params, f.formats, func(body []byte) error { return decodeBenchRow(body, &v, &block) })
	return res.Rows, err
}

// DecodeWide runs the 14-column query of bench_wide (wideSQL, in binary)
// for group grp and decodes every row into a wideVals, its strings copied
// into a block as DecodeRows does. It repeats DecodeRows' few lines
// rather than share them through a decoder passed as a value: v and the
// block would then escape, two allocations per query of the floor.
func (f *floorConn) DecodeWide(ctx context.Context, grp int32) (int, error) {
	name, err := f.bind(wideSQL, []any{grp})
	if err != nil {
		return 0, err
	}
	var v wideVals
	var block strblock.Block
	res, err := f.c.ExecRows(name, f.params, f.formats, func(body []byte) error { return decodeWideRow(body, &v, &block) })
	return res.Rows, err
}

// rowColumns splits a DataRow body of n columns, none NULL, into cols.
func rowColumns(body []byte, cols [][]byte) error {
	if len(body) < 2 || int(binary.BigEndian.Uint16(body)) != len(cols) {
		return fmt.Errorf("floor: not a row of %d columns", len(cols))
	}
	off := 2
	for i := range cols {
		if len(body)-off < 4 {
			return errors.New("floor: truncated row")
		}
		l := int(int32(binary.BigEndian.Uint32(body[off:])))
		off += 4
		if l < 0 || l > len(body)-off {
			return fmt.Errorf("floor: column %d: NULL or bad length %d", i, l)
		}
		cols[i] = body[off : off+l]
		off += l
	}
	return nil
}

// decodeWideRow decodes a DataRow body of bench_wide's columns (int4,
// int4, six texts, float8, int8, bool, two timestamptz, text; binary) into
// v, its strings copied into block.
func decodeWideRow(body []byte, v *wideVals, block *strblock.Block) error {
	var cols [14][]byte
	if err := rowColumns(body, cols[:]); err != nil {
		return err
	}
	if len(cols[0]) != 4 || len(cols[1]) != 4 || len(cols[8]) != 8 || len(cols[9]) != 8 ||
		len(cols[10]) != 1 || len(cols[11]) != 8 || len(cols[12]) != 8 {
		return errors.New("floor: unexpected column sizes")
	}
	v.id = int32(binary.BigEndian.Uint32(cols[0]))
	v.grp = int32(binary.BigEndian.Uint32(cols[1]))
	for i, p := range []*string{&v.name, &v.email, &v.city, &v.country, &v.zip, &v.phone} {
		if len(cols[2+i]) > strblock.MaxLen {
			return errors.New("floor: text column longer than a short string")
		}
		*p = block.String(cols[2+i])
	}
	v.amount = math.Float64frombits(binary.BigEndian.Uint64(cols[8]))
	v.qty = int64(binary.BigEndian.Uint64(cols[9]))
	v.active = cols[10][0] != 0
	v.created = pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(cols[11]))) * time.Microsecond)
	v.updated = pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(cols[12]))) * time.Microsecond)
	if len(cols[13]) > strblock.MaxLen {
		return errors.New("floor: text column longer than a short string")
	}
	v.note = block.String(cols[13])
	return nil
}

// pgEpoch is 2000-01-01 UTC, where binary timestamps count from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// decodeBenchRow decodes a DataRow body of bench_rows' columns (int4,
// text, float8, timestamptz, text, bool; binary) into v, its strings
// copied into block (short: pgline's blocks, see strblock).
func decodeBenchRow(body []byte, v *rowVals, block *strblock.Block) error {
	var cols [6][]byte
	if err := rowColumns(body, cols[:]); err != nil {
		return err
	}
	if len(cols[0]) != 4 || len(cols[2]) != 8 || len(cols[3]) != 8 || len(cols[5]) != 1 {
		return errors.New("floor: unexpected column sizes")
	}
	v.id = int32(binary.BigEndian.Uint32(cols[0]))
	v.score = math.Float64frombits(binary.BigEndian.Uint64(cols[2]))
	v.created = pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(cols[3]))) * time.Microsecond)
	v.flag = cols[5][0] != 0
	if len(cols[1]) > strblock.MaxLen || len(cols[4]) > strblock.MaxLen {
		return errors.New("floor: text column longer than a short string")
	}
	v.name, v.hash = block.String(cols[1]), block.String(cols[4])
	return nil
}
