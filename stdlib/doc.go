// Package stdlib is pgline's database/sql driver, registered as "pgline".
//
// # Opening
//
// Import the package for its side effect and open a DB with a DSN in any
// form pgline.ParseConfig reads (URL, key=value, PG* environment):
//
//	import _ "github.com/pgline/pgline/stdlib"
//
//	db, err := sql.Open("pgline", "postgres://app@db.example/app")
//
// To configure the connections in code, build a pgline.Config and use
// OpenDB (or NewConnector with sql.OpenDB):
//
//	cfg, err := pgline.ParseConfig(dsn)
//	cfg.ApplicationName = "billing"
//	db := stdlib.OpenDB(cfg)
//
// # What it does
//
// Statements use the extended protocol with binary results; each SQL text
// is prepared once per connection and cached (statement_cache_mode in the
// DSN), so a Stmt, and Query/Exec of the same SQL text, reuse one
// server-side statement. Exec without arguments takes the simple protocol
// and may run several statements separated by semicolons; a query returns
// one result set (several statements in one Query are refused by the
// server, SQLSTATE 42601). A connection idle for a second or more is
// pinged before database/sql reuses it, so one whose server session ended
// is replaced instead of failing the next statement.
//
// Values come out as database/sql expects them: int2/int4/int8/oid as
// int64, float4/float8 as float64, bool, bytea as []byte, date and
// timestamps as time.Time (±infinity as the strings "infinity" and
// "-infinity"; timestamptz in UTC), json and jsonb as []byte, and
// everything else (text, numeric, uuid, interval, enums, arrays in their
// text form...) as a string: pgx's stdlib values, but for timestamptz
// (pgx: time.Local) and xml (pgx: []byte).
// They scan into the usual destinations, sql.Null* and sql.RawBytes.
// Arguments are passed to pgline unchanged: any Go value pgline encodes,
// such as []int64 or []string for arrays, works. Parameters are $1, $2...;
// named arguments are refused.
//
// Transactions take sql.TxOptions: the four PostgreSQL isolation levels
// and ReadOnly. A context that ends during a query makes pgline cancel it
// on the server (SQLSTATE 57014); the error wraps ctx.Err() and the
// connection stays usable, or is discarded when the server does not answer.
// Result.LastInsertId is an error: use INSERT ... RETURNING.
//
// # Libraries on top of database/sql
//
// Libraries that choose their SQL dialect by the driver's name need to be
// told that "pgline" is PostgreSQL: sqlx.BindDriver("pgline",
// sqlx.DOLLAR) for sqlx, postgres.Config{DriverName: "pgline"} for GORM's
// gorm.io/driver/postgres, goose.SetDialect("postgres") (or
// goose.NewProvider with goose.DialectPostgres) for goose; bun takes a
// *sql.DB and pgdialect, golang-migrate a *sql.DB through its postgres
// driver's WithInstance. docs/ecosystem.md in the repository has a tested
// snippet for each. Column types report what those libraries read:
// DecimalSize is 65535, 65531 for numeric without a declared precision,
// as with pgx and lib/pq, so that GORM's AutoMigrate changes such a
// column to numeric(p, s).
//
// # The native connection
//
// (*sql.Conn).Raw reaches the *pgline.Conn underneath, for what
// database/sql cannot express:
//
//	err := sqlConn.Raw(func(dc any) error {
//		native := dc.(*stdlib.Conn).Conn()
//		_, err := native.Exec(ctx, "LISTEN jobs")
//		return err
//	})
package stdlib
