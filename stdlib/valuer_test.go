package stdlib_test

import (
	"database/sql"
	"database/sql/driver"
	"testing"
)

// ptrValuer implements driver.Valuer with a pointer receiver that handles
// a nil receiver.
type ptrValuer struct{ s string }

func (p *ptrValuer) Value() (driver.Value, error) {
	if p == nil {
		return "was-nil", nil
	}
	return p.s, nil
}

// valValuer implements driver.Valuer with a value receiver.
type valValuer struct{ s string }

func (v valValuer) Value() (driver.Value, error) { return v.s, nil }

// database/sql's rule for a nil pointer argument: Value is called on it
// unless the pointed-to type implements driver.Valuer itself (a value
// receiver), in which case it is NULL.
func TestNilPointerValuerArg(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 1)
	for _, tc := range []struct {
		name string
		arg  any
		want sql.NullString
	}{
		{"pointer receiver", (*ptrValuer)(nil), sql.NullString{String: "was-nil", Valid: true}},
		{"value receiver", (*valValuer)(nil), sql.NullString{}},
		{"value receiver, set", &valValuer{"v"}, sql.NullString{String: "v", Valid: true}},
	} {
		var ns sql.NullString
		if err := db.QueryRowContext(ctx, "SELECT $1::text", tc.arg).Scan(&ns); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if ns != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, ns, tc.want)
		}
	}
	// The same through a prepared statement.
	stmt, err := db.PrepareContext(ctx, "SELECT $1::text")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var ns sql.NullString
	if err := stmt.QueryRowContext(ctx, (*ptrValuer)(nil)).Scan(&ns); err != nil || ns.String != "was-nil" {
		t.Errorf("prepared: %+v, %v", ns, err)
	}
}
