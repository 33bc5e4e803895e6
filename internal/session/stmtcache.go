package session

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
	// CacheAuto, the default, is cachePrepare unless the connection goes
	// through a transaction pooler, then cacheDescribe (see txpooler.go).
	CacheAuto = "auto"
	// CachePrepare prepares each SQL text once as a named statement and
	// keeps its description: each run is Bind/Execute/Sync.
	CachePrepare = "prepare"
	// CacheDescribe keeps descriptions only and runs the unnamed statement:
	// Parse/Bind/Execute/Sync in one round trip, which works behind
	// PgBouncer in transaction pooling mode.
	CacheDescribe = "describe"
	// CacheNone describes each statement before running it.
	CacheNone = "none"
)

// StmtDesc is a described statement: its parameter types and result
// columns, and the scan plans made for them so far.
type StmtDesc struct {
	sql       string
	Name      string // server-side name; "" for the unnamed statement
	ParamOIDs []uint32
	Fields    []wire.FieldDescription
	formats   []int16 // result format per column, as sent in Bind
	Plans     []ColumnPlan
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
	Err   error // why the statement could not be prepared
	// portalDesc is the raw RowDescription of the last run's portal
	// (describe mode only).
	portalDesc []byte
	traits     SQLTraits
	// deallocs is stmtCache.deallocs when the statement was prepared, and
	// closed is set once its Close is queued: both tell a statement
	// missing because of pgline or the application from one missing
	// behind a pooler (see Session.poolerSign). Guarded by wmu.
	deallocs uint64
	closed   bool
	// paths is stmtCache.paths when the statement was described (see
	// Session.boundLocked). Guarded by wmu.
	paths uint64
	// cached is the description this one copies (see unnamed), nil for
	// the connection's own.
	cached *StmtDesc
	// owner is the transaction (or COPY's hold) whose request described
	// the statement, nil outside any: a failure of its describe is not
	// another owner's outcome (see describeAgain).
	owner *Holder
}

// unnamed returns a copy of sd for one run of its statement parsed
// unnamed with the Bind (see Session.appendRun): for a named statement that
// a statement queued since it was prepared may have deallocated. Its
// portal's description, read with the rows, is not cached (see
// Rows.portalDescribed). The caller holds wmu, not necessarily the turn.
func (sd *StmtDesc) unnamed() *StmtDesc {
	// Not sd's plans nor its last tag: the turn holder may be scanning
	// a run of sd now.
	return &StmtDesc{sql: sd.sql, ParamOIDs: sd.ParamOIDs, Fields: sd.Fields, formats: sd.formats,
		Plans: make([]ColumnPlan, len(sd.Plans)), ready: sd.ready, traits: sd.traits, cached: sd.origin(),
		deallocs: sd.deallocs, paths: sd.paths}
}

// origin returns the connection's own description of sd's statement: sd,
// or the one sd copies.
func (sd *StmtDesc) origin() *StmtDesc {
	if sd.cached != nil {
		return sd.cached
	}
	return sd
}

// sqlTraits are what a run needs to know of its SQL text, found once per
// statement rather than on every run.
type SQLTraits struct {
	copyIn      bool // may COPY FROM STDIN: runs alone (see holdForCopy)
	shareable   bool // may share a Sync: not transaction control or COPY (see pipeline.go)
	Deallocates bool // may deallocate pgline's prepared statements (see deallocatesOurs)
	changesPath bool // may change search_path (see Session.boundLocked)
	endsBlock   bool // ends the transaction block it may begin (see sqllex.Info.EndsBlock)
	txControl   bool // transaction control (see sqllex.Info.TransactionControl)
	prepares    bool // may prepare a statement with SQL PREPARE (see stmtCache.sqlPrepared)
}

// TraitsOf reads sql's traits (see SQLTraits).
func TraitsOf(sql string) SQLTraits { return traitsOfInfo(sqllex.Scan(sql)) }

// traitsOfInfo returns the traits of a text sqllex.Scan read as info.
func traitsOfInfo(info sqllex.Info) SQLTraits {
	return SQLTraits{copyIn: info.CopyFromStdin, shareable: !info.KeepsOwnSync(), Deallocates: deallocatesOurs(info),
		changesPath: info.ChangesSearchPath, endsBlock: info.EndsBlock, txControl: info.TransactionControl,
		prepares: info.Prepares}
}

// deallocatesOurs reports whether a text sqllex.Scan read as info may
// deallocate pgline's own prepared statements (see Session.NoteDeallocateLocked):
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

// ColumnPlan is the scan plan of one column for one destination type.
type ColumnPlan struct {
	Dst    unsafe.Pointer // the destination type's word (see typeWord)
	Plan   pgtype.ScanPlan
	Inline pgtype.Inline // the plan's common values, decoded without it
	Short  bool          // the plan copies a value to a *string as is (see Rows.scanOne)
}

