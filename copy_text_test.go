package pgline

import (
	"database/sql/driver"
	"strings"
	"testing"
)

// uuidValuer is a driver.Valuer whose value is a UUID string, as
// google/uuid's UUID is.
type uuidValuer [16]byte

func (u uuidValuer) Value() (driver.Value, error) {
	return "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", nil
}

// TestCopyFromTextOnlyValues: COPY FROM accepts the values a query accepts
// for the same column although they only have a text form (a UUID string,
// a driver.Valuer giving one, a numeric string, a string for an int
// column): the column's codec turns the text into the binary form COPY
// writes. Text that is no value of the column's type is a clear error.
func TestCopyFromTextOnlyValues(t *testing.T) {
	ctx := testCtx(t)
	c := connect(t, srv.DSN(""))
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE copy_text (id int, u uuid, n numeric, b bigint[])"); err != nil {
		t.Fatal(err)
	}
	rows := [][]any{
		{"42", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "12.50", "{1,2}"},
		{int64(7), uuidValuer{}, "-0.001", []int64{3}},
	}
	n, err := c.CopyFrom(ctx, Identifier{"copy_text"}, []string{"id", "u", "n", "b"}, CopyFromRows(rows))
	if err != nil || n != 2 {
		t.Fatalf("CopyFrom: %d rows, %v", n, err)
	}
	r, err := c.Query(ctx, "SELECT id::text || ' ' || u::text || ' ' || n::text || ' ' || b::text FROM copy_text ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	got, err := CollectRows(r, RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"7 a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 -0.001 {3}",
		"42 a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 12.50 {1,2}",
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("rows %q, want %q", got, want)
	}
	_, err = c.CopyFrom(ctx, Identifier{"copy_text"}, []string{"id", "u", "n", "b"}, CopyFromRows([][]any{{"forty", nil, nil, nil}}))
	if err == nil || !strings.Contains(err.Error(), `column "id"`) {
		t.Fatalf("a string that is no int: %v", err)
	}
}
