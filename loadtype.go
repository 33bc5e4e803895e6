package pgline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pgline/pgline/pgtype"
)

// LoadType registers the type called name on the connection's TypeMap,
// reading its OIDs and structure from the server's catalog: an enum, a
// domain, a composite type, a range or multirange, hstore or citext, or
// an array of one of them ("mood[]"), with the types it is made of (a
// composite's field types, a domain's base type, a range's subtype; a
// range comes with its multirange) and its array type. A name is
// resolved as in SQL ('mood'::regtype): schema-qualified, or found on the
// search_path. A type this package has no codec for (an extension type
// other than hstore and citext, a pseudo-type) is an error; types it is
// made of that have none stay text.
//
// The types are this connection's (see Conn.TypeMap): register them
// before the statements that use them, and in Config.AfterConnect for
// every connection of a Pool.
func (c *Conn) LoadType(ctx context.Context, name string) error {
	return c.LoadTypes(ctx, []string{name})
}

// LoadTypes is LoadType for several names, in two round trips.
func (c *Conn) LoadTypes(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var missing []string
	if err := c.QueryRow(ctx, "SELECT coalesce(array_agg(n), '{}') FROM unnest($1::text[]) AS n WHERE to_regtype(n) IS NULL", names).Scan(&missing); err != nil {
		return fmt.Errorf("pgline: LoadTypes: %w", err)
	}
	if len(missing) > 0 {
		return fmt.Errorf("pgline: LoadTypes: type %q does not exist", missing[0])
	}
	rows, err := c.Query(ctx, loadTypesSQL(c.serverVersionNum()), names)
	if err != nil {
		return fmt.Errorf("pgline: LoadTypes: %w", err)
	}
	var cat []catalogType
	for rows.Next() {
		var t catalogType
		var typtype, category string
		if err := rows.Scan(&t.oid, &t.name, &t.typname, &typtype, &category, &t.array, &t.elem, &t.base, &t.fields, &t.sub, &t.rng, &t.requested); err != nil {
			rows.Close()
			return fmt.Errorf("pgline: LoadTypes: %w", err)
		}
		t.typtype, t.isArray = typtype, category == "A" && t.elem != 0
		cat = append(cat, t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgline: LoadTypes: %w", err)
	}
	return registerCatalog(c.s.Types, cat)
}

// catalogType is one pg_type row that LoadTypes registers.
type catalogType struct {
	oid       uint32
	name      string // oid::regtype, schema-qualified when not on the search_path
	typname   string
	typtype   string // b base, c composite, d domain, e enum, m multirange, p pseudo, r range
	isArray   bool
	array     uint32   // its array type, or 0
	elem      uint32   // an array's element type
	base      uint32   // a domain's base type
	fields    []uint32 // a composite's field types, in order
	sub       uint32   // a range's subtype
	rng       uint32   // a multirange's range type
	requested bool     // named by the caller, not only a part of a named type
}

// loadTypesSQL reads the named types ($1, text[]) and, recursively, the
// types they are made of (and the multiranges of ranges). A type reached
// several ways is grouped by OID before pg_type is joined: before
// PostgreSQL 14 the catalogs have no primary keys, so a GROUP BY t.oid
// could not select t's other columns.
func loadTypesSQL(version int) string {
	// A multirange's range, and a range's multirange (registered with
	// it); before PostgreSQL 14 there are none.
	multirange, rng := "", "0::oid"
	if version >= 140000 {
		multirange = `UNION ALL SELECT r.rngtypid FROM pg_range r WHERE t.typtype = 'm' AND r.rngmultitypid = t.oid
		UNION ALL SELECT r.rngmultitypid FROM pg_range r WHERE t.typtype = 'r' AND r.rngtypid = t.oid`
		rng = "coalesce((SELECT r.rngtypid FROM pg_range r WHERE r.rngmultitypid = t.oid), 0)"
	}
	return `WITH RECURSIVE want(oid, depth) AS (
	SELECT to_regtype(n)::oid, 0 FROM unnest($1::text[]) AS n
	UNION
	SELECT d.dep, w.depth + 1
	FROM want w JOIN pg_type t ON t.oid = w.oid
	CROSS JOIN LATERAL (
		SELECT t.typelem WHERE t.typcategory = 'A' AND t.typelem <> 0
		UNION ALL SELECT t.typbasetype WHERE t.typtype = 'd'
		UNION ALL SELECT a.atttypid FROM pg_attribute a
			WHERE t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL SELECT r.rngsubtype FROM pg_range r WHERE t.typtype = 'r' AND r.rngtypid = t.oid
		` + multirange + `
	) AS d(dep)
	WHERE w.depth < 16
)
SELECT t.oid, t.oid::regtype::text, t.typname::text, t.typtype::text, t.typcategory::text,
	t.typarray, t.typelem, t.typbasetype,
	coalesce((SELECT array_agg(a.atttypid ORDER BY a.attnum) FROM pg_attribute a
		WHERE t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped), '{}'),
	coalesce((SELECT r.rngsubtype FROM pg_range r WHERE r.rngtypid = t.oid), 0),
	` + rng + `,
	w.requested
FROM (SELECT oid, bool_or(depth = 0) FROM want GROUP BY oid) AS w(oid, requested)
JOIN pg_type t ON t.oid = w.oid
ORDER BY t.oid`
}

// serverVersionNum is the server's version as a number (150004 for
// 15.4), from its server_version parameter; 0 when unknown.
func (c *Conn) serverVersionNum() int {
	v := c.ParameterStatus("server_version")
	major, rest, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0
	}
	if n < 10 { // 9.6.x
		minor, _, _ := strings.Cut(rest, ".")
		m, _ := strconv.Atoi(minor)
		return n*10000 + m*100
	}
	return n * 10000
}

