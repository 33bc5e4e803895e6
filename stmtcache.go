package pgline

import (
	"container/list"
	"strconv"
	"strings"
	"unsafe"

	"github.com/pgline/pgline/internal/config"
	"github.com/pgline/pgline/internal/sqllex"
	"github.com/pgline/pgline/internal/wire"
	"github.com/pgline/pgline/pgtype"
)

// Statement cache modes (statement_cache_mode in the DSN).
const (
	// cacheAuto, the default, is cachePrepare unless the connection goes
	// through a transaction pooler, then cacheDescribe (see txpooler.go).
	cacheAuto = "auto"
	// cachePrepare prepares each SQL text once as a named statement and
	// keeps its description: each run is Bind/Execute/Sync.
	cachePrepare = "prepare"
	// cacheDescribe keeps descriptions only and runs the unnamed statement:
	// Parse/Bind/Execute/Sync in one round trip, which works behind
	// PgBouncer in transaction pooling mode.
	cacheDescribe = "describe"
	// cacheNone describes each statement before running it.
	cacheNone = "none"
)

// stmtDesc is a described statement: its parameter types and result
// columns, and the scan plans made for them so far.
type stmtDesc struct {
	sql       string
	name      string // server-side name; "" for the unnamed statement
	paramOIDs []uint32
	fields    []wire.FieldDescription
	formats   []int16 // result format per column, as sent in Bind
	plans     []columnPlan
	lastTag   string        // the command tag of the last run (see Rows.readRow)
	elem      *list.Element // position in the LRU list; nil when not cached
	// pins counts the batches between describing the statement and
	// queuing their Binds (guarded by wmu): the cache does not evict it
	// then, so that a batch of more new statements than the cache holds
	// does not close its own first ones before binding them.
	pins int
	// ready is closed once the description is known (or err is set);
	// until then, requests that need the statement wait for it.
	ready chan struct{}
	err   error // why the statement could not be prepared
	// portalDesc is the raw RowDescription of the last run's portal
	// (describe mode only).
	portalDesc []byte
	traits     sqlTraits
	// deallocs is stmtCache.deallocs when the statement was prepared, and
	// closed is set once its Close is queued: both tell a statement
	// missing because of pgline or the application from one missing
	// behind a pooler (see Conn.poolerSign). Guarded by wmu.
	deallocs uint64
	closed   bool
	// paths is stmtCache.paths when the statement was described (see
	// Conn.boundLocked). Guarded by wmu.
	paths uint64
	// cached is the description this one copies (see unnamed), nil for
	// the connection's own.
	cached *stmtDesc
	// owner is the transaction (or COPY's hold) whose request described
	// the statement, nil outside any: a failure of its describe is not
	// another owner's outcome (see describeAgain).
	owner *holder
}

// unnamed returns a copy of sd for one run of its statement parsed
// unnamed with the Bind (see Conn.appendRun): for a named statement that
// a statement queued since it was prepared may have deallocated. Its
// portal's description, read with the rows, is not cached (see
// Rows.portalDescribed). The caller holds wmu, not necessarily the turn.
func (sd *stmtDesc) unnamed() *stmtDesc {
	// Not sd's plans nor its last tag: the turn holder may be scanning
	// a run of sd now.
	return &stmtDesc{sql: sd.sql, paramOIDs: sd.paramOIDs, fields: sd.fields, formats: sd.formats,
		plans: make([]columnPlan, len(sd.plans)), ready: sd.ready, traits: sd.traits, cached: sd.origin(),
		deallocs: sd.deallocs, paths: sd.paths}
}

// origin returns the connection's own description of sd's statement: sd,
// or the one sd copies.
func (sd *stmtDesc) origin() *stmtDesc {
	if sd.cached != nil {
		return sd.cached
	}
	return sd
}

// sqlTraits are what a run needs to know of its SQL text, found once per
// statement rather than on every run.
type sqlTraits struct {
	copyIn      bool // may COPY FROM STDIN: runs alone (see holdForCopy)
	shareable   bool // may share a Sync: not transaction control or COPY (see pipeline.go)
	deallocates bool // may deallocate pgline's prepared statements (see deallocatesOurs)
	changesPath bool // may change search_path (see Conn.boundLocked)
	endsBlock   bool // ends the transaction block it may begin (see sqllex.Info.EndsBlock)
	txControl   bool // transaction control (see sqllex.Info.TransactionControl)
	prepares    bool // may prepare a statement with SQL PREPARE (see stmtCache.sqlPrepared)
}

func traitsOf(sql string) sqlTraits { return traitsOfInfo(sqllex.Scan(sql)) }

// traitsOfInfo returns the traits of a text sqllex.Scan read as info.
func traitsOfInfo(info sqllex.Info) sqlTraits {
	return sqlTraits{copyIn: info.CopyFromStdin, shareable: !info.KeepsOwnSync(), deallocates: deallocatesOurs(info),
		changesPath: info.ChangesSearchPath, endsBlock: info.EndsBlock, txControl: info.TransactionControl,
		prepares: info.Prepares}
}

// deallocatesOurs reports whether a text sqllex.Scan read as info may
// deallocate pgline's own prepared statements (see Conn.noteDeallocateLocked):
// it may deallocate (DEALLOCATE, DISCARD ALL, a DO block that mentions
// them), unless all it deallocates is one name that is not pgline's. Every
// name pgline prepares starts with "pgline_" (see stmtPrefix), so the
// application's DEALLOCATE of its own statement (DEALLOCATE app_s)
// leaves pgline's cache as it is. A word is folded to lower case by
// PostgreSQL and a quoted name is not; both are compared without regard
// to case, which errs towards counting.
func deallocatesOurs(info sqllex.Info) bool {
	name := info.Deallocated
	if !info.Deallocates || name == "" {
		return info.Deallocates
	}
	name = strings.TrimPrefix(name, `"`)
	const ours = "pgline_"
	return len(name) >= len(ours) && strings.EqualFold(name[:len(ours)], ours)
}

