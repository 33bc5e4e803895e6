package pgline

// Rows into Go values. The functions take pgx's names and shapes
// (CollectRows, RowToStructByName, ...), so that code written for pgx v5
// ports by changing its import.
//
// A struct row function maps the result columns to the struct's fields
// once per (result description, struct type, mapping) and caches the
// mapping: pgline keeps one []FieldDescription per described statement
// and replaces it when the statement's columns change, so the address of
// its first element and its length identify the columns (the cache keeps
// the slice alive, so the address is never reused for other columns).
// Each row is scanned into a pooled scratch value whose []any of field
// pointers was built once, then copied out: a row costs no allocation
// beyond what its values need.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrTooManyRows is returned by CollectExactlyOneRow when the query
// returned more than one row.
var ErrTooManyRows = errors.New("pgline: too many rows in result set")

var (
	errNilRows = errors.New("pgline: nil *Rows (check the error Query returned)")
	errNilFunc = errors.New("pgline: nil row function")
	errNilRow  = errors.New("pgline: nil CollectableRow")
)

// CollectableRow is the current row of a result, as a RowToFunc reads it.
// *Rows implements it. The struct row functions keep their mapping of
// columns to fields per FieldDescriptions slice: an implementation returns
// a new slice, not the old one changed, when its columns change.
type CollectableRow interface {
	FieldDescriptions() []FieldDescription
	Scan(dest ...any) error
	Values() ([]any, error)
	RawValues() [][]byte
}

// RowToFunc turns the current row into a T. The slices RawValues returns
// are valid only until it returns.
type RowToFunc[T any] func(row CollectableRow) (T, error)

// AppendRows calls fn for each row of rows and appends the values it
// returns to slice. It closes rows. On an error it returns nil and the
// error: the first one of fn, else rows.Err.
func AppendRows[T any, S ~[]T](slice S, rows *Rows, fn RowToFunc[T]) (S, error) {
	if rows == nil {
		return nil, errNilRows
	}
	defer rows.Close()
	if fn == nil {
		return nil, errNilFunc
	}
	for rows.Next() {
		v, err := fn(rows)
		if err != nil {
			return nil, rows.closeNaming(err, nil)
		}
		slice = append(slice, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return slice, nil
}

// CollectRows calls fn for each row of rows and returns the values in a
// slice (empty, not nil, when there are no rows). It closes rows. On an
// error it returns nil and the error: the first one of fn, else rows.Err.
func CollectRows[T any](rows *Rows, fn RowToFunc[T]) ([]T, error) {
	return AppendRows([]T{}, rows, fn)
}

// CollectOneRow calls fn for the first row of rows and returns its value.
// It closes rows, discarding any other row. When there is no row it
// returns rows.Err if set, else ErrNoRows.
func CollectOneRow[T any](rows *Rows, fn RowToFunc[T]) (T, error) {
	return collectOne(rows, fn, false)
}

// CollectExactlyOneRow is CollectOneRow for a query that must return
// exactly one row: it returns ErrNoRows when there is none and
// ErrTooManyRows when there is more than one.
func CollectExactlyOneRow[T any](rows *Rows, fn RowToFunc[T]) (T, error) {
	return collectOne(rows, fn, true)
}

// collectOne is CollectOneRow, or with exactly CollectExactlyOneRow.
func collectOne[T any](rows *Rows, fn RowToFunc[T], exactly bool) (T, error) {
	var zero T
	if rows == nil {
		return zero, errNilRows
	}
	defer rows.Close()
	if fn == nil {
		return zero, errNilFunc
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return zero, err
		}
		return zero, ErrNoRows
	}
	v, err := fn(rows)
	if err != nil {
		return zero, rows.closeNaming(err, nil)
	}
	if exactly && rows.Next() {
		return zero, ErrTooManyRows
	}
	rows.Close() // reads the rest of the reply: its error, if any
	if err := rows.Err(); err != nil {
		return zero, err
	}
	return v, nil
}

// ForEachRow scans each row of rows into dest and calls fn after each. It
// closes rows, and returns the statement's command tag, or the first
// error of Scan, fn or rows.Err.
func ForEachRow(rows *Rows, dest []any, fn func() error) (CommandTag, error) {
	if rows == nil {
		return CommandTag{}, errNilRows
	}
	defer rows.Close()
	if fn == nil {
		return CommandTag{}, errNilFunc
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return CommandTag{}, rows.closeNaming(err, nil)
		}
		if err := fn(); err != nil {
			return CommandTag{}, err
		}
	}
	if err := rows.Err(); err != nil {
		return CommandTag{}, err
	}
	return rows.CommandTag(), nil
}

