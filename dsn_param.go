package pgline

import pgdsn "github.com/pgline/pgline/internal/dsn"

// SetDSNParam returns dsn with the setting key=value added, in dsn's own
// form: a URL (postgres://...) gains a query parameter, percent-encoded; a
// key=value string gains a pair, quoted when it must be. A key dsn already
// sets is set again, and the last setting wins, as libpq reads them. It
// is how to add a setting to a DSN from the environment, which may be in
// either form:
//
//	pgline.NewPool(ctx, pgline.SetDSNParam(os.Getenv("DATABASE_URL"), "pool_max_conns", "4"))
//
// Appending " key=value" to a URL does not work: ParseConfig refuses a URL
// holding white space. A key=value dsn whose last value would take in the
// new setting (it ends with "key=" or a backslash) is rewritten, its
// settings unchanged.
func SetDSNParam(dsn, key, value string) string {
	return pgdsn.Set(dsn, key, value)
}