// columnPlan is the scan plan of one column for one destination type.
type columnPlan struct {
	dst    unsafe.Pointer // the destination type's word (see typeWord)
	plan   pgtype.ScanPlan
	inline pgtype.Inline // the plan's common values, decoded without it
	short  bool          // the plan copies a value to a *string as is (see Rows.scanOne)
}

// setFields records the result columns and picks the result formats:
// binary for types pgtype decodes in binary, text for the others.
func (sd *stmtDesc) setFields(fields []wire.FieldDescription, m *pgtype.Map) {
	sd.fields = fields
	sd.formats = make([]int16, len(fields))
	for i := range fields {
		f := m.ResultFormat(fields[i].DataTypeOID)
		sd.formats[i] = f
		sd.fields[i].Format = f
	}
	sd.plans = make([]columnPlan, len(fields))
}

// stmtCache is a connection's LRU cache of described statements. It is
// guarded by Conn.wmu.
type stmtCache struct {
	mode     string
	capacity int
	m        map[string]*stmtDesc
	lru      list.List // front: most recently used
	prefix   string    // of statement names (see stmtName)
	// deallocs counts the statements queued that may deallocate pgline's
	// prepared statements (DEALLOCATE, DISCARD ALL: see
	// Conn.noteDeallocateLocked).
	deallocs uint64
	// closing lists named statements evicted from the cache; Close
	// messages for them go out with the next request.
	closing []string
	// appended counts the first names of closing whose Close messages are
	// in a request being built (see Conn.appendClosesLocked).
	appended int
	// dropped counts the descriptions dropped from the cache. A statement
	// prepared again is named with it (see newDesc): a caller that took
	// the old description before it was dropped may still send a Bind of
	// the old name, which must never run the new statement (the same text,
	// whose result types may have changed since) and be read with the old
	// description's types. It gets 26000 (Closed) or the server's own
	// refusal of a changed result type, and prepares again.
	dropped uint64
	// paths counts the statements queued that may change search_path
	// (see Conn.notePathLocked): a description made before the last of
	// them may name other tables and types than the server now would.
	paths uint64
	// pathTouched: a statement that may change search_path was queued
	// since the connection started or since the Pool's last session reset
	// (see resetSession), which restores the defaults.
	pathTouched bool
	// sqlPrepared: a statement that may prepare one with SQL PREPARE
	// (sqllex.Info.Prepares) was queued since the connection started or
	// since the Pool's last reset that deallocated such statements (see
	// resetPrepared).
	sqlPrepared bool
}

func newStmtCache(mode string, capacity int) *stmtCache {
	if mode == "" || mode == cacheAuto {
		mode = cachePrepare
	}
	if capacity <= 0 {
		capacity = config.DefaultCacheCapacity
	}
	return &stmtCache{mode: mode, capacity: capacity, m: make(map[string]*stmtDesc), prefix: stmtPrefix()}
}

// get returns the cached description of sql, marking it recently used.
func (sc *stmtCache) get(sql string) *stmtDesc {
	sd := sc.m[sql]
	if sd != nil {
		sc.lru.MoveToFront(sd.elem)
	}
	return sd
}

// newDesc returns a new, uncached description for sql, named when the
// mode prepares statements and the description is to be cached.
func (sc *stmtCache) newDesc(sql string, uncached bool) *stmtDesc {
	sd := &stmtDesc{sql: sql, ready: make(chan struct{}), traits: traitsOf(sql), deallocs: sc.deallocs, paths: sc.paths}
	if sc.mode == cachePrepare && !uncached {
		sd.name = stmtName(sc.prefix, sql, nil) // Parse sends no types
		if sc.dropped > 0 {
			// Unique to this description (see dropped): a description of
			// sql dropped since had a smaller count, or none.
			sd.name += "_" + strconv.FormatUint(sc.dropped, 36)
		}
	}
	return sd
}

// put caches sd, evicting the least recently used entry when full.
func (sc *stmtCache) put(sd *stmtDesc) {
	if sc.mode == cacheNone {
		return
	}
	if old := sc.m[sd.sql]; old != nil {
		sc.remove(old)
	}
	for len(sc.m) >= sc.capacity {
		victim := sc.lru.Back()
		for victim != nil && victim.Value.(*stmtDesc).pins > 0 {
			victim = victim.Prev()
		}
		if victim == nil {
			break // all pinned: over capacity until a later put
		}
		sc.remove(victim.Value.(*stmtDesc))
	}
	sd.elem = sc.lru.PushFront(sd)
	sc.m[sd.sql] = sd
}

// remove drops sd from the cache; a named statement is closed on the
// server with the next request.
func (sc *stmtCache) remove(sd *stmtDesc) {
	if sc.forget(sd) && sd.name != "" {
		sd.closed = true
		sc.closing = append(sc.closing, sd.name)
	}
}

// removeAll drops every description from the cache, closing the named
// statements (see remove).
func (sc *stmtCache) removeAll() {
	for _, sd := range sc.m {
		sc.remove(sd)
	}
}

// forget drops sd from the cache, leaving it prepared on the server, and
// reports whether it was cached.
func (sc *stmtCache) forget(sd *stmtDesc) bool {
	if sd.elem == nil {
		return false
	}
	sc.lru.Remove(sd.elem)
	sd.elem = nil
	delete(sc.m, sd.sql)
	sc.dropped++
	return true
}
