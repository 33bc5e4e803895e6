package pgline

import (
	"slices"
	"testing"
)

// TestUnregisteredEnumArray: an array of an enum nobody registered scans
// into []string (and []*string, NULL elements nil), as pgx and lib/pq
// give it; a value of an unknown type that is no array is a clear error,
// not a wrong answer.
func TestUnregisteredEnumArray(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN(""))
	if _, err := c.Exec(ctx, "DROP TYPE IF EXISTS mood_arr_test; CREATE TYPE mood_arr_test AS ENUM ('sad', 'ok', 'happy, \"very\"')"); err != nil {
		t.Fatal(err)
	}
	var moods []string
	if err := c.QueryRow(ctx, `SELECT ARRAY['ok', 'happy, "very"', 'sad']::mood_arr_test[]`).Scan(&moods); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ok", `happy, "very"`, "sad"}; !slices.Equal(moods, want) {
		t.Fatalf("got %q, want %q", moods, want)
	}
	var withNull []*string
	if err := c.QueryRow(ctx, `SELECT ARRAY['ok', NULL]::mood_arr_test[]`).Scan(&withNull); err != nil {
		t.Fatal(err)
	}
	if len(withNull) != 2 || withNull[0] == nil || *withNull[0] != "ok" || withNull[1] != nil {
		t.Fatalf("with a NULL: %v", withNull)
	}
	var one []string
	if err := c.QueryRow(ctx, `SELECT 'ok'::mood_arr_test`).Scan(&one); err == nil {
		t.Fatalf("an enum value into []string: %q, want an error", one)
	}
}
