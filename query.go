package pgline

// Protocol flow of a query (extended protocol):
//
//	first use of an SQL text (statement_cache_mode=prepare):
//	  client: Parse(name, sql) Describe(S, name) Sync
//	  server: ParseComplete ParameterDescription (RowDescription | NoData) ReadyForQuery
//	every run:
//	  client: Bind(name, args, result formats) Execute Sync
//	  server: BindComplete DataRow* (CommandComplete | EmptyQueryResponse | ErrorResponse) ReadyForQuery
//
// In describe mode the unnamed statement is used and each run starts with
// Parse(unnamed, sql, parameter types), in the same round trip.

import (
	"context"
	"unsafe"

	"github.com/pgline/pgline/internal/session"

	"github.com/pgline/pgline/internal/wire"
)

// Query runs sql with args and returns its rows. The rows hold the
// connection's reader until they are closed (by Close, or by Next
// returning false): always close them; statements queued behind them wait.
// Errors that the server reports before the first row (syntax, bad
// arguments, a failing first row) are returned by Query itself, together
// with Rows that carry the error, as pgx's do: their Next is false and
// their Err (and CollectRows, ForEachRow) returns it.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	r := &Rows{}
	if err := c.query(ctx, nil, r, sql, args); err != nil {
		return failedRows(err), err
	}
	return r, nil
}

// failedRows returns Rows that are closed and carry err, the error of the
// Query that did not start them (see Conn.Query). They are new Rows: the
// ones the Query used may still be referred to while their reply is
// drained.
func failedRows(err error) *Rows {
	r := &Rows{}
	r.res.Err, r.res.Done = err, true
	return r
}

// QueryRow runs sql with args and returns its first row; the error, if
// any, is returned by Row.Scan (ErrNoRows when there is no row). Scan must
// be called: until then the reply holds the connection, as open Rows do.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	row := &Row{} // QueryRow stays inlinable: the Row on the caller's stack
	row.err = c.queryRow(ctx, row, sql, args)
	return row
}

// queryRow runs QueryRow's statement into row, noting what it ran so that
// Scan may send it again (see Row). It is not inlined, so that QueryRow
// is, and the Row stays on its caller's stack.
//
//go:noinline
func (c *Conn) queryRow(ctx context.Context, row *Row, sql string, args []any) error {
	row.c, row.ctx, row.sql, row.args = c, ctx, sql, args
	return c.query(ctx, nil, &row.rows, sql, args)
}

// Exec runs sql and returns the command tag of its last statement. Without
// arguments sql may hold several statements separated by semicolons (they
// run with the simple protocol, in one implicit transaction unless they
// manage their own); with arguments it is one statement, prepared and
// cached like a query.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	return c.exec(ctx, nil, sql, args)
}

func (c *Conn) exec(ctx context.Context, owner *session.Holder, sql string, args []any) (CommandTag, error) {
	if len(args) == 0 {
		return c.simpleQuery(ctx, owner, sql, nil)
	}
	var r Rows
	for {
		r = Rows{resends: r.resends} // one budget for the call
		if err := c.query(ctx, owner, &r, sql, args); err != nil {
			return CommandTag{}, err
		}
		r.Close()
		// Its rows went nowhere: hit by a cancel meant for another
		// statement, it is sent again.
		if session.Resendable(owner, sql, r.res.Err, r.res.TxStatus) && r.resends.Again(ctx, session.ResendInterfered) {
			continue
		}
		return CommandTag{s: r.res.Tag}, r.res.Err
	}
}