// RowTo returns the row's only column scanned into a T.
func RowTo[T any](row CollectableRow) (T, error) {
	var zero T
	if row == nil {
		return zero, errNilRow
	}
	ct := collectTypeOf[T]()
	s := ct.getOne()
	err := row.Scan(s.dest[:]...)
	v := s.v
	ct.putOne(s)
	if err != nil {
		return zero, err
	}
	return v, nil
}

// RowToAddrOf returns the row's only column scanned into a new T.
func RowToAddrOf[T any](row CollectableRow) (*T, error) {
	if row == nil {
		return nil, errNilRow
	}
	ct := collectTypeOf[T]()
	s := ct.getOne()
	p := new(T)
	s.dest[0] = p
	err := row.Scan(s.dest[:]...)
	ct.putOne(s)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// RowToMap returns the row as a map from column name to the column's
// value, decoded as Rows.Values does (nil for NULL). Of columns with the
// same name, the last one is kept.
func RowToMap(row CollectableRow) (map[string]any, error) {
	if row == nil {
		return nil, errNilRow
	}
	vals, err := row.Values()
	if err != nil {
		return nil, err
	}
	fds := row.FieldDescriptions()
	if len(fds) != len(vals) {
		return nil, fmt.Errorf("pgline: RowToMap: %d values for %d columns", len(vals), len(fds))
	}
	m := make(map[string]any, len(fds))
	for i := range fds {
		m[fds[i].Name] = vals[i]
	}
	return m, nil
}

// RowToStructByName returns the row scanned into a T, which must be a
// struct. Each column goes into the field of its name, and each field
// must get a column.
//
// A field matches the column named by its `db:"name"` tag exactly, or,
// without a tag, the column whose name equals the field's ignoring case
// and underscores (field CreatedAt matches column created_at). Fields of
// embedded structs count as the struct's own, as Go promotes them: a
// field shadows deeper ones of the same name, and two at the same depth
// match no column. An embedded pointer to a struct is allocated, for each
// row, when a column goes into it. Unexported fields, and fields tagged
// `db:"-"`, are ignored; an embedded struct with a db tag is one field.
//
// The mapping is made once per result description and struct type and
// cached; a row costs no allocation beyond its values. The struct row
// functions are safe for concurrent use on different rows.
func RowToStructByName[T any](row CollectableRow) (T, error) {
	return rowToStruct[T](row, byName)
}

// RowToStructByNameLax is RowToStructByName that leaves the fields
// without a column alone: each column still needs a field.
func RowToStructByNameLax[T any](row CollectableRow) (T, error) {
	return rowToStruct[T](row, byNameLax)
}

// RowToStructByPos returns the row scanned into a T, which must be a
// struct with one field per column: the fields are taken in order, with
// the fields of embedded structs in place of them, and unexported fields
// and those tagged `db:"-"` left out.
func RowToStructByPos[T any](row CollectableRow) (T, error) {
	return rowToStruct[T](row, byPos)
}

// RowToAddrOfStructByName is RowToStructByName returning a new T.
func RowToAddrOfStructByName[T any](row CollectableRow) (*T, error) {
	return rowToAddrOfStruct[T](row, byName)
}

// RowToAddrOfStructByNameLax is RowToStructByNameLax returning a new T.
func RowToAddrOfStructByNameLax[T any](row CollectableRow) (*T, error) {
	return rowToAddrOfStruct[T](row, byNameLax)
}

// RowToAddrOfStructByPos is RowToStructByPos returning a new T.
func RowToAddrOfStructByPos[T any](row CollectableRow) (*T, error) {
	return rowToAddrOfStruct[T](row, byPos)
}

func rowToStruct[T any](row CollectableRow, mode mapMode) (T, error) {
	var zero T
	ct, s, err := scanStruct[T](row, mode)
	if err != nil {
		return zero, err
	}
	v := s.v
	ct.putStruct(s)
	return v, nil
}

func rowToAddrOfStruct[T any](row CollectableRow, mode mapMode) (*T, error) {
	ct, s, err := scanStruct[T](row, mode)
	if err != nil {
		return nil, err
	}
	p := new(T)
	*p = s.v
	ct.putStruct(s)
	return p, nil
}

// scanStruct scans the row into a scratch value, to be copied out and
// given back with putStruct.
func scanStruct[T any](row CollectableRow, mode mapMode) (*collectType[T], *structScratch[T], error) {
	if row == nil {
		return nil, nil, errNilRow
	}
	ct := collectTypeOf[T]()
	s, err := ct.getStruct(row.FieldDescriptions(), mode)
	if err != nil {
		return nil, nil, err
	}
	if err := row.Scan(s.dest...); err != nil {
		ct.putStruct(s)
		return nil, nil, err
	}
	return ct, s, nil
}

// mapMode is how a struct row function maps columns to fields.
type mapMode uint8

const (
	byName    mapMode = iota // RowToStructByName
	byNameLax                // RowToStructByNameLax
	byPos                    // RowToStructByPos
)

func (m mapMode) String() string {
	switch m {
	case byName:
		return "RowToStructByName"
	case byNameLax:
		return "RowToStructByNameLax"
	}
	return "RowToStructByPos"
}

// collectTypes holds a *collectType[T] per reflect.Type of T: a cache,
// computed from T alone, as encoding/json's cache of struct fields.
var collectTypes sync.Map

// collectType is what the row functions keep for one type T. It is safe
// for concurrent use.
type collectType[T any] struct {
	t    reflect.Type
	ones sync.Pool // *oneScratch[T], for RowTo and RowToAddrOf

	infoOnce sync.Once
	info     *structInfo // T's fields, when T is a struct
	infoErr  error       // why T cannot be scanned by field

	structs sync.Pool // *structScratch[T]
	// plans maps result descriptions to T's fields, copied on write:
	// readers load it without a lock.
	plans atomic.Pointer[map[planKey]*structPlan]
	mu    sync.Mutex // serializes writers of plans
}

// maxPlans bounds the plans kept per type; they are dropped when full.
const maxPlans = 64

func collectTypeOf[T any]() *collectType[T] {
	t := reflect.TypeFor[T]()
	if ct, ok := collectTypes.Load(t); ok {
		return ct.(*collectType[T])
	}
	ct, _ := collectTypes.LoadOrStore(t, &collectType[T]{t: t})
	return ct.(*collectType[T])
}

// oneScratch is where RowTo scans: dest[0] points at v.
type oneScratch[T any] struct {
	v    T
	dest [1]any
}

func (ct *collectType[T]) getOne() *oneScratch[T] {
	s, _ := ct.ones.Get().(*oneScratch[T])
	if s == nil {
		s = new(oneScratch[T])
	}
	s.dest[0] = &s.v
	return s
}

func (ct *collectType[T]) putOne(s *oneScratch[T]) {
	var zero T
	s.v = zero // drop what the value refers to; the next Scan starts from zero
	s.dest[0] = nil
	ct.ones.Put(s)
}

// structScratch is where the struct row functions scan: dest holds
// pointers to v's fields in the order of plan's columns.
type structScratch[T any] struct {
	v    T
	plan *structPlan
	dest []any
}

// getStruct returns a zero scratch value with dest set for the columns
// fds, and the embedded pointers the columns go into allocated.
func (ct *collectType[T]) getStruct(fds []FieldDescription, mode mapMode) (*structScratch[T], error) {
	key := planKey{n: len(fds), mode: mode}
	if len(fds) > 0 {
		key.desc = &fds[0]
	}
	s, _ := ct.structs.Get().(*structScratch[T])
	if s == nil {
		s = new(structScratch[T])
	}
	p := s.plan
	if p == nil || p.key != key {
		// Not the columns this scratch value was set for.
		var err error
		if p, err = ct.plan(key, fds); err != nil {
			ct.structs.Put(s)
			return nil, err
		}
		s.dest = slices.Grow(s.dest[:0], len(p.index))[:len(p.index)]
		v := reflect.ValueOf(&s.v).Elem()
		for i, index := range p.index {
			s.dest[i] = nil
			if !p.viaPtr[i] {
				s.dest[i] = v.FieldByIndex(index).Addr().Interface()
			}
		}
		s.plan = p
	}
	if len(p.ptrs) > 0 {
		// A new embedded struct per row: the last one went out with the
		// row's value.
		v := reflect.ValueOf(&s.v).Elem()
		for _, index := range p.ptrs {
			f := v.FieldByIndex(index) // its parents are allocated already
			f.Set(reflect.New(f.Type().Elem()))
		}
		for i, index := range p.index {
			if p.viaPtr[i] {
				s.dest[i] = v.FieldByIndex(index).Addr().Interface()
			}
		}
	}
	return s, nil
}

func (ct *collectType[T]) putStruct(s *structScratch[T]) {
	var zero T
	s.v = zero // the next Scan starts from zero: no slice or map reused
	if p := s.plan; p != nil && len(p.ptrs) > 0 {
		for i := range s.dest {
			if p.viaPtr[i] {
				s.dest[i] = nil // points into the value returned
			}
		}
	}
	ct.structs.Put(s)
}

// planKey identifies a result description (see the top of the file) and
// a mapping.
type planKey struct {
	desc *FieldDescription // the first column's; nil for no column
	n    int
	mode mapMode
}

// structPlan maps the columns of one result description to the fields of
// one struct type.
type structPlan struct {
	key    planKey
	index  [][]int // per column: the field's index in the struct
	viaPtr []bool  // per column: the field is in an embedded pointer
	ptrs   [][]int // the embedded pointers to allocate, parents first
	err    error   // why the columns do not map
}

// plan returns the mapping of the columns fds, identified by key, to T's
// fields.
func (ct *collectType[T]) plan(key planKey, fds []FieldDescription) (*structPlan, error) {
	mode := key.mode
	if m := ct.plans.Load(); m != nil {
		if p := (*m)[key]; p != nil {
			return p, p.err
		}
	}
	ct.infoOnce.Do(func() { ct.info, ct.infoErr = newStructInfo(ct.t) })
	if ct.infoErr != nil {
		return nil, fmt.Errorf("pgline: %v[%v]: %w", mode, ct.t, ct.infoErr)
	}
	p := ct.info.plan(fds, mode)
	p.key = key
	ct.mu.Lock()
	var m map[planKey]*structPlan
	if old := ct.plans.Load(); old != nil && len(*old) < maxPlans {
		m = make(map[planKey]*structPlan, len(*old)+1)
		for k, v := range *old {
			m[k] = v
		}
	} else {
		m = make(map[planKey]*structPlan)
	}
	m[key] = p
	ct.plans.Store(&m)
	ct.mu.Unlock()
	return p, p.err
}

// structField is a field of a struct, or of a struct embedded in it, that
// can take a column.
type structField struct {
	name   string // the db tag, else the Go name
	tagged bool
	key    string // name in lower case without underscores
	index  []int
	ptrs   []int  // lengths of the prefixes of index that are embedded pointers
	depth  int    // of embedding
	path   string // Go selector, "Base.ID", for messages
}

// structInfo lists the fields of a struct type that take columns.
type structInfo struct {
	t   reflect.Type
	all []structField // in order, embedded structs flattened (by position)
	// byKey gives the field of all a column goes to by name, by its key;
	// ambiguous lists the fields of keys that two fields at the same
	// depth have, which match no column.
	byKey     map[string]int
	ambiguous map[string][]string
}

func newStructInfo(t reflect.Type) (*structInfo, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%v is not a struct", t)
	}
	si := &structInfo{t: t}
	si.walk(t, nil, nil, "", []reflect.Type{t})
	// The field of each key: the shallowest, a tagged one before others
	// at its depth, as Go and encoding/json pick.
	best := make(map[string][]int)
	for i := range si.all {
		f := &si.all[i]
		cur := best[f.key]
		if len(cur) == 0 {
			best[f.key] = []int{i}
			continue
		}
		g := &si.all[cur[0]]
		switch {
		case f.depth < g.depth || f.depth == g.depth && f.tagged && !g.tagged:
			best[f.key] = []int{i}
		case f.depth == g.depth && f.tagged == g.tagged:
			best[f.key] = append(cur, i)
		}
	}
	si.byKey = make(map[string]int, len(best))
	for k, fs := range best {
		if len(fs) == 1 {
			si.byKey[k] = fs[0]
			continue
		}
		if si.ambiguous == nil {
			si.ambiguous = make(map[string][]string)
		}
		for _, i := range fs {
			si.ambiguous[k] = append(si.ambiguous[k], si.all[i].path)
		}
	}
	return si, nil
}

