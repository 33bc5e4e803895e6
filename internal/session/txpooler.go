package session

// Transaction poolers (PgBouncer in pool_mode=transaction, and the like)
// hand each transaction, and each Sync group outside one, to whichever
// server session is free. A statement prepared on one session is unknown
// on the others, so a named statement may only be relied on when the
// connection reaches its own backend.
//
// Two rules keep a caller from ever running another text:
//
//   - A statement's name identifies the connection and the statement: a
//     random tag of the connection and a hash of the SQL text and of the
//     parameter types sent with it (stmtName). Two texts of one connection
//     share a name with a probability of 2^-64 per pair. On another session the
//     name is unknown (26000), never another statement.
//   - The connection switches to describe mode (the unnamed statement,
//     parsed in the same Sync group as its Bind) as soon as it sees a
//     pooler: at connect, when the server's process ID differs from the
//     one in BackendKeyData (statement_cache_mode=auto, the default), or
//     on a statement of its own reported missing (26000) or already
//     present (42P05) with no DEALLOCATE or DISCARD sent since it was
//     prepared. Every connection of a Pool to that host follows (they
//     share proxyFlag), and the statement that saw the sign is sent again
//     when nothing of it ran (errPooler is resendable).

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrPooler is wrapped, with the server's error, by the error of a
// statement whose named statement was missing (or already present) on the
// server session that received it: the connection goes through a
// transaction pooler. Nothing of the statement ran.
var ErrPooler = errors.New("pgline: the connection goes through a transaction pooler (switched to statement_cache_mode=describe)")

// nameEncoding writes the parts of statement names: lower case letters
// and digits, so that a name needs no quoting in SQL (DEALLOCATE).
var nameEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// stmtPrefix returns a new connection's prefix of statement names,
// "pgline_" and a random tag of 32 bits (7 characters).
func stmtPrefix() string {
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return "pgline_" + nameEncoding.EncodeToString(b[:])
}

// stmtName names the statement of sql parsed with paramOIDs: prefix and
// 64 bits of SHA-256 of the text and the types (13 characters), 27 bytes
// in all. Names are written with every run (Bind): short ones cost the
// pipeline less.
func stmtName(prefix, sql string, paramOIDs []uint32) string {
	h := sha256.New()
	h.Write([]byte(sql))
	var b [5]byte // a NUL (never in a text the server accepts), then the types
	h.Write(b[:1])
	for _, oid := range paramOIDs {
		binary.BigEndian.PutUint32(b[:4], oid)
		h.Write(b[:4])
	}
	var sum [sha256.Size]byte
	return prefix + nameEncoding.EncodeToString(h.Sum(sum[:0])[:8])
}

// ProxyFlags holds, per host, whether connections to it go through a
// pooler. A Pool shares one among its connections; a lone Conn has its
// own flag.
type ProxyFlags struct {
	mu sync.Mutex
	m  map[string]*atomic.Bool
}

// Flag returns host's flag.
func (f *ProxyFlags) Flag(host string) *atomic.Bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = make(map[string]*atomic.Bool)
	}
	b := f.m[host]
	if b == nil {
		b = new(atomic.Bool)
		f.m[host] = b
	}
	return b
}

// Hosts returns the hosts found behind a pooler.
func (f *ProxyFlags) Hosts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var hs []string
	for h, b := range f.m {
		if b.Load() {
			hs = append(hs, h)
		}
	}
	return hs
}

// poolerSign reports whether e, the error of sd's Parse (42P05) or Bind
// (26000), shows a transaction pooler: sd is a named statement of this
// connection, still cached (not closed by pgline), and no statement that
// may deallocate it was sent since it was prepared. The connection then
// switches to describe mode.
func (c *Session) poolerSign(sd *StmtDesc, e *srvErr) bool {
	if e.f.Code != "26000" && e.f.Code != "42P05" || sd == nil || sd.Name == "" {
		return false
	}
	sd = sd.origin()
	c.Wmu.Lock()
	sign := !sd.closed && sd.deallocs == c.Stmts.deallocs
	c.Wmu.Unlock()
	if sign {
		c.ToDescribeMode(fmt.Sprintf("statement %s: %s (SQLSTATE %s)", sd.Name, e.f.Message, e.f.Code))
	}
	return sign
}

// ToDescribeMode switches the connection, and every connection of its
// Pool to the same host, to describe mode; why (empty when the Pool knew
// already) is reported to the Tracer once per connection.
func (c *Session) ToDescribeMode(why string) {
	c.Proxied.Store(true)
	c.Wmu.Lock()
	switched := c.toDescribeModeLocked()
	c.Wmu.Unlock()
	if switched && why != "" && c.opts.OnPooler != nil {
		c.opts.OnPooler(why)
	}
}

// followPoolerLocked switches to describe mode when another connection to
// the host found a pooler. The caller holds wmu.
func (c *Session) followPoolerLocked() {
	if c.Proxied.Load() {
		c.toDescribeModeLocked()
	}
}

// toDescribeModeLocked switches to describe mode, once: cached named
// statements are forgotten (not closed: through a pooler, a Close reaches
// any session, and one in the write buffer could precede a Bind of a
// statement a batch has pinned), and the named BEGIN and COMMIT are no
// longer used. The caller holds wmu.
func (c *Session) toDescribeModeLocked() bool {
	if c.pidCheck.provisional {
		// In describe mode already, until the connect's check answers:
		// now for good.
		c.pidCheck.provisional = false
		return true
	}
	if c.Stmts.mode != CachePrepare {
		return false
	}
	c.Stmts.mode = CacheDescribe
	for _, sd := range c.Stmts.M {
		if sd.Name != "" {
			c.Stmts.forget(sd)
		}
	}
	return true
}

// StatementCacheMode is Conn.StatementCacheMode: describe while the
// connect's pooler check has not answered (see PIDChecked).
func (c *Session) StatementCacheMode() string {
	c.Wmu.Lock()
	defer c.Wmu.Unlock()
	return c.Stmts.mode
}
