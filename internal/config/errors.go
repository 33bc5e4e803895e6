package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pgline/pgline/internal/dsn"
)

// errPrefix starts every error of Parse.
const errPrefix = "pgline: cannot parse DSN: "

// parseError returns an error with Parse's prefix. What its format and
// arguments may hold is the package doc's rule (Errors).
func parseError(format string, args ...any) error {
	return errors.New(errPrefix + fmt.Sprintf(format, args...))
}

// dsnError gives an error of package dsn, which keeps to the same rule,
// Parse's prefix.
func dsnError(err error) error {
	return errors.New(errPrefix + err.Error())
}

// splitDSN splits conninfo in URL or key=value form into pairs, naming
// only keys Parse knows in its errors.
func splitDSN(conninfo string) ([]dsn.Pair, error) {
	pairs, err := dsn.Split(conninfo, isKnownKey)
	if err != nil {
		if strings.HasPrefix(err.Error(), `missing "=" after key`) {
			// A first word without "=": not key=value, nor a URL pgline takes.
			return nil, parseError("%v (%s)", err, accepted)
		}
		return nil, dsnError(err)
	}
	return pairs, nil
}