// walk appends the fields of struct t, found at index below the struct
// scanned into, to si.all. seen lists the struct types on the way down,
// which are not embedded again.
func (si *structInfo) walk(t reflect.Type, index, ptrs []int, path string, seen []reflect.Type) {
	depth := len(index)
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, tagged := sf.Tag.Lookup("db")
		tag, _, _ = strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		tagged = tagged && tag != ""
		fi := append(slices.Clip(index), i)
		if sf.Anonymous && !tagged {
			et, ptr := sf.Type, false
			if et.Kind() == reflect.Pointer {
				et, ptr = et.Elem(), true
			}
			if et.Kind() == reflect.Struct {
				// An unexported embedded pointer cannot be set; an
				// embedded value's exported fields can.
				if ptr && !sf.IsExported() || slices.Contains(seen, et) {
					continue
				}
				fp := ptrs
				if ptr {
					fp = append(slices.Clip(ptrs), len(fi))
				}
				si.walk(et, fi, fp, path+sf.Name+".", append(slices.Clip(seen), et))
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		name := sf.Name
		if tagged {
			name = tag
		}
		si.all = append(si.all, structField{
			name:   name,
			tagged: tagged,
			key:    fieldKey(name),
			index:  fi,
			ptrs:   ptrs,
			depth:  depth,
			path:   path + sf.Name,
		})
	}
}

// fieldKey is how names match without a tag: ignoring case and
// underscores.
func fieldKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", ""))
}

