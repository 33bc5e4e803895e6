// Package pglineapp is package pgxapp ported to pgline: its app.go is
// what docs/from-pgx.md makes of pgxapp's, as TestPortFromPgx checks
// (PGLINE_UPDATE_PORT=1 rewrites it). Do not edit app.go by hand: change
// pgxapp or the doc.
package pglineapp
