package pgline

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/pgline/pgline/pgtype"
)

// loadTypeSchema creates the types of the LoadType tests once.
var loadTypeSchema = sync.OnceValue(func() error {
	return srv.Exec(`CREATE EXTENSION IF NOT EXISTS hstore;
		CREATE EXTENSION IF NOT EXISTS citext;
		CREATE TYPE lt_mood AS ENUM ('sad', 'ok', 'happy');
		CREATE DOMAIN lt_posint AS int4 CHECK (VALUE > 0);
		CREATE TYPE lt_floatrange AS RANGE (subtype = float8);
		CREATE TYPE lt_pt AS (x lt_posint, label text, m lt_mood);
		CREATE TYPE lt_item AS (name citext, pt lt_pt, moods lt_mood[], r lt_floatrange, tags hstore, dropped int4, at timestamptz);
		ALTER TYPE lt_item DROP ATTRIBUTE dropped;
		CREATE SCHEMA lt_hidden;
		CREATE TYPE lt_hidden.color AS ENUM ('red', 'green');
		CREATE TYPE lt_nocodec AS (a int4, x xml)`)
})

type ltPt struct {
	X     int32
	Label string
	M     string
}

type ltItem struct {
	Name  string
	Pt    ltPt
	Moods []string
	R     pgtype.Range[float64]
	Tags  map[string]*string
	At    *string
}

func loadTypeConn(t *testing.T) *Conn {
	t.Helper()
	if err := loadTypeSchema(); err != nil {
		t.Fatal(err)
	}
	return connect(t, srv.DSN())
}

const ltItemSQL = `SELECT ROW('Bob', ROW(7, 'seven', 'ok')::lt_pt, ARRAY['happy','sad']::lt_mood[],
	'[1.5,2.5)'::lt_floatrange, 'a=>1, b=>NULL'::hstore, NULL)::lt_item`

// TestLoadTypes: a composite type made of a domain, an enum, an enum
// array, a user range, citext, hstore and another composite is loaded by
// its name alone, with all its parts, and then scans into a struct; a
// domain array and a range encode as parameters.
func TestLoadTypes(t *testing.T) {
	c := loadTypeConn(t)
	ctx := testCtx(t)
	var it ltItem
	if err := c.QueryRow(ctx, ltItemSQL).Scan(&it); err == nil {
		t.Fatal("lt_item scanned into a struct before LoadType: the test proves nothing")
	}
	if err := c.LoadType(ctx, "lt_item"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, ltItemSQL).Scan(&it); err != nil {
		t.Fatal(err)
	}
	if it.Name != "Bob" || it.Pt != (ltPt{7, "seven", "ok"}) || strings.Join(it.Moods, ",") != "happy,sad" ||
		it.R.Lower != 1.5 || it.R.Upper != 2.5 || len(it.Tags) != 2 || *it.Tags["a"] != "1" || it.Tags["b"] != nil || it.At != nil {
		t.Fatalf("got %+v", it)
	}
	for _, n := range []string{"lt_item", "lt_pt", "lt_mood", "lt_posint", "lt_floatrange", "hstore", "citext"} {
		var oid uint32
		if err := c.QueryRow(ctx, "SELECT $1::regtype::oid", n).Scan(&oid); err != nil {
			t.Fatal(err)
		}
		if !c.TypeMap().Known(oid) {
			t.Errorf("%s (OID %d) was not registered", n, oid)
		}
		if c.TypeMap().ResultFormat(oid) != 1 {
			t.Errorf("%s is not requested in binary", n)
		}
	}
	// Parameters of the loaded types.
	var n int
	if err := c.QueryRow(ctx, "SELECT cardinality($1::lt_posint[])", []int32{1, 2, 3}).Scan(&n); err != nil || n != 3 {
		t.Fatalf("lt_posint[]: %d, %v", n, err)
	}
	var s string
	r := pgtype.Range[float64]{Lower: 0.25, Upper: 4, LowerType: pgtype.Inclusive, UpperType: pgtype.Exclusive}
	if err := c.QueryRow(ctx, "SELECT $1::lt_floatrange::text", r).Scan(&s); err != nil || s != "[0.25,4)" {
		t.Fatalf("lt_floatrange: %q, %v", s, err)
	}
	// The range came with its multirange.
	t.Run("multirange", func(t *testing.T) {
		srv.NeedVersion(t, 14, "multiranges")
		var mr pgtype.Multirange[float64]
		if err := c.QueryRow(ctx, "SELECT '{[1,2), [3.5,4]}'::lt_floatmultirange").Scan(&mr); err != nil {
			t.Fatal(err)
		}
		if len(mr) != 2 || mr[1].Lower != 3.5 || mr[1].UpperType != pgtype.Inclusive {
			t.Fatalf("lt_floatmultirange: %+v", mr)
		}
		var s string
		if err := c.QueryRow(ctx, "SELECT $1::lt_floatmultirange::text", mr).Scan(&s); err != nil || s != "{[1,2),[3.5,4]}" {
			t.Fatalf("lt_floatmultirange parameter: %q, %v", s, err)
		}
	})
	var back ltItem
	if err := c.QueryRow(ctx, "SELECT $1::lt_item", it).Scan(&back); err != nil {
		t.Fatal(err)
	}
	if back.Pt != it.Pt || back.Name != it.Name || *back.Tags["a"] != "1" {
		t.Fatalf("round trip: %+v", back)
	}
	// A domain's CHECK still applies to what we send.
	if err := c.QueryRow(ctx, "SELECT $1::lt_posint[]", []int32{-1}).Scan(new([]int32)); err == nil || !strings.Contains(err.Error(), "23514") {
		t.Fatalf("negative lt_posint: %v", err)
	}
}

