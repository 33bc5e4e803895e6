package pgline

import (
	"context"
	"strconv"
	"time"

	"github.com/pgline/pgline/internal/session"
	"github.com/pgline/pgline/pgtype"
)

// The name of a type the TypeMap does not know, in a scan error.
//
// The TypeMap knows types by OID; a value of a user type nobody
// registered (LoadType) fails to scan into a struct with a
// pgtype.UnknownTypeError that names the OID. Its name is the catalog's,
// so it takes a statement, and Rows.Scan cannot send one: the rows hold
// the connection's reader, and a statement queued behind them would wait
// for the rows its caller is reading. The calls that close their rows
// before they return the error (Row.Scan, CollectRows, AppendRows,
// CollectOneRow, CollectExactlyOneRow, ForEachRow) look the name up once
// the rows are closed, in closeNaming, the one place that does, and only
// where a statement is safe (see typeName). Elsewhere, and whenever the
// lookup fails, the error names the OID.

// typeNameWait bounds the wait for a type's name: a scan error is not
// held up longer than this by the statements queued on the connection
// ahead of the lookup (other goroutines', or a transaction's at the gate).
const typeNameWait = time.Second

// columnError is the error of one column of a row (Rows.Scan,
// ScanColumn): "pgline: column 1 (addr): ...".
type columnError struct {
	i    int
	name string
	err  error
}

func (e *columnError) Error() string {
	return "pgline: column " + strconv.Itoa(e.i) + " (" + e.name + "): " + e.err.Error()
}

func (e *columnError) Unwrap() error { return e.err }

// columnErr names column i in err.
func (r *Rows) columnErr(i int, err error) error {
	return &columnError{i: i, name: r.res.Sd.Fields[i].Name, err: err}
}

// closeNaming closes the rows for a call that returns err, an error of
// their use, to its caller (Row.Scan, the Collect functions, ForEachRow),
// and returns err; or, when err is Rows.Scan's error for a type the
// TypeMap does not know (a columnError holding a
// pgtype.UnknownTypeError, as Scan made it: not wrapped again, by a
// RowToFunc of the caller's, say), the same error with the type's name,
// when typeName finds it. owner is the transaction a Row ran in (a Row's
// rows have no tx), if any.
//
// No name is looked up for the rows of a batch (the batch holds the
// connection until it is closed) or of a transaction (see typeName). A
// Pool's rows keep the connection counted as theirs until the lookup has
// ended: the Pool neither routes to it as free nor closes it meanwhile.
func (r *Rows) closeNaming(err error, owner *session.Holder) error {
	ce, _ := err.(*columnError)
	var ute *pgtype.UnknownTypeError
	if ce != nil {
		ute, _ = ce.err.(*pgtype.UnknownTypeError)
	}
	c := r.c
	if ute == nil || ute.Name != "" || c == nil || r.batch != nil || r.tx != nil || owner != nil {
		r.Close()
		return err
	}
	ctx := r.res.Req.Watch.Ctx // the query's; read before Close hands the request on
	if pc := r.pooled; pc != nil {
		r.pooled = nil
		defer pc.Done(true)
	}
	r.Close()
	name := c.typeName(ctx, ute.OID)
	if name == "" {
		return err
	}
	named := *ute
	named.Name = name
	return &columnError{i: ce.i, name: ce.name, err: &named}
}

// typeName returns the catalog's name of the type oid (format_type:
// schema-qualified when not on the search_path), or "" when it cannot
// ask safely or the lookup fails. It asks with one statement of the
// simple protocol (a transaction pooler takes it as any other), not
// traced (it is pgline's own, as the connect's checks), within ctx (the
// query's) and typeNameWait, and only outside a transaction block
// (TxStatus 'I'): in a block, a statement of pgline's that failed would
// abort the caller's transaction. The caller waits for the answer within
// ctx and typeNameWait; the lookup itself is not bounded by them, so that
// it is never cancelled: its CancelRequest could reach whatever another
// caller runs next on the connection. A lookup the caller stopped waiting
// for (one behind a long statement, or at the gate of another goroutine's
// transaction) runs when its turn comes and its answer is dropped.
func (c *Conn) typeName(ctx context.Context, oid uint32) string {
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil || c.IsClosed() || c.TxStatus() != 'I' {
		return ""
	}
	q := "SELECT pg_catalog.format_type(t.oid, NULL) FROM pg_catalog.pg_type t WHERE t.oid = " + strconv.FormatUint(uint64(oid), 10)
	answer := make(chan string, 1)
	go func() {
		name, err := c.queryScalar(context.WithoutCancel(ctx), q)
		if err != nil {
			name = ""
		}
		answer <- name
	}()
	wait := time.NewTimer(typeNameWait)
	defer wait.Stop()
	select {
	case name := <-answer:
		return name
	case <-wait.C:
	case <-ctx.Done():
	}
	return ""
}
