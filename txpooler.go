package pgline

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

// errPooler is wrapped, with the server's error, by the error of a
// statement whose named statement was missing (or already present) on the
// server session that received it: the connection goes through a
// transaction pooler. Nothing of the statement ran.
var errPooler = errors.New("pgline: the connection goes through a transaction pooler (switched to statement_cache_mode=describe)")

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

// proxyFlags holds, per host, whether connections to it go through a
// pooler. A Pool shares one among its connections; a lone Conn has its
// own flag.
type proxyFlags struct {
	mu sync.Mutex
	m  map[string]*atomic.Bool
}

// flag returns host's flag.
func (f *proxyFlags) flag(host string) *atomic.Bool {
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

// hosts returns the hosts found behind a pooler.
func (f *proxyFlags) hosts() []string {
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
func (c *session) poolerSign(sd *stmtDesc, e *srvErr) bool {
	if e.f.Code != "26000" && e.f.Code != "42P05" || sd == nil || sd.name == "" {
		return false
	}
	sd = sd.origin()
	c.wmu.Lock()
	sign := !sd.closed && sd.deallocs == c.stmts.deallocs
	c.wmu.Unlock()
	if sign {
		c.toDescribeMode(fmt.Sprintf("statement %s: %s (SQLSTATE %s)", sd.name, e.f.Message, e.f.Code))
	}
	return sign
}

// toDescribeMode switches the connection, and every connection of its
// Pool to the same host, to describe mode; why (empty when the Pool knew
// already) is reported to the Tracer once per connection.
func (c *session) toDescribeMode(why string) {
	c.proxied.Store(true)
	c.wmu.Lock()
	switched := c.toDescribeModeLocked()
	c.wmu.Unlock()
	if switched && why != "" && c.opts.onPooler != nil {
		c.opts.onPooler(why)
	}
}

// followPoolerLocked switches to describe mode when another connection to
// the host found a pooler. The caller holds wmu.
func (c *session) followPoolerLocked() {
	if c.proxied.Load() {
		c.toDescribeModeLocked()
	}
}

// toDescribeModeLocked switches to describe mode, once: cached named
// statements are forgotten (not closed: through a pooler, a Close reaches
// any session, and one in the write buffer could precede a Bind of a
// statement a batch has pinned), and the named BEGIN and COMMIT are no
// longer used. The caller holds wmu.
func (c *session) toDescribeModeLocked() bool {
	if c.stmts.mode != cachePrepare {
		return false
	}
	c.stmts.mode = cacheDescribe
	for _, sd := range c.stmts.m {
		if sd.name != "" {
			c.stmts.forget(sd)
		}
	}
	return true
}

// StatementCacheMode returns how the connection runs statements now:
// "prepare", "describe" (the mode statement_cache_mode=auto switches to
// behind a transaction pooler) or "none".
func (c *session) StatementCacheMode() string {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.stmts.mode
}
