package integration

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed testdata/goose/*.sql
var gooseFS embed.FS

// gooseState reports what the migrations of testdata/goose left: the
// tables, the index, the function's answer and the seeded accounts.
type gooseState struct {
	accounts, index, function bool
	total                     string
	emails                    []string
}

func readGooseState(t *testing.T, db *sql.DB) gooseState {
	t.Helper()
	ctx := testCtx(t)
	var s gooseState
	err := db.QueryRowContext(ctx, `SELECT to_regclass('accounts') IS NOT NULL, to_regclass('accounts_created_at') IS NOT NULL,
		to_regprocedure('account_total()') IS NOT NULL`).Scan(&s.accounts, &s.index, &s.function)
	if err != nil {
		t.Fatal(err)
	}
	if s.function {
		if err := db.QueryRowContext(ctx, "SELECT account_total()::text").Scan(&s.total); err != nil {
			t.Fatal(err)
		}
	}
	if s.accounts {
		rows, err := db.QueryContext(ctx, "SELECT email, tags, meta->>'plan' FROM accounts ORDER BY email")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var email string
			var tags pq.StringArray
			var plan sql.NullString
			if err := rows.Scan(&email, &tags, &plan); err != nil {
				t.Fatal(err)
			}
			s.emails = append(s.emails, email+"|"+strings.Join(tags, ",")+"|"+plan.String)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

var gooseAll = gooseState{accounts: true, index: true, function: true, total: "10.75",
	emails: []string{"a@example.org|vip|gold", "b@example.org||"}}

// TestGoose runs goose's package-level API (the goose command's): it
// needs goose.SetDialect("postgres"), since goose maps driver names to
// dialects and does not know "pgline". It changes goose's globals, so it
// does not run in parallel.
func TestGoose(t *testing.T) {
	db, dsn := openDB(t, 4)
	goose.SetLogger(goose.NopLogger())
	goose.SetBaseFS(gooseFS)
	t.Cleanup(func() { goose.SetBaseFS(nil) })

	// What users meet first: goose.OpenDBWithDriver knows no "pgline".
	if _, err := goose.OpenDBWithDriver("pgline", dsn); err == nil || !strings.Contains(err.Error(), "unknown dialect") {
		t.Fatalf(`OpenDBWithDriver("pgline"): %v, want an unknown dialect`, err)
	}
	if err := goose.SetDialect("postgres"); err != nil {
		t.Fatal(err)
	}
	const dir = "testdata/goose"
	if err := goose.Up(db, dir); err != nil {
		t.Fatal(err)
	}
	if v, err := goose.GetDBVersion(db); v != 3 || err != nil {
		t.Fatalf("version after Up = %d, %v", v, err)
	}
	if got := readGooseState(t, db); !reflect.DeepEqual(got, gooseAll) {
		t.Fatalf("after Up: %+v, want %+v", got, gooseAll)
	}
	// Up again does nothing.
	if err := goose.Up(db, dir); err != nil {
		t.Fatal(err)
	}

	// Down one (the index, outside a transaction), then to 1, then to 0.
	if err := goose.Down(db, dir); err != nil {
		t.Fatal(err)
	}
	want := gooseAll
	want.index = false
	if got := readGooseState(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Down: %+v, want %+v", got, want)
	}
	if err := goose.DownTo(db, dir, 1); err != nil {
		t.Fatal(err)
	}
	if got := readGooseState(t, db); !reflect.DeepEqual(got, gooseState{accounts: true}) {
		t.Fatalf("after DownTo(1): %+v", got)
	}
	if err := goose.DownTo(db, dir, 0); err != nil {
		t.Fatal(err)
	}
	if v, err := goose.GetDBVersion(db); v != 0 || err != nil {
		t.Fatalf("version after DownTo(0) = %d, %v", v, err)
	}
	if got := readGooseState(t, db); !reflect.DeepEqual(got, gooseState{}) {
		t.Fatalf("after DownTo(0): %+v", got)
	}
	// And up to 2 only.
	if err := goose.UpTo(db, dir, 2); err != nil {
		t.Fatal(err)
	}
	want = gooseAll
	want.index = false
	if got := readGooseState(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after UpTo(2): %+v, want %+v", got, want)
	}
}

// TestGooseProvider runs goose's Provider API, which takes the dialect
// and no globals, with a Go migration, a Postgres session lock (advisory
// locks) and a migration that fails.
func TestGooseProvider(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t, 4)
	ctx := testCtx(t)
	fsys, err := fs.Sub(gooseFS, "testdata/goose")
	if err != nil {
		t.Fatal(err)
	}
	// Version 4 in Go: it runs in goose's transaction.
	goMigration := goose.NewGoMigration(4,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE accounts SET balance = balance * $1, tags = $2 WHERE email = $3",
				2, []string{"vip", "doubled"}, "a@example.org")
			return err
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE accounts SET balance = balance / 2, tags = '{vip}' WHERE email = $1", "a@example.org")
			return err
		}},
	)
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithGoMigrations(goMigration), goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
	if err != nil {
		t.Fatal(err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Fatalf("%d migrations applied, want 4", len(results))
	}
	if v, err := p.GetDBVersion(ctx); v != 4 || err != nil {
		t.Fatalf("version = %d, %v", v, err)
	}
	want := gooseAll
	want.total, want.emails = "21.25", []string{"a@example.org|vip,doubled|gold", "b@example.org||"}
	if got := readGooseState(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Up: %+v, want %+v", got, want)
	}
	status, err := p.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range status {
		if s.State != goose.StateApplied || s.AppliedAt.IsZero() {
			t.Errorf("status of %d: %v at %v", s.Source.Version, s.State, s.AppliedAt)
		}
	}
	if _, err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readGooseState(t, db); !reflect.DeepEqual(got, gooseAll) {
		t.Fatalf("after Down: %+v, want %+v", got, gooseAll)
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if got := readGooseState(t, db); !reflect.DeepEqual(got, gooseState{}) {
		t.Fatalf("after DownTo(0): %+v", got)
	}

	// A migration that fails half way leaves nothing of itself: goose
	// runs it in a transaction.
	bad := fstest.MapFS{
		"00001_create_accounts.sql": {Data: mustRead(t, fsys, "00001_create_accounts.sql")},
		"00002_bad.sql": {Data: []byte(`-- +goose Up
CREATE TABLE half_done (id int);
INSERT INTO accounts (email) VALUES ('c@example.org');
INSERT INTO no_such_table VALUES (1);
-- +goose Down
DROP TABLE half_done;
`)},
	}
	pb, err := goose.NewProvider(goose.DialectPostgres, db, bad, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	_, err = pb.Up(ctx)
	var partial *goose.PartialError
	if !errors.As(err, &partial) || len(partial.Applied) != 1 || partial.Failed.Source.Version != 2 {
		t.Fatalf("Up with a bad migration: %v", err)
	}
	if v, err := pb.GetDBVersion(ctx); v != 1 || err != nil {
		t.Fatalf("version after a failed migration = %d, %v", v, err)
	}
	var half bool
	var n int
	if err := db.QueryRowContext(ctx, "SELECT to_regclass('half_done') IS NOT NULL, (SELECT count(*) FROM accounts)").Scan(&half, &n); err != nil {
		t.Fatal(err)
	}
	if half || n != 0 {
		t.Errorf("the failed migration left half_done: %v, %d accounts", half, n)
	}
}

func mustRead(t *testing.T, fsys fs.FS, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ecosystem.md: TestEcosystemGoose
// gooseUp applies the migrations in dir of fsys with goose's
// package-level API.
func gooseUp(db *sql.DB, fsys fs.FS, dir string) error {
	goose.SetBaseFS(fsys)
	// goose maps driver names to dialects and does not know "pgline"
	// (goose.OpenDBWithDriver("pgline", dsn) fails): name the dialect.
	if err := goose.SetDialect("postgres"); err != nil {
		return err
	}
	return goose.Up(db, dir)
}

// gooseProviderUp does the same with goose's Provider, which takes the
// dialect as an argument and keeps no global state.
func gooseProviderUp(ctx context.Context, db *sql.DB, fsys fs.FS) error {
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		return err
	}
	_, err = p.Up(ctx)
	return err
}

// ecosystem.md: end

// TestEcosystemGoose changes goose's globals: it does not run in parallel.
func TestEcosystemGoose(t *testing.T) {
	goose.SetLogger(goose.NopLogger())
	t.Cleanup(func() { goose.SetBaseFS(nil) })
	db, _ := openDB(t, 2)
	if err := gooseUp(db, gooseFS, "testdata/goose"); err != nil {
		t.Fatal(err)
	}
	if got := readGooseState(t, db); !reflect.DeepEqual(got, gooseAll) {
		t.Errorf("after gooseUp: %+v", got)
	}
	db2, _ := openDB(t, 2)
	sub, _ := fs.Sub(gooseFS, "testdata/goose")
	if err := gooseProviderUp(testCtx(t), db2, sub); err != nil {
		t.Fatal(err)
	}
	if got := readGooseState(t, db2); !reflect.DeepEqual(got, gooseAll) {
		t.Errorf("after gooseProviderUp: %+v", got)
	}
}