// query runs sql for owner (nil, or the transaction holding the
// connection) and leaves r positioned before its first row, at the head of
// the queue (see session.run, which sends it again when it may).
//
// Every statement with arguments enters here (Query, QueryRow, and Exec
// with arguments, of a Conn, a Tx or a Pool): NamedArgs are rewritten
// here, and what is traced and sent is the rewritten text.
func (c *Conn) query(ctx context.Context, owner *session.Holder, r *Rows, sql string, args []any) error {
	if len(args) == 1 && isNamedArgs(args[0]) {
		var err error
		if sql, args, err = rewriteNamedArgs(sql, args[0]); err != nil {
			return session.NotSent(err)
		}
	}
	if len(args) > session.MaxParams {
		return session.TooManyParams(len(args), "arguments")
	}
	if c.cfg.Tracer == nil {
		return c.run(ctx, owner, r, sql, args)
	}
	return c.runTraced(ctx, owner, r, sql, args)
}

// run is query without tracing: the session's run, into r's reply.
func (c *Conn) run(ctx context.Context, owner *session.Holder, r *Rows, sql string, args []any) error {
	if err := c.s.Run(ctx, owner, &r.res, &r.resends, sql, sessionArgs(args)); err != nil {
		return err
	}
	r.c = c
	return nil
}

// runTraced is run with the statement traced. Kept out of query, whose
// frame is on the stack of every statement: a smaller stack there spares
// goroutines that park between statements (a Pool's waiting line) a
// stack copy each time they run one.
//
//go:noinline
func (c *Conn) runTraced(ctx context.Context, owner *session.Holder, r *Rows, sql string, args []any) error {
	tctx, ev := c.traceStart(ctx, TraceEvent{Kind: TraceStatement, SQL: sql, Args: args})
	err := c.run(ctx, owner, r, sql, args)
	if err != nil {
		traceEnd(tctx, c.cfg, ev, CommandTag{}, err)
		return err
	}
	r.trace, r.traceCtx = ev, tctx
	return nil
}

// FieldDescription describes one result column (from RowDescription).
//
// It has the fields of the session's description of a column
// (wire.FieldDescription), in the same order: fieldsOf views one as the
// other without a copy, a conversion the compiler checks.
type FieldDescription struct {
	Name                 string
	TableOID             uint32 // 0 when the column is not a table column
	TableAttributeNumber uint16
	DataTypeOID          uint32
	DataTypeSize         int16 // negative for variable-width types
	TypeModifier         int32
	Format               int16 // 0 text, 1 binary: the format pgline asked for
}

// fieldsOf returns the session's column descriptions as FieldDescriptions,
// without a copy (see FieldDescription).
func fieldsOf(fds []wire.FieldDescription) []FieldDescription {
	return unsafe.Slice((*FieldDescription)(unsafe.SliceData(fds)), len(fds)) // nil stays nil, empty stays empty
}

// StatementDescription describes a prepared statement: the types of its
// parameters and its result columns.
type StatementDescription struct {
	SQL       string
	ParamOIDs []uint32
	Fields    []FieldDescription
}

// Prepare prepares sql on the connection (or finds it in the statement
// cache) and describes it. Query, QueryRow and Exec with the same SQL text
// then reuse the prepared statement; there is no need to call Prepare
// before them.
func (c *Conn) Prepare(ctx context.Context, sql string) (*StatementDescription, error) {
	return c.describeStatement(ctx, nil, sql)
}

// Prepare prepares sql inside the transaction (see Conn.Prepare).
func (tx *Tx) Prepare(ctx context.Context, sql string) (*StatementDescription, error) {
	if tx.closed() {
		return nil, ErrTxClosed
	}
	return tx.c.describeStatement(ctx, tx.owner(), sql)
}

func (c *Conn) describeStatement(ctx context.Context, owner *session.Holder, sql string) (*StatementDescription, error) {
	sd, err := c.s.Prepare(ctx, owner, sql)
	if err != nil {
		return nil, err
	}
	c.s.Unpin(sd)
	return &StatementDescription{
		SQL:       sql,
		ParamOIDs: append([]uint32(nil), sd.ParamOIDs...),
		Fields:    append([]FieldDescription(nil), fieldsOf(sd.Fields)...),
	}, nil
}
