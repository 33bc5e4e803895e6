package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// env is what the cases share: where to connect and the loaded data.
type env struct {
	dsn    string // the server
	rttDSN string // the server through the delay proxy
	// rttConnectDSN is connectDSN through the delay proxy.
	rttConnectDSN string
	// connectDSN is used by the connect workload: a user authenticated
	// with SCRAM-SHA-256 on pgtest, or -dsn as given.
	connectDSN string
	admin      *pgx.Conn // setup connection (never measured)
	sz         sizes
	doc        largeDoc // the LARGE insert document
}

// Table sizes.
const (
	rowsTableSize = 10000 // bench_rows: the largest rows case and point ids
	wideGroups    = 100   // bench_wide: groups of wideGroupRows rows
	wideGroupRows = 40
)

// Large values, by key of bench_large.
var largeValues = []struct {
	key   string
	bytea bool
	size  int
	big   bool // 50 MiB: loaded and read only when sizes.largeBig names it
}{
	{"bytea_4B", true, 4, false},
	{"bytea_5MiB", true, 5 << 20, false},
	{"bytea_50MiB", true, 50 << 20, true},
	{"text_5MiB", false, 5 << 20, false},
	{"text_50MiB", false, 50 << 20, true},
}

// wantLarge says whether the large value key is loaded and read: every
// small one, and the 50 MiB ones sz.largeBig names.
func (sz sizes) wantLarge(key string, big bool) bool {
	if !big {
		return true
	}
	for _, k := range sz.largeBig {
		if k == key {
			return true
		}
	}
	return false
}

// schema creates and loads every table; rows are distinct (derived from
// their id). Values are stored uncompressed (STORAGE EXTERNAL) so reading
// them measures the client, not the server's decompression.
func schema(sz sizes) []string {
	s := []string{
		`DROP TABLE IF EXISTS bench_rows, bench_wide, bench_large, bench_ins_small, bench_ins_medium, bench_ins_large`,
		`CREATE TABLE bench_rows (id int4 PRIMARY KEY, name text NOT NULL, score float8 NOT NULL,
			created timestamptz NOT NULL, hash text NOT NULL, flag bool NOT NULL)`,
		fmt.Sprintf(`INSERT INTO bench_rows SELECT i, 'name-' || i, i * 1.5,
			timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute', md5(i::text), i %% 2 = 0
			FROM generate_series(1, %d) i`, rowsTableSize),
		`CREATE TABLE bench_wide (id int4 PRIMARY KEY, grp int4 NOT NULL, name text, email text, city text,
			country text, zip text, phone text, amount float8, qty int8, active bool,
			created timestamptz, updated timestamptz, note text)`,
		fmt.Sprintf(`INSERT INTO bench_wide SELECT i, (i - 1) / %d, 'customer ' || i, 'user' || i || '@example.com',
			'city ' || (i %% 97), 'country ' || (i %% 13), lpad((i * 7919 %% 100000)::text, 5, '0'),
			'+1-555-' || lpad(i::text, 7, '0'), i * 3.25, i * 11, i %% 3 <> 0,
			timestamptz '2023-06-01 00:00:00+00' + i * interval '1 hour',
			timestamptz '2024-06-01 00:00:00+00' + i * interval '1 hour', 'note ' || md5(i::text)
			FROM generate_series(1, %d) i`, wideGroupRows, wideGroups*wideGroupRows),
		`CREATE INDEX ON bench_wide (grp)`,
		`CREATE TABLE bench_large (k text PRIMARY KEY, b bytea, t text)`,
		`ALTER TABLE bench_large ALTER COLUMN b SET STORAGE EXTERNAL, ALTER COLUMN t SET STORAGE EXTERNAL`,
		`CREATE TABLE bench_ins_small (k int4)`,
		`CREATE TABLE bench_ins_medium (i int4, f float8, b bool, tags text[])`,
		`CREATE TABLE bench_ins_large (url text, words int4, ts timestamptz, meta jsonb, body text[])`,
	}
	for _, v := range largeValues {
		if !sz.wantLarge(v.key, v.big) {
			continue
		}
		// sha512 of distinct numbers: 64 bytes (bytea) or 128 hex
		// characters (text) per step, cut to the exact size. (md5, 16
		// bytes a step, took 6 s of the server's time for 50 MiB here,
		// most of -quick's loading; this takes 2 s.)
		if v.bytea {
			s = append(s, fmt.Sprintf(`INSERT INTO bench_large (k, b) SELECT '%s',
				substring(string_agg(sha512(int4send(i)), ''::bytea ORDER BY i) FROM 1 FOR %d)
				FROM generate_series(1, %d) i`, v.key, v.size, v.size/64+1))
		} else {
			s = append(s, fmt.Sprintf(`INSERT INTO bench_large (k, t) SELECT '%s',
				left(string_agg(encode(sha512(int4send(i)), 'hex'), '' ORDER BY i), %d)
				FROM generate_series(1, %d) i`, v.key, v.size, v.size/128+1))
		}
	}
	// VACUUM as well as ANALYZE: a freshly loaded table has no visibility
	// map and no hint bits, so the first minutes of reads pay for setting
	// them (and autovacuum runs in the middle of the measurements).
	return append(s, `VACUUM (ANALYZE) bench_rows, bench_wide, bench_large, bench_ins_small, bench_ins_medium, bench_ins_large`)
}

// dropSchema removes the tables (used with -dsn, which names a server the
// benchmark does not own).
const dropSchema = `DROP TABLE IF EXISTS bench_rows, bench_wide, bench_large, bench_ins_small, bench_ins_medium, bench_ins_large`

// load creates the tables.
func load(ctx context.Context, e *env) error {
	for _, q := range schema(e.sz) {
		if _, err := e.admin.Exec(ctx, q); err != nil {
			return fmt.Errorf("loading data: %w (in %.60q)", err, q)
		}
	}
	e.doc = newLargeDoc()
	return nil
}
