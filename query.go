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
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pgline/pgline/internal/wire"
)

// Query runs sql with args and returns its rows. The connection is held
// until the rows are closed (by Close, or by Next returning false): always
// close them. Errors that the server reports before the first row (syntax,
// bad arguments, a failing first row) are returned by Query itself.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (*Rows, error) {
	r := &Rows{}
	if err := c.query(ctx, r, sql, args); err != nil {
		return nil, err
	}
	return r, nil
}

// QueryRow runs sql with args and returns its first row; the error, if
// any, is returned by Row.Scan (ErrNoRows when there is no row).
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) *Row {
	row := &Row{}
	row.err = c.query(ctx, &row.rows, sql, args)
	return row
}

// Exec runs sql and returns the command tag of its last statement. Without
// arguments sql may hold several statements separated by semicolons (they
// run with the simple protocol, in one implicit transaction unless they
// manage their own); with arguments it is one statement, prepared and
// cached like a query.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	if len(args) == 0 {
		return c.simpleQuery(ctx, sql, nil)
	}
	var r Rows
	if err := c.query(ctx, &r, sql, args); err != nil {
		return CommandTag{}, err
	}
	r.Close()
	return r.tag, r.err
}

// query takes the connection, runs sql and leaves r positioned before its
// first row, holding the connection. On error the connection is released.
func (c *Conn) query(ctx context.Context, r *Rows, sql string, args []any) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	w := c.watch(ctx)
	err := c.run(r, sql, args)
	if err != nil {
		w.stop()
		c.release()
		return w.wrap(err)
	}
	r.watch = w
	return nil
}

// run describes sql when needed, sends the run and reads up to the first
// row. A run refused because the cached statement went stale (its result
// type changed, or it was deallocated) is re-prepared and sent again, once,
// when it cannot have had an effect.
func (c *Conn) run(r *Rows, sql string, args []any) error {
	for attempt := 0; ; attempt++ {
		sd, described, err := c.describe(sql)
		if err != nil {
			return err
		}
		if len(args) != len(sd.paramOIDs) {
			return fmt.Errorf("pgline: statement has %d parameters, but %d arguments were given", len(sd.paramOIDs), len(args))
		}
		// In describe mode the unnamed statement must be parsed again
		// unless describe just did it.
		reparse := c.stmts.mode == cacheDescribe && !described
		if err := c.sendRun(sd, args, reparse); err != nil {
			return err
		}
		*r = Rows{c: c, sd: sd}
		err = r.start()
		if err == nil {
			return nil
		}
		var pgErr *PgError
		if attempt == 0 && errors.As(err, &pgErr) && staleStatement(pgErr) {
			c.stmts.remove(sd)
			if c.TxStatus() == 'I' {
				continue // nothing ran: prepare again and retry
			}
		}
		return err
	}
}

// staleStatement reports errors that mean a cached statement no longer
// fits the server: its result type changed under it (ALTER TABLE), or it
// was deallocated (DISCARD ALL, DEALLOCATE).
func staleStatement(e *PgError) bool {
	switch e.Code {
	case "0A000":
		return strings.Contains(e.Message, "cached plan must not change result type")
	case "26000": // invalid_sql_statement_name: prepared statement does not exist
		return true
	case "08P01": // Bind with one result format per column of an outdated description
		return strings.Contains(e.Message, "result formats")
	}
	return false
}

// describe returns the description of sql: from the cache, or by asking
// the server (Parse, Describe, Sync). described reports a round trip made
// now, after which the statement (named or unnamed) exists on the server.
func (c *Conn) describe(sql string) (sd *stmtDesc, described bool, err error) {
	if sd := c.stmts.get(sql); sd != nil {
		return sd, false, nil
	}
	sd = c.stmts.newDesc(sql)
	buf := c.appendCloses(c.wbuf[:0])
	if buf, err = wire.AppendParse(buf, sd.name, sql, nil); err != nil {
		return nil, false, err
	}
	if buf, err = wire.AppendDescribe(buf, 'S', sd.name); err != nil {
		return nil, false, err
	}
	c.wbuf = wire.AppendSync(buf)
	if err := c.flush(); err != nil {
		return nil, false, c.fail(err)
	}
	var firstErr error
	for {
		typ, body, err := c.rd.Next()
		if err != nil {
			return nil, false, c.fail(readErr(err))
		}
		switch typ {
		case wire.MsgParseComplete, wire.MsgCloseComplete, wire.MsgNoData:
		case wire.MsgParameterDescription:
			pd, err := wire.ParseParameterDescription(body)
			if err != nil {
				return nil, false, c.fail(protocolErr(err))
			}
			sd.paramOIDs = append([]uint32(nil), pd.OIDs...)
		case wire.MsgRowDescription:
			fields, err := parseFields(body)
			if err != nil {
				return nil, false, c.fail(err)
			}
			sd.setFields(fields, c.types)
		case wire.MsgErrorResponse:
			pgErr, err := parsePgError(body)
			if err != nil {
				return nil, false, c.fail(err)
			}
			if firstErr == nil {
				firstErr = pgErr
			}
		case wire.MsgReadyForQuery:
			c.txStatus.Store(uint32(body[0]))
			if firstErr != nil {
				return nil, false, firstErr
			}
			if sd.plans == nil {
				sd.setFields(nil, c.types)
			}
			c.stmts.put(sd)
			return sd, true, nil
		default:
			if err := c.handleAsync(typ, body); err != nil {
				return nil, false, c.fail(err)
			}
		}
	}
}