// SetFields records the result columns and picks the result formats:
// binary for types pgtype decodes in binary, text for the others.
func (sd *StmtDesc) SetFields(fields []wire.FieldDescription, m *pgtype.Map) {
	sd.Fields = fields
	sd.formats = make([]int16, len(fields))
	for i := range fields {
		f := m.ResultFormat(fields[i].DataTypeOID)
		sd.formats[i] = f
		sd.Fields[i].Format = f
	}
	sd.Plans = make([]ColumnPlan, len(fields))
}

// stmtCache is a connection's LRU cache of described statements. It is
// guarded by Session.Wmu.
type stmtCache struct {
	mode     string
	capacity int
	M        map[string]*StmtDesc
	lru      list.List // front: most recently used
	Prefix   string    // of statement names (see stmtName)
	// deallocs counts the statements queued that may deallocate pgline's
	// prepared statements (DEALLOCATE, DISCARD ALL: see
	// Session.NoteDeallocateLocked).
	deallocs uint64
	// closing lists named statements evicted from the cache; Close
	// messages for them go out with the next request.
	closing []string
	// appended counts the first names of closing whose Close messages are
	// in a request being built (see Session.appendClosesLocked).
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
	// (see Session.notePathLocked): a description made before the last of
	// them may name other tables and types than the server now would.
	paths uint64
	// pathTouched: a statement that may change search_path was queued
	// since the connection started or since the Pool's last session reset
	// (see resetSession), which restores the defaults.
	pathTouched bool
	// SqlPrepared: a statement that may prepare one with SQL PREPARE
	// (sqllex.Info.Prepares) was queued since the connection started or
	// since the Pool's last reset that deallocated such statements (see
	// resetPrepared).
	SqlPrepared bool
}

// newStmtCache makes a statement cache in mode (CacheAuto, CachePrepare,
// CacheDescribe, CacheNone) holding at most capacity statements.
func newStmtCache(mode string, capacity int) *stmtCache {
	if mode == "" || mode == CacheAuto {
		mode = CachePrepare
	}
	if capacity <= 0 {
		capacity = config.DefaultCacheCapacity
	}
	return &stmtCache{mode: mode, capacity: capacity, M: make(map[string]*StmtDesc), Prefix: stmtPrefix()}
}

// get returns the cached description of sql, marking it recently used.
func (sc *stmtCache) get(sql string) *StmtDesc {
	sd := sc.M[sql]
	if sd != nil {
		sc.lru.MoveToFront(sd.elem)
	}
	return sd
}

// newDesc returns a new, uncached description for sql, named when the
// mode prepares statements and the description is to be cached.
func (sc *stmtCache) newDesc(sql string, uncached bool) *StmtDesc {
	sd := &StmtDesc{sql: sql, ready: make(chan struct{}), traits: TraitsOf(sql), deallocs: sc.deallocs, paths: sc.paths}
	if sc.mode == CachePrepare && !uncached {
		sd.Name = stmtName(sc.Prefix, sql, nil) // Parse sends no types
		if sc.dropped > 0 {
			// Unique to this description (see dropped): a description of
			// sql dropped since had a smaller count, or none.
			sd.Name += "_" + strconv.FormatUint(sc.dropped, 36)
		}
	}
	return sd
}

// put caches sd, evicting the least recently used entry when full.
func (sc *stmtCache) put(sd *StmtDesc) {
	if sc.mode == CacheNone {
		return
	}
	if old := sc.M[sd.sql]; old != nil {
		sc.remove(old)
	}
	for len(sc.M) >= sc.capacity {
		victim := sc.lru.Back()
		for victim != nil && victim.Value.(*StmtDesc).pins > 0 {
			victim = victim.Prev()
		}
		if victim == nil {
			break // all pinned: over capacity until a later put
		}
		sc.remove(victim.Value.(*StmtDesc))
	}
	sd.elem = sc.lru.PushFront(sd)
	sc.M[sd.sql] = sd
}

// remove drops sd from the cache; a named statement is closed on the
// server with the next request.
func (sc *stmtCache) remove(sd *StmtDesc) {
	if sc.forget(sd) && sd.Name != "" {
		sd.closed = true
		sc.closing = append(sc.closing, sd.Name)
	}
}

// removeAll drops every description from the cache, closing the named
// statements (see remove).
func (sc *stmtCache) removeAll() {
	for _, sd := range sc.M {
		sc.remove(sd)
	}
}

// forget drops sd from the cache, leaving it prepared on the server, and
// reports whether it was cached.
func (sc *stmtCache) forget(sd *StmtDesc) bool {
	if sd.elem == nil {
		return false
	}
	sc.lru.Remove(sd.elem)
	sd.elem = nil
	delete(sc.M, sd.sql)
	sc.dropped++
	return true
}
