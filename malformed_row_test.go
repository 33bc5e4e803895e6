package pgline

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/wire"
)

// TestFakeServerMalformedRowEveryPath: a DataRow that fits in the read
// buffer but whose column lengths do not fit its body is checked by the
// walk that reads it (Scan), or before any other read of it (ScanColumn,
// Values, RawValues): each reports a *ProtocolError, never a value made of
// the bytes past the column, and the connection is closed.
func TestFakeServerMalformedRowEveryPath(t *testing.T) {
	row := func(lengths []int32, tail []byte) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(len(lengths)))
		for _, l := range lengths {
			b = binary.BigEndian.AppendUint32(b, uint32(l))
			if l > 0 {
				b = append(b, 0, 0, 0, 7)[:len(b)+min(int(l), 4)]
			}
		}
		return append(b, tail...)
	}
	bodies := map[string][]byte{
		"second column past the end": row([]int32{4, 400}, nil),
		"trailing bytes":             row([]int32{4, 4}, []byte{9, 9}),
		"length -2":                  row([]int32{4, -2}, nil),
		"truncated length":           row([]int32{4, 4}, nil)[:2+8+2],
	}
	fields := []wire.FieldDescription{{Name: "a", DataTypeOID: 23, DataTypeSize: 4}, {Name: "b", DataTypeOID: 23, DataTypeSize: 4}}
	paths := map[string]func(r *Rows) error{
		"Scan": func(r *Rows) error {
			var a, b int32
			return r.Scan(&a, &b)
		},
		"ScanSkippingFirst": func(r *Rows) error {
			var b int32
			return r.Scan(nil, &b)
		},
		"ScanColumn": func(r *Rows) error {
			var a int32
			return r.ScanColumn(0, &a)
		},
		"Values": func(r *Rows) error {
			_, err := r.Values()
			return err
		},
		"RawValues": func(r *Rows) error {
			if v := r.RawValues(); v != nil {
				return nil
			}
			return r.Err()
		},
	}
	for bname, body := range bodies {
		for pname, read := range paths {
			t.Run(bname+"/"+pname, func(t *testing.T) {
				c := connect(t, fakeRowServer(t, fields, body))
				rows, err := c.Query(testCtx(t), "SELECT a, b")
				if err != nil {
					t.Fatal(err)
				}
				if !rows.Next() {
					t.Fatalf("no row: %v", rows.Err())
				}
				err = read(rows)
				rows.Close()
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("got %v, want a *ProtocolError", err)
				}
				if !errors.As(rows.Err(), &pe) {
					t.Errorf("Err after the read: %v, want the *ProtocolError", rows.Err())
				}
				if !c.IsClosed() {
					t.Error("connection open after a protocol error")
				}
			})
		}
	}
	t.Run("NoColumnsTrailingBytes", func(t *testing.T) {
		c := connect(t, fakeRowServer(t, []wire.FieldDescription{}, []byte{0, 0, 9, 9}))
		rows, err := c.Query(testCtx(t), "SELECT")
		if err != nil {
			t.Fatal(err)
		}
		if !rows.Next() {
			t.Fatalf("no row: %v", rows.Err())
		}
		err = rows.Scan()
		rows.Close()
		var pe *ProtocolError
		if !errors.As(err, &pe) || !c.IsClosed() {
			t.Fatalf("got %v (closed %v), want a *ProtocolError and the connection closed", err, c.IsClosed())
		}
	})
	t.Run("QueryRow", func(t *testing.T) {
		c := connect(t, fakeRowServer(t, fields, bodies["trailing bytes"]))
		var a, b int32
		err := c.QueryRow(testCtx(t), "SELECT a, b").Scan(&a, &b)
		var pe *ProtocolError
		if !errors.As(err, &pe) || !c.IsClosed() {
			t.Fatalf("got %v (closed %v), want a *ProtocolError and the connection closed", err, c.IsClosed())
		}
	})
}

// TestFakeServerSimpleQueryRowColumnCount: the simple-query path checks a
// reply as Rows do: a DataRow whose column count differs from its
// RowDescription's (a hostile server's 3-column row for a 1-column
// description) is a protocol error that closes the connection, both for
// the connect's pooler check (read as a simple query) and for an
// Exec without arguments, which discards its rows. Before, both passed.
func TestFakeServerSimpleQueryRowColumnCount(t *testing.T) {
	fields := []wire.FieldDescription{{Name: "pg_backend_pid", DataTypeOID: 23, DataTypeSize: 4}}
	three := []byte{0, 3, 0, 0, 0, 2, '4', '2', 0, 0, 0, 1, '7', 0xFF, 0xFF, 0xFF, 0xFF}
	reply, _ := wire.AppendRowDescription(nil, fields)
	reply = append(reply, rawMsg('D', uint32(4+len(three)), three)...)
	dsn := fakeQueryAnswer(t, reply)
	t.Run("PoolerCheckAtConnect", func(t *testing.T) {
		// The check's reply is read once the connect has returned: its
		// failure closes the connection, and says why to the next call.
		auto := strings.Replace(dsn, "statement_cache_mode=prepare", "statement_cache_mode=auto", 1)
		c, err := Connect(testCtx(t), auto)
		if err == nil {
			settled(c) // once the check's reply is read
			if !c.IsClosed() {
				c.Close()
				t.Fatal("the connection passed a 3-column row for a 1-column description")
			}
			err = c.Ping(testCtx(t))
		}
		var pe *ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "columns") {
			t.Fatalf("connect: %v, want a *ProtocolError about the columns", err)
		}
	})
	t.Run("ExecDiscardingRows", func(t *testing.T) {
		c := connect(t, dsn)
		_, err := c.Exec(testCtx(t), "SELECT pg_catalog.pg_backend_pid()")
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Fatalf("Exec: %v, want a *ProtocolError", err)
		}
		if !c.IsClosed() {
			t.Error("connection open after a protocol error")
		}
	})
}

// TestFakeServerPoolerCheckNoColumns: a server answering the connect's
// pooler check with a row of no columns (described as such: a well-formed
// reply, but no process ID in it) leaves the process ID unknown, taken as
// a direct server; the reading must not index a column the row lacks (it
// runs in a goroutine of its own, where a panic would end the program).
func TestFakeServerPoolerCheckNoColumns(t *testing.T) {
	reply, _ := wire.AppendRowDescription(nil, nil)
	dsn := fakeQueryAnswer(t, append(reply, rawMsg('D', 6, []byte{0, 0})...))
	auto := strings.Replace(dsn, "statement_cache_mode=prepare", "statement_cache_mode=auto", 1)
	c, err := Connect(testCtx(t), auto)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if m := settled(c).StatementCacheMode(); m != "prepare" || c.IsClosed() {
		t.Fatalf("mode %s, closed %v; want prepare on an open connection", m, c.IsClosed())
	}
}