// appendCloses appends Close messages for statements evicted from the
// cache.
func (c *Conn) appendCloses(buf []byte) []byte {
	for _, name := range c.stmts.closing {
		var err error
		if buf, err = wire.AppendClose(buf, 'S', name); err != nil {
			break // cannot happen: the name is ours
		}
	}
	c.stmts.closing = c.stmts.closing[:0]
	return buf
}

// sendRun writes [Parse] Bind Execute Sync for sd with args encoded for
// the described parameter types, and flushes. An argument that cannot be
// encoded is reported before anything is written.
func (c *Conn) sendRun(sd *stmtDesc, args []any, reparse bool) error {
	buf := c.appendCloses(c.wbuf[:0])
	var err error
	if reparse {
		if buf, err = wire.AppendParse(buf, "", sd.sql, sd.paramOIDs); err != nil {
			return err
		}
	}
	if buf, err = c.appendBind(buf, sd, args); err != nil {
		c.wbuf = buf[:0]
		return err
	}
	if c.stmts.mode == cacheDescribe {
		// The unnamed statement is parsed afresh on every run, so its
		// result columns may differ from the cached description (ALTER
		// TABLE): the portal's description, read before the rows, says
		// what the rows hold.
		if buf, err = wire.AppendDescribe(buf, 'P', ""); err != nil {
			return err
		}
	}
	if buf, err = wire.AppendExecute(buf, "", 0); err != nil {
		return err
	}
	c.wbuf = wire.AppendSync(buf)
	if err := c.flush(); err != nil {
		return c.fail(err)
	}
	return nil
}

// appendBind appends a Bind message, encoding each argument in place:
// formats and lengths are patched in once each value is written.
func (c *Conn) appendBind(buf []byte, sd *stmtDesc, args []any) ([]byte, error) {
	if len(args) > math.MaxInt16 || len(sd.formats) > math.MaxInt16 {
		return buf, errors.New("pgline: too many parameters or result columns")
	}
	buf, start := wire.BeginMessage(buf, wire.MsgBind)
	buf = append(buf, 0) // unnamed portal
	buf, err := wire.AppendCString(buf, sd.name)
	if err != nil {
		return buf[:start-1], err
	}
	buf = wire.AppendInt16(buf, int16(len(args)))
	fmtPos := len(buf)
	for range args {
		buf = append(buf, 0, 0)
	}
	buf = wire.AppendInt16(buf, int16(len(args)))
	for i, arg := range args {
		lenPos := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		out, format, null, err := c.types.Encode(sd.paramOIDs[i], arg, buf)
		if err != nil {
			return buf[:start-1], fmt.Errorf("pgline: argument $%d: %w", i+1, err)
		}
		if null {
			binary.BigEndian.PutUint32(out[lenPos:], math.MaxUint32) // -1
			buf = out[:lenPos+4]
			continue
		}
		n := len(out) - lenPos - 4
		if n > math.MaxInt32 {
			return buf[:start-1], fmt.Errorf("pgline: argument $%d: value too large", i+1)
		}
		binary.BigEndian.PutUint32(out[lenPos:], uint32(n))
		binary.BigEndian.PutUint16(out[fmtPos+2*i:], uint16(format))
		buf = out
	}
	buf = wire.AppendInt16(buf, int16(len(sd.formats)))
	for _, f := range sd.formats {
		buf = wire.AppendInt16(buf, f)
	}
	return wire.FinishMessage(buf, start)
}

// parseFields decodes a RowDescription.
func parseFields(body []byte) ([]FieldDescription, error) {
	fds, err := wire.ParseRowDescription(body, nil)
	if err != nil {
		return nil, protocolErr(err)
	}
	fields := make([]FieldDescription, len(fds))
	for i, f := range fds {
		fields[i] = FieldDescription{
			Name:                 f.Name,
			TableOID:             f.TableOID,
			TableAttributeNumber: f.TableAttributeNumber,
			DataTypeOID:          f.DataTypeOID,
			DataTypeSize:         f.DataTypeSize,
			TypeModifier:         f.TypeModifier,
			Format:               f.Format,
		}
	}
	return fields, nil
}
