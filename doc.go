// Package pgline is a PostgreSQL driver built for speed on the wire:
// statements from many goroutines are pipelined on one connection and
// multiplexed over a few, every backend message is parsed once, large
// values stream with bounded memory, and values travel in binary.
//
// # Connecting
//
// Connect takes a DSN in URL form (postgres://user:pass@host:5432/db?sslmode=verify-full)
// or key=value form (host=/var/run/postgresql dbname=app), read as libpq
// reads it, with the PG* environment variables and ~/.pgpass filling in
// what it leaves out. Host lists, target_session_attrs, load_balance_hosts,
// every sslmode, client certificates, direct TLS (sslnegotiation=direct,
// PostgreSQL 17+), SCRAM-SHA-256 with channel binding and require_auth
// are supported. ParseConfig gives a Config to adjust
// before ConnectConfig (a Tracer, a TypeMap, OnNotice).
//
// # Queries
//
// Query, QueryRow and Exec take $1, $2, ... placeholders. Each SQL text is
// prepared and described once per connection, then every run is one
// round trip. statement_cache_mode chooses how: auto (the default) is
// prepare, or describe behind a transaction pooler; prepare keeps named
// prepared statements; describe caches descriptions only and parses the
// unnamed statement with each run (one round trip still); none describes
// each run. A cached statement the server refuses as changed (its table
// altered, or a search_path under which its text has other result types:
// "cached plan must not change result type") is dropped and prepared
// again; outside a transaction it is also run again, inside one the error
// has aborted the transaction, whose retry prepares it anew. A text's
// parameter and result types depend on search_path, which the server
// does not report: a statement that may change it (SET [LOCAL]
// search_path, SET SCHEMA, SET ROLE, SET SESSION AUTHORIZATION, RESET
// ALL, DISCARD ALL, set_config whose setting is 'search_path' or not a
// constant, a DO block whose code mentions them) drops every cached
// statement, so that the statements after it are described under the
// search_path they run with (a date parameter cached under another never
// cuts a timestamp argument). Reading it is not changing it: SHOW search_path,
// current_setting('search_path'), set_config('app.user_id', $1, false)
// or a string that names it change nothing. A statement described
// before another goroutine's change was queued was never sent: it is
// described again and sent, a batch too. In a transaction, the
// statements after a change are described for each run (one more round
// trip) and not cached, as SET LOCAL ends with the transaction; and a
// batch whose statement follows such a statement in the same batch
// fails before it is sent (send the SET first). Functions that change
// search_path when called are not seen. One that fails the server's
// analysis (SQLSTATE class 42, such as a column compared with $1 that
// changed type) is dropped, not run again. An application's DEALLOCATE
// ALL or DISCARD ALL (or DEALLOCATE of a name of pgline's) drops every
// cached statement and closes it on the server, where it may still be
// prepared (the statement may fail); a DEALLOCATE of the application's
// own statement, or a string that says "discard all", drops nothing.
// In describe mode a column that changed to a type pgline reads as text
// fails the run that meets it, never handing out its binary bytes; the
// next run reads it. Results come in binary for every type
// package pgtype decodes; Scan fills typed Go variables through scan plans
// cached per column. Server errors are *PgError values with every field
// and the SQLSTATE. NamedArgs (or StrictNamedArgs) as the only argument
// fills @name placeholders instead: they are rewritten to $n outside
// strings, quoted identifiers and comments. ErrNoRows satisfies
// errors.Is(err, sql.ErrNoRows).
//
// # Rows into Go values
//
// CollectRows, CollectOneRow, CollectExactlyOneRow, AppendRows and
// ForEachRow read a result with a row function: RowTo[T] for one column,
// RowToStructByName[T] (fields matched to columns by db tag, else by name
// ignoring case and underscores, embedded structs included, db:"-"
// skipped), RowToStructByNameLax, RowToStructByPos, RowToMap and their
// AddrOf forms, under pgx's names. A struct's mapping to a statement's
// columns is planned once and cached; a row costs no allocation beyond
// its values.
//
// # Enums, composites and other user types
//
// Types created with CREATE TYPE, CREATE DOMAIN or an extension have no
// fixed OID: until registered they are requested as text (an enum scans
// into a string, an array of them into []string). Conn.LoadTypes reads
// them by name from the catalog, with the types they are made of, and
// registers them on the connection's TypeMap: composites then scan into
// structs, user ranges into pgtype.Range[T], hstore into a map. For a
// Pool, call it in Config.AfterConnect so that every connection has
// them. A value of a type not registered, scanned into a struct, is a
// pgtype.UnknownTypeError: Row.Scan, CollectRows and the other calls that
// close their rows before returning name the type as the catalog does
// ("address", or "app.address" off the search_path) with the LoadType
// call to make; Rows.Scan, whose rows still hold the connection, and any
// call in a transaction block, name its OID.
//
// # Deadlines and cancellation
//
// A call returns by its ctx's deadline whatever the server does, with an
// error wrapping ctx.Err(); the connection drains the rest of the reply
// and stays usable. (CopyFrom, which holds the connection alone, cancels
// its COPY at once instead and waits for the server to end it, for up to
// cancel_timeout.) Because pipelined statements are already in the
// server's input, and PostgreSQL cancels whatever runs when a
// CancelRequest lands, pgline sends one only when it can hit nothing
// else: never once the statement's reply has ended, never while another
// is in flight (nothing is written meanwhile), and, when other statements
// wait behind it, only after the statement has run for cancel_grace
// (default 100ms). When the server has not ended the statement
// cancel_timeout (default 10s) after the cancel, the connection is closed
// and a Pool replaces it. A statement hit all the same by a cancel meant
// for another, while its own ctx is alive, is sent again when none of its
// reply reached its caller (in a Batch, only the last statement: see
// ErrCanceledByOther); otherwise its error wraps ErrCanceledByOther.
// A transaction one of whose statements was given up that way is rolled
// back by Commit (ErrTxRolledBack): its caller was told it failed.
// A signal (anyone's: pg_cancel_backend too) that lands in the BEGIN or
// COMMIT ending a statement's shared Sync, or in a transaction's BEGIN,
// COMMIT or ROLLBACK, may leave the session in an aborted transaction
// block: pgline rolls it back at once, and the statements the block
// refused meanwhile (25P02: nothing of them ran) are sent again, a
// Batch whole (an independent one with a statement that ends a block,
// COMMIT or ROLLBACK, after its first refused one is not: its statements
// other than the last report the 25P02, saying that nothing of them ran).
// So it does after a text given to Exec, or an all-or-nothing Batch,
// that begins and ends its own block ("BEGIN; ...; COMMIT") but failed
// before its COMMIT ran. When a caller's raw ROLLBACK or COMMIT ended
// the stranded block before pgline's ROLLBACK ran and a raw BEGIN began
// another, that ROLLBACK ends the caller's block: the connection is then
// closed, so that the block's COMMIT fails instead of reporting success,
// and no statement refused or skipped in that block is sent again.
//
// # Pipelining and its limits
//
// A Conn is safe for concurrent use. Statements of different goroutines
// are written back to back and their replies are matched in order: N
// goroutines cost about one round trip instead of N. Each statement is its
// own transaction, so an error in one never affects another: statements
// queued together share one Sync (which costs the server more than a small
// statement) and pgline ends each with BEGIN and COMMIT, which commit it
// on its own; when one fails, the server skips those after it up to the
// Sync, and pgline sends them again. The DSN parameter pipeline_sync=each
// gives every statement its own Sync instead. Because the
// goroutines share one session, anything that changes session state (SET,
// temporary tables, advisory locks, LISTEN) needs a connection of its own:
// a Tx, which holds the connection until it ends, or a Conn from
// Pool.Acquire. Rows hold the connection's reader until they are closed:
// close them promptly, and never start a statement on a Conn while the
// same goroutine holds that Conn's Rows open.
//
// # PgBouncer and other poolers
//
// A transaction pooler gives each transaction, and each Sync group
// outside one, to any server session, where statements prepared on
// another session do not exist. pgline names each prepared statement
// after its connection and a hash of its text and parameter types, so a
// name can never run another text. With statement_cache_mode=auto a
// connection checks at connect whether the server's process ID is the
// one the startup gave (a pooler answers the startup itself), and uses
// describe mode behind a pooler. A connection in prepare mode that finds
// one of its statements missing (26000) or already present (42P05) on the
// server, with no DEALLOCATE or DISCARD sent since, switches to describe
// mode too, and the statement, which did not run, is sent again (outside
// a transaction). Every connection of a Pool to that host follows;
// Pool.Stat reports the host in PoolerHosts, Conn.StatementCacheMode the
// mode, and a Tracer gets a TracePooler event.
//
// A transaction pooler gives a server session back to its pool only when
// the client has no Sync outstanding: a Conn that many goroutines keep
// busy holds one for as long, and clients beyond the pooler's
// default_pool_size wait meanwhile (their calls keep their deadlines).
// Size the pooler's pool for the busy Conns (and Pool connections) in use.
//
// A pooler may end a client's connection while the server session behind
// it goes on running what it was sent (PgBouncer's query_timeout, its
// admin console's KILL): after such a FATAL, the statements in flight may
// have run and commit, and their errors are not SafeToRetry. Only a FATAL
// from PostgreSQL itself, or PgBouncer's query_wait_timeout and
// client_idle_timeout (the client had nothing on a server), marks them as
// never sent.
//
// # Pool
//
// NewPool opens connections as load needs them (pool_max_conns and the
// other pool_* DSN parameters) and sends each statement to the connection
// with the fewest requests in flight, pipelined with the others (up to
// pool_max_pipeline per connection), but not behind a connection whose
// queue waits on user code (open Rows) or on a statement that has not
// answered for a while, when another connection can take it or can be
// opened. Acquire and Begin take a connection for one caller, one that
// drains soon. When every slot is taken, statements wait in one line
// and Acquire and Begin in another, each served in arrival order with
// one wake-up per freed slot, however many goroutines wait. Connections the server
// closed while they sat idle are found before use, and a statement that
// failed because its connection broke before it ran is sent again on
// another, with connection attempts backed off while no host answers
// (see Pool).
//
// # Batches and transactions
//
// A Batch sends many statements in one write: independent ones (a Sync
// each) or all-or-nothing. Begin starts a transaction; Tx.Begin makes a
// savepoint.
//
// # Large values and COPY
//
// A row larger than the read buffer is read column by column from the
// socket: Scan into *[]byte or *string allocates the value once, at its
// exact size; Scan into StreamTo(w) copies it to w with bounded memory.
// ReaderArg sends a parameter from an io.Reader without buffering it.
// CopyFrom, CopyFromReader and CopyTo run COPY with bounded memory.
//
// # LISTEN/NOTIFY
//
// Listen, then WaitForNotification; notifications that arrive while other
// statements run are kept.
//
// # Logging and tracing
//
// Config.Tracer is told when connects, statements, batches, COPY and pool
// acquisitions start and end (see TraceEvent). SlogTracer logs them with
// log/slog: one record per event, with its duration, rows, host, and the
// error and SQLSTATE of a failure; arguments only when asked for. The
// separate module github.com/pgline/pgline/otelpgline makes OpenTelemetry
// spans and metrics of them.
//
// # Primary and standbys
//
// A Pool over several hosts (host=db1,db2,db3) keeps connections to each
// and knows which is the primary, which are standbys, and how far each
// standby's replay lags. It routes by target_session_attrs; Pool.Target
// gives a view of it, sharing its connections, that routes by other
// attributes: Target("prefer-standby") sends reads to a standby no more
// than pool_max_replica_lag behind (one at random with
// load_balance_hosts=random), else to the primary. After a failover the
// Pool finds the new primary by itself, and a statement goes to another
// host only when none of it reached the server. A 25006 error (read-only
// transaction) from a host it believed writable, in any call, has it
// check the hosts' roles at once. Pool.Stat reports each host's role, lag
// and connections.
//
// # database/sql and tests
//
// Package stdlib registers the driver "pgline" for database/sql. Package
// pgtest starts a throwaway PostgreSQL for tests and benchmarks.
package pgline