// plan maps the columns fds to si's fields; the plan's err says why they
// do not map.
func (si *structInfo) plan(fds []FieldDescription, mode mapMode) *structPlan {
	p := &structPlan{index: make([][]int, len(fds)), viaPtr: make([]bool, len(fds))}
	fail := func(format string, args ...any) *structPlan {
		p.err = fmt.Errorf("pgline: %v[%v]: %s", mode, si.t, fmt.Sprintf(format, args...))
		return p
	}
	fields := make([]int, len(fds)) // per column, its field in si.all
	if mode == byPos {
		if len(si.all) != len(fds) {
			return fail("%d fields for %d columns", len(si.all), len(fds))
		}
		for i := range fields {
			fields[i] = i
		}
	} else {
		used := make(map[int]int, len(fds)) // field → column
		var unmatched []string
		for i := range fds {
			name := fds[i].Name
			key := fieldKey(name)
			f, ok := si.byKey[key]
			if ok && si.all[f].tagged && si.all[f].name != name {
				ok = false // a db tag matches exactly
			}
			if !ok {
				if fs := si.ambiguous[key]; fs != nil {
					return fail("column %d (%s) matches fields %s at the same depth", i, name, strings.Join(fs, ", "))
				}
				unmatched = append(unmatched, fmt.Sprintf("%d (%s)", i, name))
				continue
			}
			if j, dup := used[f]; dup {
				return fail("columns %d and %d (%s) both match field %s", j, i, name, si.all[f].path)
			}
			used[f] = i
			fields[i] = f
		}
		if len(unmatched) == 1 {
			return fail("column %s matches no field", unmatched[0])
		}
		if len(unmatched) > 1 {
			return fail("columns %s match no field", strings.Join(unmatched, ", "))
		}
		if mode == byName {
			var missing []string
			for _, f := range si.byKey {
				if _, ok := used[f]; !ok {
					missing = append(missing, si.all[f].path)
				}
			}
			if len(missing) > 0 {
				slices.Sort(missing)
				what := "field"
				if len(missing) > 1 {
					what = "fields"
				}
				return fail("no column for %s %s (RowToStructByNameLax leaves such fields alone)", what, strings.Join(missing, ", "))
			}
		}
	}
	for i, f := range fields {
		sf := &si.all[f]
		p.index[i] = sf.index
		p.viaPtr[i] = len(sf.ptrs) > 0
		for _, n := range sf.ptrs {
			if !slices.ContainsFunc(p.ptrs, func(q []int) bool { return slices.Equal(q, sf.index[:n]) }) {
				p.ptrs = append(p.ptrs, sf.index[:n:n])
			}
		}
	}
	slices.SortStableFunc(p.ptrs, func(a, b []int) int { return len(a) - len(b) })
	return p
}
