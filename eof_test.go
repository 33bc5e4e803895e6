package pgline

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// cutProxy forwards connections to srv and closes each after the server
// has sent limit bytes, rounded down to the end of a message when whole
// is set: the server's end as a client sees a crash (no FATAL, the
// socket ends).
func cutProxy(t *testing.T, limit int64, whole bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				s, err := net.Dial("tcp", srv.Addr())
				if err != nil {
					c.Close()
					return
				}
				go func() { io.Copy(s, c); s.Close() }()
				defer c.Close()
				defer s.Close()
				if !whole {
					io.CopyN(c, s, limit)
					return
				}
				br := bufio.NewReader(s)
				for sent := int64(0); ; {
					var hdr [5]byte
					if _, err := io.ReadFull(br, hdr[:]); err != nil {
						return
					}
					n := int64(binary.BigEndian.Uint32(hdr[1:])) - 4
					if sent+5+n > limit {
						return
					}
					msg := make([]byte, 5+n)
					copy(msg, hdr[:])
					if _, err := io.ReadFull(br, msg[5:]); err != nil {
						return
					}
					if _, err := c.Write(msg); err != nil {
						return
					}
					sent += 5 + n
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSocketEndMidRowsIsAnError: a connection whose socket ends in the
// middle of a reply's rows (the server crashed, a proxy cut it) gives
// the rows an error that says so, never a bare io.EOF, which database/sql
// and many loops take for the normal end of the rows: the caller would
// see fewer rows and no error.
func TestSocketEndMidRowsIsAnError(t *testing.T) {
	for _, whole := range []bool{true, false} {
		t.Run(map[bool]string{true: "between messages", false: "inside a message"}[whole], func(t *testing.T) {
			socketEndMidRows(t, whole)
		})
	}
}

func socketEndMidRows(t *testing.T, whole bool) {
	addr := cutProxy(t, 64<<10, whole)
	host, port, _ := net.SplitHostPort(addr)
	c, err := Connect(testCtx(t), srv.DSN("host="+host, "port="+port, "sslmode=disable"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(testCtx(t), "SELECT g, repeat('x', 100) FROM generate_series(1, 100000) g")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	err = rows.Err()
	if err == nil || err == io.EOF || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("after %d rows: %v (%T); want an error saying the connection was closed", n, err, err)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v does not wrap io.ErrUnexpectedEOF", err)
	}
	t.Logf("after %d rows: %v", n, err)
}
