package pgline

import (
	"errors"
	"fmt"

	"github.com/pgline/pgline/internal/dsn"
)

// Package dsn splits DSNs and reads the password and service files; this
// file gives its errors ParseConfig's prefix.

// errParsePrefix starts every error of ParseConfig.
const errParsePrefix = "pgline: cannot parse DSN: "

// parseError returns an error with the ParseConfig prefix. Its arguments
// must never be text taken from the DSN or the environment, except names of
// known keys.
func parseError(format string, args ...any) error {
	return errors.New(errParsePrefix + fmt.Sprintf(format, args...))
}

// dsnError gives an error of package dsn, whose text holds nothing from
// the DSN but known keys, ParseConfig's prefix.
func dsnError(err error) error {
	return errors.New(errParsePrefix + err.Error())
}

// splitDSN splits conninfo in URL or key=value form into pairs, naming
// only keys ParseConfig knows in its errors.
func splitDSN(conninfo string) ([]dsn.Pair, error) {
	pairs, err := dsn.Split(conninfo, isKnownKey)
	if err != nil {
		return nil, dsnError(err)
	}
	return pairs, nil
}
