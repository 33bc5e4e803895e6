package integration

import (
	"database/sql"
	"embed"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/postgres"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/lib/pq"
)

//go:embed testdata/migrate/*.sql
var migrateFS embed.FS

// newMigrate returns a golang-migrate instance on db (driver "pgline")
// with the migrations of testdata/migrate, or those of src when not nil.
// Its Close, when the test ends, closes db.
func newMigrate(t *testing.T, db *sql.DB, src fs.FS) *migrate.Migrate {
	t.Helper()
	var fsys fs.FS = migrateFS
	dir := "testdata/migrate"
	if src != nil {
		fsys, dir = src, "."
	}
	source, err := iofs.New(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	drv, err := postgres.WithInstance(db, &postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithInstance("iofs", source, "postgres", drv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// itemRow is one row of items as the migrations leave it.
type itemRow struct {
	SKU, Price, AddedOn string
	Labels              []string
	Pack                sql.NullString
}

func readItems(t *testing.T, db *sql.DB) (cols []string, rows []itemRow) {
	t.Helper()
	ctx := testCtx(t)
	r, err := db.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_name = 'items' ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var c string
		if err := r.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	r.Close()
	if len(cols) < 6 {
		return cols, nil
	}
	r, err = db.QueryContext(ctx, "SELECT sku, price::text, added_on, labels, attrs->>'pack' FROM items ORDER BY sku")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		var it itemRow
		var day sql.NullTime
		var labels pq.StringArray
		if err := r.Scan(&it.SKU, &it.Price, &day, &labels, &it.Pack); err != nil {
			t.Fatal(err)
		}
		it.AddedOn, it.Labels = day.Time.Format("2006-01-02"), labels
		rows = append(rows, it)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return cols, rows
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	db, err := sql.Open("pgline", dsn)
	if err != nil {
		t.Fatal(err)
	}
	// A second DB to look with: m.Close closes db.
	look, err := sql.Open("pgline", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close()
	m := newMigrate(t, db, nil)

	if err := m.Up(); err != nil {
		t.Fatal(err)
	}
	if v, dirty, err := m.Version(); v != 3 || dirty || err != nil {
		t.Fatalf("Version after Up = %d, %v, %v", v, dirty, err)
	}
	allCols := []string{"id", "sku", "price", "added_on", "labels", "attrs"}
	seeded := []itemRow{
		{SKU: "bolt-m6", Price: "0.12", AddedOn: "2024-01-15", Labels: []string{"metal", "small parts"}, Pack: sql.NullString{String: "100", Valid: true}},
		{SKU: "nut-m6", Price: "0.08", AddedOn: "2024-01-16", Labels: []string{"metal"}},
	}
	if cols, rows := readItems(t, look); !reflect.DeepEqual(cols, allCols) || !reflect.DeepEqual(rows, seeded) {
		t.Fatalf("after Up: %v %+v", cols, rows)
	}
	if err := m.Up(); !errors.Is(err, migrate.ErrNoChange) {
		t.Fatalf("second Up: %v, want ErrNoChange", err)
	}

	// One step down: the seed goes; one more: the columns.
	if err := m.Steps(-1); err != nil {
		t.Fatal(err)
	}
	if cols, rows := readItems(t, look); !reflect.DeepEqual(cols, allCols) || len(rows) != 0 {
		t.Fatalf("after Steps(-1): %v %+v", cols, rows)
	}
	if err := m.Migrate(1); err != nil {
		t.Fatal(err)
	}
	if cols, _ := readItems(t, look); !reflect.DeepEqual(cols, allCols[:4]) {
		t.Fatalf("after Migrate(1): %v", cols)
	}
	if err := m.Down(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Version(); !errors.Is(err, migrate.ErrNilVersion) {
		t.Fatalf("Version after Down: %v, want ErrNilVersion", err)
	}
	if cols, _ := readItems(t, look); len(cols) != 0 {
		t.Fatalf("after Down: items has %v", cols)
	}
	if err := m.Up(); err != nil {
		t.Fatal(err)
	}
	if _, rows := readItems(t, look); !reflect.DeepEqual(rows, seeded) {
		t.Fatalf("after Up again: %+v", rows)
	}
}

// TestMigrateFailure: a migration that fails leaves the schema dirty at
// its version, and nothing of itself: golang-migrate sends the whole
// file as one Exec, which pgline sends as one simple Query, which
// PostgreSQL runs as one implicit transaction.
func TestMigrateFailure(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	db, err := sql.Open("pgline", dsn)
	if err != nil {
		t.Fatal(err)
	}
	look, err := sql.Open("pgline", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close()
	up1, _ := migrateFS.ReadFile("testdata/migrate/1_create_items.up.sql")
	down1, _ := migrateFS.ReadFile("testdata/migrate/1_create_items.down.sql")
	m := newMigrate(t, db, fstest.MapFS{
		"1_create_items.up.sql":   {Data: up1},
		"1_create_items.down.sql": {Data: down1},
		"2_bad.up.sql": {Data: []byte(`CREATE TABLE half_done (id int);
INSERT INTO items (sku, price) VALUES ('x', 1);
SELECT 1 / 0;`)},
		"2_bad.down.sql": {Data: []byte(`DROP TABLE half_done;`)},
	})
	err = m.Up()
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("Up with a bad migration: %v", err)
	}
	if v, dirty, err := m.Version(); v != 2 || !dirty || err != nil {
		t.Fatalf("Version after a failed migration = %d, %v, %v; want 2, dirty", v, dirty, err)
	}
	var half bool
	var n int
	if err := look.QueryRowContext(testCtx(t), "SELECT to_regclass('half_done') IS NOT NULL, (SELECT count(*) FROM items)").Scan(&half, &n); err != nil {
		t.Fatal(err)
	}
	if half || n != 0 {
		t.Errorf("the failed migration left something: half_done %v, %d items", half, n)
	}
	// The way out: force the last good version, then go down.
	if err := m.Force(1); err != nil {
		t.Fatal(err)
	}
	if err := m.Down(); err != nil {
		t.Fatal(err)
	}
	if cols, _ := readItems(t, look); len(cols) != 0 {
		t.Errorf("after Force(1) and Down: items has %v", cols)
	}
}

// ecosystem.md: TestEcosystemMigrate
// migrateUp applies the migrations in dir of fsys. golang-migrate's
// postgres driver takes a *sql.DB (migrate.New with a URL would open
// lib/pq); it holds one of its connections until m.Close, and m.Close
// closes it: give it a *sql.DB of its own.
func migrateUp(dsn string, fsys fs.FS, dir string) error {
	db, err := sql.Open("pgline", dsn)
	if err != nil {
		return err
	}
	drv, err := postgres.WithInstance(db, &postgres.Config{})
	if err != nil {
		db.Close()
		return err
	}
	src, err := iofs.New(fsys, dir)
	if err != nil {
		drv.Close()
		return err
	}
	m, err := migrate.NewWithInstance("iofs", src, "postgres", drv)
	if err != nil {
		drv.Close()
		return err
	}
	defer m.Close() // closes db too
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return err
	}
	return nil
}

// ecosystem.md: end

func TestEcosystemMigrate(t *testing.T) {
	t.Parallel()
	db, dsn := openDB(t, 2)
	for range 2 { // the second finds nothing to do
		if err := migrateUp(dsn, migrateFS, "testdata/migrate"); err != nil {
			t.Fatal(err)
		}
	}
	var n, version int
	var dirty bool
	if err := db.QueryRow("SELECT (SELECT count(*) FROM items), version, dirty FROM schema_migrations").Scan(&n, &version, &dirty); err != nil {
		t.Fatal(err)
	}
	if n != 2 || version != 3 || dirty {
		t.Errorf("%d items, version %d, dirty %v", n, version, dirty)
	}

	// m.Close closes the *sql.DB given to postgres.WithInstance, as the
	// snippet says.
	own, err := sql.Open("pgline", dsn)
	if err != nil {
		t.Fatal(err)
	}
	drv, err := postgres.WithInstance(own, &postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := iofs.New(migrateFS, "testdata/migrate")
	m, err := migrate.NewWithInstance("iofs", src, "postgres", drv)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if err := own.Ping(); err == nil || !strings.Contains(err.Error(), "database is closed") {
		t.Errorf("Ping after m.Close: %v, want database is closed", err)
	}
}
