package stdlib_test

import (
	"errors"

	"github.com/pgline/pgline"
)

// sqlState returns the SQLSTATE of the *pgline.PgError in err's chain, or "".
func sqlState(err error) string {
	var pgErr *pgline.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