// TestLoadTypeNames: schema-qualified names, array names, a name off the
// search_path, names that do not exist and types without a codec.
func TestLoadTypeNames(t *testing.T) {
	c := loadTypeConn(t)
	ctx := testCtx(t)
	if err := c.LoadType(ctx, "color"); err == nil || !strings.Contains(err.Error(), `"color" does not exist`) {
		t.Fatalf("color off the search_path: %v", err)
	}
	if err := c.LoadTypes(ctx, []string{"lt_hidden.color[]", "public.lt_mood"}); err != nil {
		t.Fatal(err)
	}
	var colors []string
	if err := c.QueryRow(ctx, "SELECT $1::lt_hidden.color[]", []string{"green", "red"}).Scan(&colors); err != nil {
		t.Fatal(err)
	}
	if strings.Join(colors, ",") != "green,red" {
		t.Fatalf("got %q", colors)
	}
	if name := c.TypeMap().TypeName(oidOf(t, c, "lt_hidden.color")); name != "lt_hidden.color" {
		t.Errorf("TypeName = %q", name)
	}
	if err := c.LoadType(ctx, "xml"); err == nil || !strings.Contains(err.Error(), "xml has no codec") {
		t.Fatalf("xml: %v", err)
	}
	// A composite with a field of a type without a codec loads; that
	// field is text, so the composite is requested in text.
	if err := c.LoadType(ctx, "lt_nocodec"); err != nil {
		t.Fatal(err)
	}
	var v struct {
		A int32
		X string
	}
	if err := c.QueryRow(ctx, "SELECT ROW(5, '<a/>')::lt_nocodec").Scan(&v); err != nil || v.A != 5 || v.X != "<a/>" {
		t.Fatalf("lt_nocodec: %+v, %v", v, err)
	}
	// A multirange by its own name brings its range.
	t.Run("multirange", func(t *testing.T) {
		srv.NeedVersion(t, 14, "multiranges")
		c2 := connect(t, srv.DSN())
		if err := c2.LoadType(ctx, "lt_floatmultirange[]"); err != nil {
			t.Fatal(err)
		}
		var mrs []pgtype.Multirange[float64]
		if err := c2.QueryRow(ctx, "SELECT ARRAY['{[1,2)}', '{}']::lt_floatmultirange[]").Scan(&mrs); err != nil {
			t.Fatal(err)
		}
		if len(mrs) != 2 || len(mrs[0]) != 1 || mrs[0][0].Upper != 2 || len(mrs[1]) != 0 {
			t.Fatalf("lt_floatmultirange[]: %+v", mrs)
		}
		if !c2.TypeMap().Known(oidOf(t, c2, "lt_floatrange")) {
			t.Fatal("loading the multirange did not register its range")
		}
	})
	// Built-in types need no loading and are no error.
	if err := c.LoadTypes(ctx, []string{"int4", "int4range", "text[]"}); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadTypes(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func oidOf(t *testing.T, c *Conn, name string) uint32 {
	t.Helper()
	var oid uint32
	if err := c.QueryRow(testCtx(t), "SELECT $1::regtype::oid", name).Scan(&oid); err != nil {
		t.Fatal(err)
	}
	return oid
}

// TestLoadTypeAfterDescribe: a statement described (and cached) before
// LoadType asked for the composite in text; it still scans correctly
// into a struct afterwards.
func TestLoadTypeAfterDescribe(t *testing.T) {
	c := loadTypeConn(t)
	ctx := testCtx(t)
	const q = "SELECT ROW(3, 'three', 'sad')::lt_pt, $1::int4"
	var s string
	var n int32
	if err := c.QueryRow(ctx, q, 1).Scan(&s, &n); err != nil || s != "(3,three,sad)" {
		t.Fatalf("before: %q, %v", s, err)
	}
	if err := c.LoadType(ctx, "lt_pt"); err != nil {
		t.Fatal(err)
	}
	var p ltPt
	if err := c.QueryRow(ctx, q, 2).Scan(&p, &n); err != nil || p != (ltPt{3, "three", "sad"}) || n != 2 {
		t.Fatalf("after: %+v %d, %v", p, n, err)
	}
}

// TestLoadTypesPool: AfterConnect registers the types on every
// connection of a Pool, each connection's map is its own, and the
// Config's map is left as it was.
func TestLoadTypesPool(t *testing.T) {
	if err := loadTypeSchema(); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(srv.DSN() + " pool_max_conns=3")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TypeMap = pgtype.NewMap()
	var mu sync.Mutex
	maps := map[*pgtype.Map]bool{}
	cfg.AfterConnect = func(ctx context.Context, c *Conn) error {
		mu.Lock()
		maps[c.TypeMap()] = true
		mu.Unlock()
		return c.LoadTypes(ctx, []string{"lt_item"})
	}
	p, err := NewPoolConfig(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := p.Begin(ctx) // holds a connection: three Begins need three
			if err != nil {
				errs <- err
				return
			}
			defer tx.Rollback(ctx)
			var it ltItem
			if err := tx.QueryRow(ctx, ltItemSQL).Scan(&it); err != nil {
				errs <- err
				return
			}
			if it.Pt.X != 7 {
				t.Errorf("got %+v", it)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(maps) < 2 || maps[cfg.TypeMap] {
		t.Fatalf("%d connection maps, Config's among them: %v", len(maps), maps[cfg.TypeMap])
	}
	var oid uint32
	if err := p.QueryRow(ctx, "SELECT 'lt_item'::regtype::oid").Scan(&oid); err != nil {
		t.Fatal(err)
	}
	if cfg.TypeMap.Known(oid) {
		t.Fatal("LoadTypes on a connection registered the type on the Config's map")
	}
}
