package integration

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pgline/pgline"
	"github.com/pgline/pgline/pgtype"
	"github.com/shopspring/decimal"
)

// The code between the lines "// types.md: TestName" and
// "// types.md: end" is shown in docs/types.md verbatim (TestTypesDoc
// checks), as the snippet of the test named, which runs it against the
// server and checks what the document says of it.

// TestTypesDoc checks that docs/types.md shows each snippet of this file
// verbatim (see checkDocSnippets).
func TestTypesDoc(t *testing.T) {
	t.Parallel()
	if tests := checkDocSnippets(t, "types.md"); len(tests) != 7 {
		t.Errorf("found %d snippets for docs/types.md in the test files, want 7: %v", len(tests), tests)
	}
}

// typesConn connects to a new database of the test's own and runs schema
// there; the connection is closed when the test ends.
func typesConn(t *testing.T, schema string) (context.Context, *pgline.Conn) {
	t.Helper()
	ctx := testCtx(t)
	conn, err := pgline.Connect(ctx, newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if schema != "" {
		if _, err := conn.Exec(ctx, schema); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, conn
}

// types.md: TestTypesUUID
// CREATE TABLE events (id uuid PRIMARY KEY, parent uuid)

// addEvent stores an event; a nil parent is stored as NULL.
func addEvent(ctx context.Context, conn *pgline.Conn, id uuid.UUID, parent *uuid.UUID) error {
	_, err := conn.Exec(ctx, "INSERT INTO events (id, parent) VALUES ($1, $2)", id, parent)
	return err
}

// eventParent reads an event's parent, which may be NULL: into a
// *uuid.UUID (nil for NULL) and into a uuid.NullUUID (Valid false).
func eventParent(ctx context.Context, conn *pgline.Conn, id uuid.UUID) (*uuid.UUID, uuid.NullUUID, error) {
	var parent *uuid.UUID
	var nullable uuid.NullUUID
	err := conn.QueryRow(ctx, "SELECT parent, parent FROM events WHERE id = $1", id).Scan(&parent, &nullable)
	return parent, nullable, err
}

// uuidForms sends a uuid as a [16]byte and as its text, and reads each
// back as the other.
func uuidForms(ctx context.Context, conn *pgline.Conn, raw [16]byte, text string) (string, [16]byte, error) {
	var gotText string
	var gotRaw [16]byte
	err := conn.QueryRow(ctx, "SELECT $1::uuid, $2::uuid", raw, text).Scan(&gotText, &gotRaw)
	return gotText, gotRaw, err
}

// types.md: end

func TestTypesUUID(t *testing.T) {
	t.Parallel()
	ctx, conn := typesConn(t, "CREATE TABLE events (id uuid PRIMARY KEY, parent uuid)")
	root := uuid.MustParse("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
	child := uuid.New()
	if err := addEvent(ctx, conn, root, nil); err != nil {
		t.Fatal(err)
	}
	if err := addEvent(ctx, conn, child, &root); err != nil {
		t.Fatal(err)
	}
	// The server holds the uuid the Go value is.
	var text string
	if err := conn.QueryRow(ctx, "SELECT parent::text FROM events WHERE id = $1", child).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != root.String() {
		t.Errorf("parent::text = %q, want %q", text, root)
	}

	p, np, err := eventParent(ctx, conn, child)
	if err != nil {
		t.Fatal(err)
	}
	if p == nil || *p != root || !np.Valid || np.UUID != root {
		t.Errorf("child's parent: %v, %+v; want %v twice", p, np, root)
	}
	p, np, err = eventParent(ctx, conn, root)
	if err != nil {
		t.Fatal(err)
	}
	if p != nil || np.Valid {
		t.Errorf("root's NULL parent: %v, %+v; want nil and Valid false", p, np)
	}

	// A plain uuid.UUID takes NULL without an error and keeps its value:
	// uuid.UUID.Scan returns nil for nil, before pgline sees anything.
	// (docs/types.md says so.)
	kept := child
	if err := conn.QueryRow(ctx, "SELECT parent FROM events WHERE id = $1", root).Scan(&kept); err != nil {
		t.Fatalf("NULL into a uuid.UUID: %v", err)
	}
	if kept != child {
		t.Errorf("NULL into a uuid.UUID set it to %v, want it kept (%v)", kept, child)
	}

	gotText, gotRaw, err := uuidForms(ctx, conn, [16]byte(root), child.String())
	if err != nil {
		t.Fatal(err)
	}
	if gotText != root.String() || gotRaw != [16]byte(child) {
		t.Errorf("uuidForms: %q, %x; want %q, %x", gotText, gotRaw, root, [16]byte(child))
	}
}

// types.md: TestTypesDecimal
// CREATE TABLE items (name text PRIMARY KEY, price numeric(12,2))

// setPrice stores a decimal.Decimal, which is a driver.Valuer (its exact
// text goes to the server); a NULL price is a decimal.NullDecimal.
func setPrice(ctx context.Context, conn *pgline.Conn, name string, price decimal.NullDecimal) error {
	_, err := conn.Exec(ctx, "INSERT INTO items (name, price) VALUES ($1, $2)", name, price)
	return err
}

// itemPrice reads a price that may be NULL: a plain decimal.Decimal
// would make NULL an error.
func itemPrice(ctx context.Context, conn *pgline.Conn, name string) (decimal.NullDecimal, error) {
	var price decimal.NullDecimal
	err := conn.QueryRow(ctx, "SELECT price FROM items WHERE name = $1", name).Scan(&price)
	return price, err
}

// numericForms reads a numeric without a third-party type: as pgline's
// pgtype.Numeric (which keeps the scale), a *big.Rat and a string. Each
// works as an argument too.
func numericForms(ctx context.Context, conn *pgline.Conn, v string) (pgtype.Numeric, *big.Rat, string, error) {
	var n pgtype.Numeric
	r := new(big.Rat)
	var s string
	err := conn.QueryRow(ctx, "SELECT $1::numeric, $1::numeric, $1::numeric", v).Scan(&n, r, &s)
	return n, r, s, err
}

// types.md: end

func TestTypesDecimal(t *testing.T) {
	t.Parallel()
	ctx, conn := typesConn(t, "CREATE TABLE items (name text PRIMARY KEY, price numeric(12,2))")
	tea := decimal.RequireFromString("1234567890.15")
	if err := setPrice(ctx, conn, "tea", decimal.NewNullDecimal(tea)); err != nil {
		t.Fatal(err)
	}
	if err := setPrice(ctx, conn, "gift", decimal.NullDecimal{}); err != nil {
		t.Fatal(err)
	}
	// A plain decimal.Decimal works as an argument and a destination.
	var d decimal.Decimal
	if err := conn.QueryRow(ctx, "SELECT $1::numeric(12,2) + 0.01", tea).Scan(&d); err != nil {
		t.Fatal(err)
	}
	if want := decimal.RequireFromString("1234567890.16"); !d.Equal(want) {
		t.Errorf("decimal.Decimal round trip: %s, want %s", d, want)
	}

	got, err := itemPrice(ctx, conn, "tea")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Valid || !got.Decimal.Equal(tea) || got.Decimal.String() != "1234567890.15" {
		t.Errorf("tea's price: %+v, want %s", got, tea)
	}
	got, err = itemPrice(ctx, conn, "gift")
	if err != nil {
		t.Fatal(err)
	}
	if got.Valid {
		t.Errorf("gift's NULL price: %+v, want Valid false", got)
	}
	// A NULL numeric into a plain decimal.Decimal is an error (decimal's
	// Scan's).
	err = conn.QueryRow(ctx, "SELECT price FROM items WHERE name = 'gift'").Scan(&d)
	if err == nil || !strings.Contains(err.Error(), "cannot scan numeric into *decimal.Decimal: can't scan NULL into a Decimal, use NullDecimal or *Decimal") {
		t.Errorf("NULL into a decimal.Decimal: err = %v, want decimal's NULL error", err)
	} else {
		t.Logf("NULL into a decimal.Decimal: %v", err)
	}

	var pd *decimal.Decimal
	if err := conn.QueryRow(ctx, "SELECT price FROM items WHERE name = 'gift'").Scan(&pd); err != nil || pd != nil {
		t.Errorf("NULL into a *decimal.Decimal: %v, %v; want nil", pd, err)
	}

	n, r, s, err := numericForms(ctx, conn, "-12.50")
	if err != nil {
		t.Fatal(err)
	}
	if n.String() != "-12.50" || n.Exp != -2 || r.RatString() != "-25/2" || s != "-12.50" {
		t.Errorf("numericForms(-12.50) = %s (exp %d), %s, %q", n, n.Exp, r.RatString(), s)
	}
	// pgtype.Numeric and *big.Rat as arguments.
	var sum string
	if err := conn.QueryRow(ctx, "SELECT ($1::numeric + $2::numeric)::text", n, big.NewRat(1, 8)).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != "-12.375" {
		t.Errorf("-12.50 + 1/8 = %s, want -12.375", sum)
	}
	// A *big.Rat with no finite decimal form is an error.
	if _, err := conn.Exec(ctx, "SELECT $1::numeric", big.NewRat(1, 3)); err == nil {
		t.Error("1/3 as a numeric argument: no error")
	}
}

// types.md: TestTypesJSON
// CREATE TABLE prefs (user_id int8 PRIMARY KEY, settings jsonb)

type Settings struct {
	Theme string   `json:"theme"`
	Langs []string `json:"langs"`
}

// savePrefs stores s, which pgline encodes with json.Marshal.
func savePrefs(ctx context.Context, conn *pgline.Conn, userID int64, s Settings) error {
	_, err := conn.Exec(ctx, "INSERT INTO prefs (user_id, settings) VALUES ($1, $2)", userID, s)
	return err
}

// patchPrefs merges a JSON object into the settings: a json.RawMessage
// (or a []byte or string) is sent as the document it holds.
func patchPrefs(ctx context.Context, conn *pgline.Conn, userID int64, patch json.RawMessage) error {
	_, err := conn.Exec(ctx, "UPDATE prefs SET settings = settings || $2 WHERE user_id = $1", userID, patch)
	return err
}

// loadPrefs reads the settings into the struct and into a map (both with
// json.Unmarshal), and as the JSON text.
func loadPrefs(ctx context.Context, conn *pgline.Conn, userID int64) (Settings, map[string]any, json.RawMessage, error) {
	var s Settings
	var m map[string]any
	var raw json.RawMessage
	err := conn.QueryRow(ctx, "SELECT settings, settings, settings FROM prefs WHERE user_id = $1", userID).Scan(&s, &m, &raw)
	return s, m, raw, err
}

// types.md: end

func TestTypesJSON(t *testing.T) {
	t.Parallel()
	ctx, conn := typesConn(t, "CREATE TABLE prefs (user_id int8 PRIMARY KEY, settings jsonb)")
	if err := savePrefs(ctx, conn, 7, Settings{Theme: "dark", Langs: []string{"en", "fr"}}); err != nil {
		t.Fatal(err)
	}
	if err := patchPrefs(ctx, conn, 7, json.RawMessage(`{"theme": "light", "size": 12}`)); err != nil {
		t.Fatal(err)
	}
	s, m, raw, err := loadPrefs(ctx, conn, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, Settings{Theme: "light", Langs: []string{"en", "fr"}}) {
		t.Errorf("struct: %+v", s)
	}
	want := map[string]any{"theme": "light", "langs": []any{"en", "fr"}, "size": float64(12)}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("map: %#v, want %#v", m, want)
	}
	// jsonb's text is the server's: keys sorted by length then bytes,
	// one space after ':' and ','.
	if string(raw) != `{"size": 12, "langs": ["en", "fr"], "theme": "light"}` {
		t.Errorf("raw: %s", raw)
	}
	// A string works as an argument and a destination too, as the JSON text.
	if err := patchPrefs(ctx, conn, 7, json.RawMessage(`{"size": 14}`)); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := conn.QueryRow(ctx, "SELECT settings || $1 FROM prefs", `{"theme": "dark"}`).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != `{"size": 14, "langs": ["en", "fr"], "theme": "dark"}` {
		t.Errorf("string: %s", text)
	}
	// json (not jsonb) keeps the document's text as sent.
	var kept json.RawMessage
	doc := json.RawMessage(`{"z":1,  "a":[ ]}`)
	if err := conn.QueryRow(ctx, "SELECT $1::json", doc).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if string(kept) != string(doc) {
		t.Errorf("json round trip: %s, want %s", kept, doc)
	}
}

// types.md: TestTypesArrays
// CREATE TABLE posts (id int8 PRIMARY KEY, tags text[])

// postTags reads the tags of the posts whose id is in ids: a []int64
// argument is an int8[], which = ANY($1) searches.
func postTags(ctx context.Context, conn *pgline.Conn, ids []int64) (map[int64][]*string, error) {
	rows, err := conn.Query(ctx, "SELECT id, tags FROM posts WHERE id = ANY($1)", ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tags := map[int64][]*string{}
	for rows.Next() {
		var id int64
		var t []*string // a NULL element is a nil *string; a []string would be an error
		if err := rows.Scan(&id, &t); err != nil {
			return nil, err
		}
		tags[id] = t
	}
	return tags, rows.Err()
}

// grid sends a two-dimensional array, as nested slices (rectangular),
// and reads it back with the dimensions the server sees.
func grid(ctx context.Context, conn *pgline.Conn, m [][]int32) (string, [][]int32, error) {
	var dims string
	var back [][]int32
	err := conn.QueryRow(ctx, "SELECT array_dims($1::int4[]), $1::int4[]", m).Scan(&dims, &back)
	return dims, back, err
}

// types.md: end

func TestTypesArrays(t *testing.T) {
	t.Parallel()
	ctx, conn := typesConn(t, "CREATE TABLE posts (id int8 PRIMARY KEY, tags text[])")
	for _, p := range []struct {
		id   int64
		tags []*string
	}{{1, []*string{ptr("go"), ptr("sql")}}, {2, []*string{ptr("a b"), nil, ptr(`"q"`)}}, {3, nil}, {4, []*string{}}} {
		if _, err := conn.Exec(ctx, "INSERT INTO posts (id, tags) VALUES ($1, $2)", p.id, p.tags); err != nil {
			t.Fatal(err)
		}
	}
	got, err := postTags(ctx, conn, []int64{2, 3, 4, 99})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64][]*string{2: {ptr("a b"), nil, ptr(`"q"`)}, 3: nil, 4: {}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("postTags: %s, want %s", showTags(got), showTags(want))
	}
	// A []string argument and destination; NULL elements into []string
	// are an error.
	var tags []string
	if err := conn.QueryRow(ctx, "SELECT tags FROM posts WHERE tags @> $1", []string{"sql"}).Scan(&tags); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tags, []string{"go", "sql"}) {
		t.Errorf("tags @> {sql}: %q", tags)
	}
	err = conn.QueryRow(ctx, "SELECT tags FROM posts WHERE id = 2").Scan(&tags)
	if !errors.Is(err, pgtype.ErrNull) {
		t.Errorf("{a b,NULL,q} into []string: err = %v, want one matching pgtype.ErrNull", err)
	}
	var nullable []sql.NullString
	if err := conn.QueryRow(ctx, "SELECT tags FROM posts WHERE id = 2").Scan(&nullable); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(nullable, []sql.NullString{{String: "a b", Valid: true}, {}, {String: `"q"`, Valid: true}}) {
		t.Errorf("{a b,NULL,q} into []sql.NullString: %+v", nullable)
	}

	dims, back, err := grid(ctx, conn, [][]int32{{1, 2, 3}, {4, 5, 6}})
	if err != nil {
		t.Fatal(err)
	}
	if dims != "[1:2][1:3]" || !reflect.DeepEqual(back, [][]int32{{1, 2, 3}, {4, 5, 6}}) {
		t.Errorf("grid: %s, %v", dims, back)
	}
	// A ragged one is an error.
	if _, err := conn.Exec(ctx, "SELECT $1::int4[]", [][]int32{{1, 2}, {3}}); err == nil {
		t.Error("a ragged [][]int32 argument: no error")
	}
}

func ptr[T any](v T) *T { return &v }

func showTags(m map[int64][]*string) string {
	var b strings.Builder
	for id, tags := range m {
		fmt.Fprintf(&b, " %d:", id)
		if tags == nil {
			b.WriteString("nil")
		}
		for _, s := range tags {
			if s == nil {
				b.WriteString("[NULL]")
			} else {
				b.WriteString("[" + *s + "]")
			}
		}
	}
	return b.String()
}

// types.md: TestTypesEnumComposite
const petSchema = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE pet AS (name text, mood mood, age int4);
CREATE TABLE owners (name text PRIMARY KEY, pets pet[])`

type Pet struct { // the fields of pet, in order
	Name string
	Mood string
	Age  int32
}

// openPetPool migrates the database, then opens a Pool whose connections
// know mood and pet. The types must exist before the Pool connects:
// LoadTypes fails for a type that does not, and so would every
// connection of the Pool.
func openPetPool(ctx context.Context, dsn string) (*pgline.Pool, error) {
	conn, err := pgline.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	_, err = conn.Exec(ctx, petSchema)
	conn.Close()
	if err != nil {
		return nil, err
	}
	cfg, err := pgline.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgline.Conn) error {
		// pet[] comes with pet, and pet with mood.
		return c.LoadTypes(ctx, []string{"mood", "pet"})
	}
	return pgline.NewPoolConfig(ctx, cfg)
}

// addOwner stores an owner's pets: a []Pet for a pet[].
func addOwner(ctx context.Context, pool *pgline.Pool, name string, pets []Pet) error {
	_, err := pool.Exec(ctx, "INSERT INTO owners (name, pets) VALUES ($1, $2)", name, pets)
	return err
}

// happiest reads the happiest pet of all: a composite into a struct, an
// enum into a string.
func happiest(ctx context.Context, pool *pgline.Pool) (Pet, string, error) {
	var p Pet
	var mood string
	err := pool.QueryRow(ctx, `SELECT p, (p).mood FROM owners, unnest(pets) AS p
		ORDER BY (p).mood DESC, (p).name LIMIT 1`).Scan(&p, &mood)
	return p, mood, err
}

// types.md: end

func TestTypesEnumComposite(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	dsn := newDatabase(t)

	// The other order: a Pool that loads types not yet created has no
	// connection to give.
	cfg, err := pgline.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgline.Conn) error {
		return c.LoadTypes(ctx, []string{"mood", "pet"})
	}
	early, err := pgline.NewPoolConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	shortCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = early.Exec(shortCtx, petSchema)
	cancel()
	early.Close()
	if err == nil || !strings.Contains(err.Error(), `type "mood" does not exist`) {
		t.Fatalf("migrating through a Pool that loads the types: err = %v, want LoadTypes' error", err)
	}

	pool, err := openPetPool(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := addOwner(ctx, pool, "ann", []Pet{{"Tom", "ok", 3}, {"Rex", "happy", 5}}); err != nil {
		t.Fatal(err)
	}
	if err := addOwner(ctx, pool, "bob", []Pet{{"Kit", "happy", 1}, {"Ugo", "sad", 9}}); err != nil {
		t.Fatal(err)
	}
	p, mood, err := happiest(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if p != (Pet{"Kit", "happy", 1}) || mood != "happy" {
		t.Errorf("happiest: %+v, %q; want {Kit happy 1}, happy", p, mood)
	}
	// What was stored, in the server's text.
	var text string
	if err := pool.QueryRow(ctx, "SELECT pets::text FROM owners WHERE name = 'ann'").Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != `{"(Tom,ok,3)","(Rex,happy,5)"}` {
		t.Errorf("ann's pets::text = %s", text)
	}
	// An enum argument is checked by the server.
	_, err = pool.Exec(ctx, "SELECT $1::mood", "grumpy")
	var pgErr *pgline.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22P02" {
		t.Errorf("'grumpy'::mood: err = %v, want SQLSTATE 22P02", err)
	}

	// On a Conn without LoadTypes an enum is text, which scans into a
	// string, and a composite is not known: a struct destination is an
	// error. After LoadTypes it is not.
	conn, err := pgline.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRow(ctx, "SELECT 'sad'::mood").Scan(&mood); err != nil || mood != "sad" {
		t.Errorf("an unregistered enum into a string: %q, %v", mood, err)
	}
	_, err = conn.Exec(ctx, "SELECT $1::mood", "grumpy")
	if !errors.As(err, &pgErr) || pgErr.Code != "22P02" {
		t.Errorf("'grumpy'::mood, unregistered: err = %v, want SQLSTATE 22P02", err)
	}
	if err := conn.QueryRow(ctx, "SELECT ROW('Al', 'ok', 2)::pet").Scan(&p); err == nil {
		t.Errorf("an unregistered composite into a struct: no error (%+v)", p)
	}
	if err := conn.LoadTypes(ctx, []string{"pet"}); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT ROW('Al', 'ok', 2)::pet").Scan(&p); err != nil || p != (Pet{"Al", "ok", 2}) {
		t.Errorf("after LoadTypes: %+v, %v", p, err)
	}
}

// types.md: TestTypesRanges
// CREATE TABLE bookings (room int4, during tstzrange)

// book stores a booking from start until end: [start, end).
func book(ctx context.Context, conn *pgline.Conn, room int32, start, end time.Time) error {
	during := pgtype.Range[time.Time]{
		Lower: start, LowerType: pgtype.Inclusive,
		Upper: end, UpperType: pgtype.Exclusive,
	}
	_, err := conn.Exec(ctx, "INSERT INTO bookings (room, during) VALUES ($1, $2)", room, during)
	return err
}

// bookingAt reads the booking of room at t.
func bookingAt(ctx context.Context, conn *pgline.Conn, room int32, t time.Time) (pgtype.Range[time.Time], error) {
	var during pgtype.Range[time.Time]
	err := conn.QueryRow(ctx, "SELECT during FROM bookings WHERE room = $1 AND during @> $2::timestamptz", room, t).Scan(&during)
	return during, err
}

// seats sends an int4range and reads it back as the server has it:
// int4range [1,5] is [1,6), 'empty' has Empty set, an Unbounded side has
// the zero value.
func seats(ctx context.Context, conn *pgline.Conn, r pgtype.Range[int32]) (pgtype.Range[int32], error) {
	var got pgtype.Range[int32]
	err := conn.QueryRow(ctx, "SELECT $1::int4range", r).Scan(&got)
	return got, err
}

// types.md: end

func TestTypesRanges(t *testing.T) {
	t.Parallel()
	ctx, conn := typesConn(t, "CREATE TABLE bookings (room int4, during tstzrange)")
	nine := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	if err := book(ctx, conn, 1, nine, nine.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	during, err := bookingAt(ctx, conn, 1, nine.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !during.Lower.Equal(nine) || !during.Upper.Equal(nine.Add(2*time.Hour)) ||
		during.LowerType != pgtype.Inclusive || during.UpperType != pgtype.Exclusive || during.Empty {
		t.Errorf("booking: %+v", during)
	}
	// The upper bound is exclusive.
	if _, err := bookingAt(ctx, conn, 1, nine.Add(2*time.Hour)); !errors.Is(err, pgline.ErrNoRows) {
		t.Errorf("at 11:00: err = %v, want ErrNoRows", err)
	}
	var text string
	if err := conn.QueryRow(ctx, "SELECT during::text FROM bookings").Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != `["2025-03-10 09:00:00+00","2025-03-10 11:00:00+00")` {
		t.Errorf("during::text = %s", text)
	}

	for _, tc := range []struct {
		in, want pgtype.Range[int32]
		text     string
	}{
		{pgtype.Range[int32]{Lower: 1, Upper: 5, LowerType: pgtype.Inclusive, UpperType: pgtype.Inclusive},
			pgtype.Range[int32]{Lower: 1, Upper: 6, LowerType: pgtype.Inclusive, UpperType: pgtype.Exclusive}, "[1,6)"},
		{pgtype.Range[int32]{Lower: 3, LowerType: pgtype.Inclusive, UpperType: pgtype.Unbounded},
			pgtype.Range[int32]{Lower: 3, LowerType: pgtype.Inclusive, UpperType: pgtype.Unbounded}, "[3,)"},
		{pgtype.Range[int32]{Empty: true}, pgtype.Range[int32]{Empty: true}, "empty"},
		{pgtype.Range[int32]{Lower: 4, Upper: 4, LowerType: pgtype.Inclusive, UpperType: pgtype.Exclusive},
			pgtype.Range[int32]{Empty: true}, "empty"},
	} {
		got, err := seats(ctx, conn, tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("seats(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
		if err := conn.QueryRow(ctx, "SELECT $1::int4range::text", tc.in).Scan(&text); err != nil || text != tc.text {
			t.Errorf("%+v::text = %q, %v; want %q", tc.in, text, err, tc.text)
		}
	}
	// A bound type left zero is an error.
	if _, err := seats(ctx, conn, pgtype.Range[int32]{Lower: 1, Upper: 2}); err == nil {
		t.Error("a Range with zero bound types: no error")
	}
}

// types.md: TestTypesTimeZones
// CREATE TABLE logins (at timestamptz, wall timestamp)

// addLogin stores t twice: its instant as a timestamptz, its wall clock
// (in t's location) as a timestamp.
func addLogin(ctx context.Context, conn *pgline.Conn, t time.Time) error {
	_, err := conn.Exec(ctx, "INSERT INTO logins (at, wall) VALUES ($1, $2)", t, t)
	return err
}

// lastLogin reads them back, both as time.Time in UTC, and the server's
// text of the timestamptz, which is in the session's TimeZone.
func lastLogin(ctx context.Context, conn *pgline.Conn) (at, wall time.Time, text string, err error) {
	err = conn.QueryRow(ctx, "SELECT at, wall, at::text FROM logins").Scan(&at, &wall, &text)
	return at, wall, text, err
}

// types.md: end

func TestTypesTimeZones(t *testing.T) {
	t.Parallel()
	ctx, conn := typesConn(t, `CREATE TABLE logins (at timestamptz, wall timestamp);
		SET TimeZone = 'America/New_York'`)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip(err) // no time zone database
	}
	// 09:00 in Tokyo is 00:00 UTC, 20:00 the day before in New York.
	login := time.Date(2025, 6, 2, 9, 0, 0, 0, tokyo)
	if err := addLogin(ctx, conn, login); err != nil {
		t.Fatal(err)
	}
	at, wall, text, err := lastLogin(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if !at.Equal(login) || at.Location() != time.UTC || at != time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC) {
		t.Errorf("timestamptz: %v (%v), want %v in UTC", at, at.Location(), login)
	}
	if wall != time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC) {
		t.Errorf("timestamp: %v, want Tokyo's wall clock 09:00 read as UTC", wall)
	}
	if text != "2025-06-01 20:00:00-04" {
		t.Errorf("at::text = %q, want New York's 2025-06-01 20:00:00-04", text)
	}
	// The server's text of the timestamp is the wall clock, whatever the
	// TimeZone.
	if err := conn.QueryRow(ctx, "SELECT wall::text FROM logins").Scan(&text); err != nil || text != "2025-06-02 09:00:00" {
		t.Errorf("wall::text = %q, %v", text, err)
	}

	// Under other TimeZones the time.Time values are the same; the server's
	// text changes.
	for _, tc := range []struct{ zone, text string }{
		{"UTC", "2025-06-02 00:00:00+00"},
		{"Asia/Kolkata", "2025-06-02 05:30:00+05:30"},
	} {
		if _, err := conn.Exec(ctx, "SET TimeZone = '"+tc.zone+"'"); err != nil {
			t.Fatal(err)
		}
		at2, wall2, text, err := lastLogin(ctx, conn)
		if err != nil {
			t.Fatal(err)
		}
		if at2 != at || wall2 != wall || text != tc.text {
			t.Errorf("TimeZone %s: %v, %v, %q; want %v, %v, %q", tc.zone, at2, wall2, text, at, wall, tc.text)
		}
	}

	if _, err := conn.Exec(ctx, "SET TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	// A timestamptz scanned into a string is formatted by pgline, in UTC,
	// not in the TimeZone.
	if err := conn.QueryRow(ctx, "SELECT at FROM logins").Scan(&text); err != nil || text != "2025-06-02 00:00:00+00" {
		t.Errorf("timestamptz into a string: %q, %v; want 2025-06-02 00:00:00+00", text, err)
	}
	// Text without an offset is read by the server in the TimeZone: the
	// same string is another instant than in UTC.
	var parsed time.Time
	if err := conn.QueryRow(ctx, "SELECT $1::timestamptz", "2025-06-02 09:00:00").Scan(&parsed); err != nil {
		t.Fatal(err)
	}
	if parsed != time.Date(2025, 6, 2, 13, 0, 0, 0, time.UTC) {
		t.Errorf("'2025-06-02 09:00:00' as timestamptz in New York: %v, want 13:00 UTC", parsed)
	}
	// A date is midnight UTC.
	if err := conn.QueryRow(ctx, "SELECT '2025-06-02'::date").Scan(&parsed); err != nil {
		t.Fatal(err)
	}
	if parsed != time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC) {
		t.Errorf("date in New York: %v, want midnight UTC", parsed)
	}
	// So does a conversion between timestamp and timestamptz.
	if err := conn.QueryRow(ctx, "SELECT wall::timestamptz FROM logins").Scan(&parsed); err != nil {
		t.Fatal(err)
	}
	if parsed != time.Date(2025, 6, 2, 13, 0, 0, 0, time.UTC) {
		t.Errorf("wall::timestamptz in New York: %v, want 13:00 UTC", parsed)
	}
}
