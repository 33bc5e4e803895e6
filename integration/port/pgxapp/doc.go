// Package pgxapp is a small pgx v5 program, a shop's stock, written as a
// pgx user would (app.go). TestPortFromPgx ports app.go to pgline with
// what docs/from-pgx.md says and nothing else, checks that the result is
// package pglineapp's app.go, and runs both against the same server: they
// print the same.
package pgxapp
