package pgline

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pgline/pgline/pgtype"
)

// TestConfigTypeMap: a type registered in Config.TypeMap (an enum and its
// array) is encoded and decoded by the connections of that Config, each
// with its own copy of the Map.
func TestConfigTypeMap(t *testing.T) {
	if err := srv.Exec("DROP TYPE IF EXISTS tm_mood; CREATE TYPE tm_mood AS ENUM ('sad', 'ok', 'happy')"); err != nil {
		t.Fatal(err)
	}
	out, err := srv.Query("SELECT oid || ' ' || typarray FROM pg_type WHERE typname = 'tm_mood'")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(out)
	oid, _ := strconv.ParseUint(f[0], 10, 32)
	arr, _ := strconv.ParseUint(f[1], 10, 32)
	m := pgtype.NewMap()
	if err := m.RegisterEnum("tm_mood", uint32(oid), uint32(arr)); err != nil {
		t.Fatal(err)
	}
	c := connectConfig(t, srv.DSN(), func(cfg *Config) { cfg.TypeMap = m })
	ctx := testCtx(t)
	var moods []string
	if err := c.QueryRow(ctx, "SELECT $1::tm_mood[]", []string{"happy", "sad"}).Scan(&moods); err != nil {
		t.Fatal(err)
	}
	if len(moods) != 2 || moods[0] != "happy" || moods[1] != "sad" {
		t.Fatalf("got %q", moods)
	}
	if c.TypeMap() == m || !c.TypeMap().Known(uint32(oid)) {
		t.Fatal("the connection's TypeMap is not its own copy of the Config's")
	}
}
