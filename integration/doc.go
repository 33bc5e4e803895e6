// Package integration holds tests, and nothing else, that run real
// workloads through the libraries Go programs use with PostgreSQL — sqlx,
// bun, GORM, goose and golang-migrate — over pgline's database/sql driver
// "pgline", against a throwaway server started by pgtest.
//
// # Running
//
// It is a module of its own, so that the root module keeps its short list
// of dependencies. From the repository root:
//
//	integration/run
//
// runs go vet and go test -race on it. Each test creates a database of its
// own on one server shared by the test binary; PGLINE_TEST_DSN names an
// existing server instead (its user must be allowed to create databases).
// Without PostgreSQL's server binaries the tests skip, unless CI is set.
//
// # What each file covers
//
//   - sqlx_test.go: sqlx.BindDriver("pgline", sqlx.DOLLAR), named queries,
//     In, Get/Select into structs, transactions and savepoints, upserts.
//   - bun_test.go: bun with pgdialect: tables from models, relations,
//     arrays and jsonb, RunInTx with nested transactions (savepoints).
//   - gorm_test.go: GORM with gorm.io/driver/postgres and DriverName
//     "pgline": AutoMigrate (numeric to numeric(10,2) included),
//     associations, nested transactions, OnConflict.
//   - goose_test.go, migrate_test.go: migrations up and down, a failing
//     migration, the dialect or database driver settings they need.
//   - valuetypes_test.go: the driver values of common types, and the
//     arguments, through pgline and through pgx's stdlib, side by side.
//   - ecosystem_test.go: the database/sql snippet of docs/ecosystem.md,
//     and TestEcosystemDoc, which checks that the document shows every
//     snippet (the code between "// ecosystem.md: TestName" and
//     "// ecosystem.md: end" lines, each in its library's file) verbatim,
//     with checkDocSnippets, which does the same for any document.
//   - types_test.go: the snippets of docs/types.md (uuid, decimal, JSON,
//     arrays, enums and composites, ranges, time zones), each run by its
//     test against the server, and TestTypesDoc.
//   - port_test.go: TestPortFromPgx ports a pgx program (port/pgxapp)
//     with docs/from-pgx.md's steps alone, checks that the result is
//     port/pglineapp, and that both print the same against one server.
//   - frompgx_test.go: the snippets of docs/from-pgx.md (when PrepareConn
//     runs, Release's reset), and TestFromPgxDoc.
//   - stray_cancel_test.go: TestStrayCancelHitsDescribe, the regression
//     test of a bug these tests found: a CancelRequest meant for one
//     statement failed the Parse/Describe of the next with a bare
//     SQLSTATE 57014.
package integration