// registerCatalog registers the types of cat on m, each after the types
// it is made of. A requested type without a codec is an error; a part
// without one is left to be handled as text.
func registerCatalog(m *pgtype.Map, cat []catalogType) error {
	byOID := make(map[uint32]*catalogType, len(cat))
	for i := range cat {
		byOID[cat[i].oid] = &cat[i]
	}
	done := make(map[uint32]bool, len(cat))
	var reg func(t *catalogType, depth int) error
	reg = func(t *catalogType, depth int) error {
		if done[t.oid] || depth > 32 {
			return nil
		}
		done[t.oid] = true
		for _, d := range t.parts() {
			if p := byOID[d]; p != nil {
				if err := reg(p, depth+1); err != nil {
					return err
				}
			}
		}
		err := registerCatalogType(m, *t)
		if err == errNoCodec {
			if !t.requested {
				return nil
			}
			err = fmt.Errorf("pgline: LoadTypes: type %s has no codec in pgline (register one with pgtype.Map.RegisterType)", t.name)
		}
		return err
	}
	for i := range cat {
		if err := reg(&cat[i], 0); err != nil {
			return err
		}
	}
	return nil
}

// parts lists the OIDs of the types t is made of.
func (t *catalogType) parts() []uint32 {
	return append([]uint32{t.elem, t.base, t.sub, t.rng}, t.fields...)
}

// errNoCodec is registerCatalogType's answer for a type it cannot
// register.
var errNoCodec = errors.New("no codec")

func registerCatalogType(m *pgtype.Map, t catalogType) error {
	switch {
	case t.isArray:
		// Registered with its element type, which came first.
		if m.Known(t.oid) {
			return nil
		}
		return errNoCodec
	case pgtype.IsBuiltin(t.oid):
		return nil
	}
	switch t.typtype {
	case "e":
		return m.RegisterEnum(t.name, t.oid, t.array)
	case "d":
		if !m.Known(t.base) {
			return errNoCodec
		}
		return m.RegisterDomain(t.name, t.oid, t.array, t.base)
	case "c":
		return m.RegisterComposite(t.name, t.oid, t.array, t.fields...)
	case "r":
		if !m.Known(t.sub) {
			return errNoCodec
		}
		return m.RegisterRange(t.name, t.oid, t.array, t.sub)
	case "m":
		if !m.Known(t.rng) {
			return errNoCodec
		}
		return m.RegisterMultirange(t.name, t.oid, t.array, t.rng)
	case "b":
		switch t.typname {
		case "hstore", "citext":
			return m.RegisterName(t.typname, t.oid, t.array)
		}
	}
	return errNoCodec
}
