package stdlib_test

// Audit of 57552fa through database/sql: a connection cut at a chosen
// server message of a marked statement's reply never reads as a normal
// end (sql.ErrNoRows, fewer rows, an empty result).

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// auditTodayCut forwards connections to the test server; once the client
// has sent the bytes "AUDITCUT", the k-th server message of type typ is
// cut: not sent at all (inside=false) or only its first half (inside).
type auditTodayCut struct {
	ln     net.Listener
	typ    byte
	k      int
	inside bool
	cuts   atomic.Int32
}

func startAuditTodayCut(t *testing.T, typ byte, k int, inside bool) *auditTodayCut {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &auditTodayCut{ln: ln, typ: typ, k: k, inside: inside}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p
}

func (p *auditTodayCut) forward(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		return
	}
	defer s.Close()
	var armed atomic.Bool
	go func() {
		buf := make([]byte, 64<<10)
		var tail []byte
		for {
			n, err := c.Read(buf)
			if n > 0 {
				chunk := append(tail, buf[:n]...)
				if bytes.Contains(chunk, []byte("AUDITCUT")) {
					armed.Store(true)
				}
				if len(chunk) > 16 {
					tail = append([]byte(nil), chunk[len(chunk)-16:]...)
				} else {
					tail = append([]byte(nil), chunk...)
				}
				if _, werr := s.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				s.Close()
				return
			}
		}
	}()
	br := bufio.NewReaderSize(s, 1<<20)
	seen := 0
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[1:])) - 4
		msg := make([]byte, 5+n)
		copy(msg, hdr[:])
		if _, err := io.ReadFull(br, msg[5:]); err != nil {
			return
		}
		if armed.Load() && hdr[0] == p.typ {
			seen++
			if seen == p.k {
				if p.inside {
					c.Write(msg[:5+n/2])
				}
				p.cuts.Add(1)
				time.Sleep(20 * time.Millisecond)
				return
			}
		}
		if _, err := c.Write(msg); err != nil {
			return
		}
	}
}

func (p *auditTodayCut) db(t *testing.T) *sql.DB {
	host, port, _ := net.SplitHostPort(p.ln.Addr().String())
	return openDB(t, 1, "host="+host, "port="+port, "sslmode=disable")
}

func auditTodayWantCut(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || err == io.EOF || errors.Is(err, sql.ErrNoRows) {
		t.Errorf("%s: %v (%T); want an error saying the connection was closed", what, err, err)
		return
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "closed") && !strings.Contains(err.Error(), "bad connection") {
		t.Errorf("%s: %v: not the connection's end", what, err)
	}
}

// TestAuditTodaySQLEOFQueryRow: QueryRow cut before or inside its one
// row: Scan reports the cut, never sql.ErrNoRows.
func TestAuditTodaySQLEOFQueryRow(t *testing.T) {
	for _, inside := range []bool{false, true} {
		for _, q := range []string{"SELECT 42 /*AUDITCUT*/", "SELECT $1::int+0 /*AUDITCUT*/"} {
			p := startAuditTodayCut(t, 'D', 1, inside)
			db := p.db(t)
			var args []any
			if strings.Contains(q, "$1") {
				args = []any{42}
			}
			var v int
			err := db.QueryRowContext(testCtx(t), q, args...).Scan(&v)
			auditTodayWantCut(t, q, err)
		}
	}
}

// TestAuditTodaySQLEOFRows: cut before CommandComplete, before a later
// row, inside a big row (read column by column): rows.Err() is set.
func TestAuditTodaySQLEOFRows(t *testing.T) {
	for _, tc := range []struct {
		typ byte
		k   int
		q   string
	}{
		{'C', 1, "SELECT g FROM generate_series(1, 10) g /*AUDITCUT*/"},
		{'D', 5, "SELECT g FROM generate_series(1, 10) g /*AUDITCUT*/"},
		{'D', 2, "SELECT g, repeat('y', 4<<20) FROM generate_series(1, 3) g /*AUDITCUT*/"},
	} {
		for _, inside := range []bool{false, true} {
			p := startAuditTodayCut(t, tc.typ, tc.k, inside)
			db := p.db(t)
			rows, err := db.QueryContext(testCtx(t), tc.q)
			if err != nil {
				auditTodayWantCut(t, "Query", err)
				continue
			}
			n := 0
			for rows.Next() {
				n++
				var g int
				var s string
				if strings.Contains(tc.q, "repeat") {
					if err := rows.Scan(&g, &s); err != nil {
						t.Logf("scan: %v", err)
					}
				}
			}
			err = rows.Err()
			t.Logf("%c#%d inside=%v: %d rows, %v", tc.typ, tc.k, inside, n, err)
			auditTodayWantCut(t, "rows", err)
		}
	}
}

// TestAuditTodaySQLEOFExec: an Exec cut before or inside its
// CommandComplete reports an error, not a result.
func TestAuditTodaySQLEOFExec(t *testing.T) {
	for _, inside := range []bool{false, true} {
		p := startAuditTodayCut(t, 'C', 1, inside)
		db := p.db(t)
		_, err := db.ExecContext(testCtx(t), "SELECT 1 /*AUDITCUT*/")
		auditTodayWantCut(t, "Exec", err)
	}
}
