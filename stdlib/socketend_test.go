package stdlib_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// cutAtMessage forwards connections to srv and closes each once the
// server has sent limit bytes, at the end of a message: to the client,
// the server crashed between two DataRows.
func cutAtMessage(t *testing.T, limit int64) (host, port string) {
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
				defer c.Close()
				s, err := net.Dial("tcp", srv.Addr())
				if err != nil {
					return
				}
				defer s.Close()
				go func() { io.Copy(s, c); s.Close() }()
				br := bufio.NewReader(s)
				for sent := int64(0); ; {
					var hdr [5]byte
					if _, err := io.ReadFull(br, hdr[:]); err != nil {
						return
					}
					msg := make([]byte, 5+int64(binary.BigEndian.Uint32(hdr[1:]))-4)
					copy(msg, hdr[:])
					if _, err := io.ReadFull(br, msg[5:]); err != nil || sent+int64(len(msg)) > limit {
						return
					}
					if _, err := c.Write(msg); err != nil {
						return
					}
					sent += int64(len(msg))
				}
			}()
		}
	}()
	host, port, _ = net.SplitHostPort(ln.Addr().String())
	return host, port
}

// TestSocketEndMidRowsNotSilent: the connection's socket ends between two
// rows of a result. database/sql takes a driver's io.EOF from Next for
// the end of the rows: the loop must end with rows.Err() set, never with
// fewer rows and no error.
func TestSocketEndMidRowsNotSilent(t *testing.T) {
	host, port := cutAtMessage(t, 64<<10)
	db := openDB(t, 1, "host="+host, "port="+port, "sslmode=disable")
	rows, err := db.QueryContext(testCtx(t), "SELECT g FROM generate_series(1, 100000) g")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err == nil {
		t.Fatalf("%d of 100000 rows and no error", n)
	} else {
		t.Logf("after %d rows: %v", n, err)
	}
}
