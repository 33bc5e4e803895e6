// Package otelpgline reports pgline's work to OpenTelemetry: a span for
// each statement, batch, COPY, connect and pool acquisition, the
// database client metrics, and a Pool's counters. Names follow
// OpenTelemetry's semantic conventions for database clients and for
// PostgreSQL (schema 1.43.0); what has no convention is named pgline.*.
// It is a module of its own, so that pgline itself needs no OpenTelemetry.
//
//	cfg.Tracer = otelpgline.NewTracer()     // spans and operation metrics
//	pool, err := pgline.NewPoolConfig(ctx, cfg)
//	unregister, err := otelpgline.RegisterPoolMetrics(pool) // pool gauges
//
// Both use the global TracerProvider and MeterProvider unless given
// others (WithTracerProvider, WithMeterProvider).
//
// # Spans
//
// A statement's span is a child of the span in the ctx given to Query,
// Exec, SendBatch or CopyFrom, and lasts until its rows are closed. Its
// kind is Client, and its name "{db.operation.name} {db.namespace}" as the
// conventions ask: "SELECT orders", "INSERT orders", "BATCH orders",
// "COPY orders". A statement whose text holds several statements, or does
// not start with a PostgreSQL command, has no operation name, and is
// named after the database alone. The spans of the other events are
// "connect" (Client), "acquire" (Internal: a wait in the Pool, which opens a
// connection with a "connect" span of its own when it needs one) and
// "pooler" (Internal, no duration: a connection found that it goes through
// a transaction pooler, and why, in pgline.pooler.reason).
//
// Attributes, where they apply and are known:
//
//   - db.system.name: "postgresql".
//   - db.namespace: the database named when connecting (Config.Database).
//     The schema is not added: it would cost a round trip.
//   - db.operation.name: the command as written, the first key word of a
//     single statement ("SELECT", "insert"; for WITH, the command after
//     it); "BATCH" for a batch.
//   - db.query.text: the statement's text (off with WithQueryText(false)).
//     Text sent without arguments has its literals replaced by "?"
//     (WithRawQueryText keeps them); text sent with arguments is as
//     written. A batch has none: pgline does not pass its statements.
//   - db.operation.batch.size: a batch's statement count, unless it is 1.
//   - db.response.returned_rows: the command tag's count when rows went to
//     the client (SELECT, FETCH, COPY … TO, a RETURNING clause).
//   - pgline.rows_affected: the count of INSERT, UPDATE, DELETE and MERGE
//     without RETURNING, COPY FROM, CREATE TABLE … AS and SELECT … INTO.
//   - server.address and server.port: the host of the connection (the
//     socket's path, and no port, for a Unix socket); for a failed
//     connect, the first host tried.
//   - pgline.pid: the connection's backend process ID.
//   - db.client.connection.pool.name (acquire): when WithPoolName is set.
//
// On failure the span's status is Error with the error's message, an
// "exception" event records the error (exception.type and
// exception.message), db.response.status_code is the SQLSTATE of a server
// error and error.type is that SQLSTATE too, else the Go name of a
// well-known error ("context.DeadlineExceeded", "pgline.ErrClosed",
// "io.EOF"), "timeout" for a network timeout, the Go type of other errors
// ("*net.OpError", "*pgline.ProtocolError"), or "_OTHER".
//
// Arguments are never recorded: not in attributes, and not in error
// messages either, where the text of each string, byte slice, number and
// fmt.Stringer argument is replaced by "?" (the server quotes values it
// cannot take, as in `invalid input syntax for type integer: "abc"`).
//
// # Metrics
//
// NewTracer records, with the span's db.system.name, db.namespace,
// db.operation.name, server.address, server.port, db.response.status_code
// and error.type (never the text):
//
//   - db.client.operation.duration (histogram, s): statements, batches and
//     COPY, the span's duration.
//   - db.client.response.returned_rows (histogram, {row}): where known.
//
// and, with db.client.connection.pool.name (see WithPoolName):
//
//   - db.client.connection.create_time (histogram, s): connects that
//     succeeded.
//   - db.client.connection.wait_time (histogram, s): acquisitions that
//     succeeded.
//   - db.client.connection.timeouts (counter, {timeout}): acquisitions
//     that failed at their ctx's deadline.
//
// RegisterPoolMetrics reports Pool.Stat at each collection, with
// db.client.connection.pool.name:
//
//   - db.client.connection.count ({connection}), by
//     db.client.connection.state: "idle" (open, nothing in flight) and
//     "used" (held by Acquire or Begin, or running statements). pgline
//     shares a connection among statements, so "used" does not mean
//     unavailable: see pgline.pool.pipeline.depth.
//   - db.client.connection.max ({connection}): pool_max_conns.
//   - db.client.connection.pending_requests ({request}), by
//     pgline.request.kind: "acquire" (Acquire and Begin waiting for a
//     connection of their own) and "statement" (statements waiting for
//     room, every connection being full).
//   - pgline.pool.connection.opening ({connection}): connections being
//     opened, not counted above.
//   - pgline.pool.connection.acquired ({connection}): held by Acquire or
//     Begin (part of "used").
//   - pgline.pool.statement.in_flight ({statement}): statements sent on
//     shared connections and not finished.
//   - pgline.pool.pipeline.depth (gauge, {statement}): the mean of those
//     per shared connection that has any.
//   - pgline.pool.pooler.hosts ({host}): hosts found behind a transaction
//     pooler.
package otelpgline
