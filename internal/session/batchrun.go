package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pgline/pgline/internal/sqllex"
	"github.com/pgline/pgline/internal/wire"
)

// BatchReply is a sent batch's reply, which BatchResults reads statement
// by statement, and what its statements need to be sent again.
type BatchReply struct {
	Req   *Request    // the batch's one request, nil once handed on
	Watch *ctxWatch   // the watch of its ctx, nil when the ctx has none
	Sds   []*StmtDesc // what each statement is bound as
	All   bool        // AllOrNothing
	// Abandoned: the ctx ended while the reply was read; the rest of it
	// is the connection's to drain (see session.abandon).
	Abandoned bool
	// Released: the last statement was sent again, the batch's request
	// handed on (see release).
	Released bool
	// What was sent, for a statement sent again: the ctx, the
	// transaction, the statements.
	Ctx   context.Context
	Owner *Holder     // the transaction's, nil outside one
	Items []BatchItem // the batch's statements
	// Resends is the batch's retry budget (see retry.go), carried into
	// the batches and statements it sends again.
	Resends Resends
}

// How a batch statement whose reply failed before its first row is sent
// again (startStatement): not; with the statements after it, as a batch
// of their own (batchSent.mayResendRefused); on its own, as the batch's
// last (batchSent.mayResend).
const (
	resendNone = iota
	ResendRest
	ResendLast
)

// StartStatement reads statement i's reply into res up to its first row.
// When that fails, err is the statement's error and again how the retry
// policy lets it be sent again; when it may not be, a stale statement is
// dropped from the cache, so that its next use prepares it again.
func (br *BatchReply) StartStatement(c *Session, i int, res *Result) (again int, err error) {
	sd := br.Sds[i]
	*res = Result{Sd: sd, Req: br.Req, inBatch: true, stopAtComplete: br.All}
	if err := res.Start(c); err == nil {
		return resendNone, nil
	}
	br.StatementEnded(res)
	sent := br.sent()
	if sent.mayResendRefused(i, res.Err) && br.Resends.Again(br.Ctx, ResendInterfered) {
		return ResendRest, res.Err
	}
	if sent.mayResend(i, res.Err, res.TxStatus) && br.Resends.Again(br.Ctx, ResendInterfered) {
		return ResendLast, res.Err
	}
	if code, message, ok := APIErrors.ServerCode(res.Err); ok {
		c.dropOutdated(sd, code, message) // the next use prepares it again
	}
	return resendNone, res.Err
}

// StatementEnded notes the end of a statement's reply (res): its error
// wraps the batch's ctx's when that ended, and a reply its caller gave
// up is the batch's to drain.
func (br *BatchReply) StatementEnded(res *Result) {
	res.Err = br.Watch.wrap(res.Err)
	br.Abandoned = br.Abandoned || res.Abandoned
}

// SendFrom sends the batch's statements from i on again, as a batch of
// their own, queued behind every request queued meanwhile (see
// BatchResults.resendRefused).
func (br *BatchReply) SendFrom(c *Session, i int) error {
	req, run, err := c.StartBatch(br.Ctx, br.Owner, br.All, br.Items[i:], &br.Resends)
	if err != nil {
		return err
	}
	br.Req, br.Watch, br.Released = req, nil, false
	if req != nil {
		br.Watch = c.Watch(br.Ctx, req)
	}
	br.Sds = append(br.Sds[:i:i], run...)
	return nil
}

// Release reads the rest of the batch's reply and hands the connection
// on; it fails when the rest cannot be read.
func (br *BatchReply) Release(c *Session) error {
	if err := c.drainReply(br.Req); err != nil {
		if err == ErrInterrupted {
			br.Abandoned = true // Close drains what is left
		}
		return err
	}
	br.Watch.stop()
	c.handoff(br.Req) // br.req and its watch are reused from here on
	br.Req, br.Watch, br.Released = nil, nil, true
	return nil
}

// EndReply ends the batch's reply for Close, once its statements were
// read: the rest of it is drained, or given to the connection to drain,
// and the turn handed on. It returns the batch's error: first, the first
// statement error (wrapping the ctx's when that ended) when there is one;
// else, for a reply given up, what its drain returned; else err.
func (br *BatchReply) EndReply(c *Session, first, err error) error {
	if br.All && !br.Abandoned && c.drainReply(br.Req) == ErrInterrupted {
		// The end of the reply: the batch's one ReadyForQuery.
		br.Abandoned = true
	}
	if br.Abandoned {
		err = c.abandon(br.Req)
		if first != nil {
			err = first
		}
	} else {
		br.Watch.stop()
		if first != nil {
			err = br.Watch.wrap(first)
		}
		c.handoff(br.Req) // br.req and its watch are reused from here on
	}
	br.Watch = nil
	br.Req = nil
	return err
}

// sent is what the retry policy asks of the batch (see batchSent).
func (br *BatchReply) sent() batchSent {
	return batchSent{owner: br.Owner, all: br.All, abandoned: br.Abandoned, n: len(br.Items), sql: func(i int) string { return br.Items[i].SQL }, sds: br.Sds}
}

// BatchItem is a statement of a batch (Batch.Queue): its text and
// arguments.
type BatchItem struct {
	SQL  string // the text, NamedArgs rewritten
	Args []any  // its arguments
	Err  error  // NamedArgs that could not be rewritten: fails the batch
}

// StartBatch checks a batch's statements (items; all: AllOrNothing),
// prepares them and queues their runs in one request, and waits for its
// turn: the request, and what each statement is bound as (see
// queueBatch). Without a request, err is the batch's error, or (nil) each
// statement of run has its own. budget is the batch's retry budget.
func (c *Session) StartBatch(ctx context.Context, owner *Holder, all bool, items []BatchItem, budget *Resends) (req *Request, run []*StmtDesc, err error) {
	for i, it := range items {
		if it.Err != nil {
			return nil, nil, NotSent(fmt.Errorf("pgline: batch statement %d: %w", i, it.Err))
		}
		if sqllex.Scan(it.SQL).CopyFromStdin {
			return nil, nil, NotSent(errors.New("pgline: COPY FROM STDIN cannot run in a batch"))
		}
	}
	sqls := make([]string, len(items))
	for i, it := range items {
		sqls[i] = it.SQL
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	for {
		req, run, again, err := c.queueBatch(ctx, owner, all, items, sqls, budget)
		if again && budget.Again(ctx, resendPathChanged) {
			continue // nothing sent: described again under the new search_path
		}
		if err != nil || req == nil {
			return nil, run, err // no request: each statement gives its own error
		}
		if err := c.waitTurn(ctx, req); err != nil {
			return nil, nil, err
		}
		return req, run, nil
	}
}

// queueBatch prepares a batch's statements (items, their texts sqls)
// and queues their runs in one request: the request, and what each
// statement is bound as. Without a request or an error, none of the statements could
// be prepared, and each has its own error (run). again reports that
// nothing was sent because a statement that may change search_path,
// queued by another caller, came between the statements' describe and
// their Binds (errPathChanged): the batch may be described again and
// sent, as a single statement is (see maxPathRetries). A change queued
// by a statement of the batch itself, before another of its statements,
// is not retried: that statement would be described under the old
// search_path each time; the batch fails with errPathChanged.
func (c *Session) queueBatch(ctx context.Context, owner *Holder, all bool, items []BatchItem, sqls []string, budget *Resends) (req *Request, run []*StmtDesc, again bool, err error) {
	c.Wmu.Lock()
	c.followPoolerLocked()
	sds, err := c.prepareAllUnlock(ctx, owner, sqls, true)
	if err != nil {
		return nil, nil, false, err
	}
	for slices.ContainsFunc(sds, func(sd *StmtDesc) bool { return describeAgain(sd, owner) }) && budget.Again(ctx, ResendInterfered) {
		// A Parse showed a transaction pooler, or a CancelRequest meant
		// for another statement failed a describe, or another owner's
		// describe failed (see describeAgain): the statements are
		// described again (in describe mode, after a pooler).
		c.Wmu.Lock()
		unpinLocked(sds)
		if sds, err = c.prepareAllUnlock(ctx, owner, sqls, true); err != nil {
			return nil, nil, false, err
		}
	}
	// Pinned until the Binds are queued (after send), so that no Close of
	// them goes out before.
	defer func() {
		c.Wmu.Lock()
		unpinLocked(sds)
		c.Wmu.Unlock()
	}()
	// A statement the server could not prepare fails alone in an
	// independent batch (it is not sent); it fails the whole batch in an
	// all-or-nothing one.
	sent := 0
	for i, sd := range sds {
		switch {
		case sd.Err != nil && all:
			return nil, nil, false, NotSent(fmt.Errorf("pgline: batch statement %d: %w", i, sd.Err))
		case sd.Err != nil:
			continue
		case len(items[i].Args) != len(sd.ParamOIDs):
			return nil, nil, false, NotSent(fmt.Errorf("pgline: batch statement %d has %d parameters, but %d arguments were given", i, len(sd.ParamOIDs), len(items[i].Args)))
		}
		sent++
	}
	if sent == 0 {
		return nil, sds, false, nil
	}
	// run is what each statement is bound as: sds, or a copy once a
	// statement goes unnamed.
	run = sds
	// An all-or-nothing batch that begins and ends its own block (BEGIN
	// ... COMMIT) and fails before its COMMIT leaves the session in the
	// block, which the server skipped up to the Sync: nobody holds it
	// (see blockTraits.leavesStranded), as after such a text given to Exec.
	// Both need transaction control among the statements, which their
	// cached traits tell without a scan.
	spec := ReqSpec{owner: owner, extended: true}
	if !all {
		spec.syncs = sent
	}
	spec.txControl = owner == nil && slices.ContainsFunc(sds, func(sd *StmtDesc) bool { return sd.traits.txControl })
	spec.endsBlock = all && spec.txControl && endsBlock(sqls)
	req, err = c.send(ctx, &spec, func(buf []byte) ([]byte, error) {
		for i, it := range items {
			sd := sds[i]
			if sd.Err != nil {
				continue
			}
			u, err := c.boundLocked(sd, owner)
			if err != nil {
				// Sent again unless the change is the batch's own.
				again = errors.Is(err, ErrPathChanged) && !slices.ContainsFunc(sds[:i], func(sd *StmtDesc) bool {
					return sd.Err == nil && sd.traits.changesPath
				})
				return nil, fmt.Errorf("batch statement %d: %w", i, err)
			}
			if u != sd { // after a DEALLOCATE, maybe this batch's own
				if &run[0] == &sds[0] {
					run = slices.Clone(sds)
				}
				sd, run[i] = u, u
			}
			if buf, err = c.appendRun(buf, sd, it.Args, !all, nil); err != nil {
				return nil, fmt.Errorf("batch statement %d: %w", i, err)
			}
		}
		if all {
			buf = wire.AppendSync(buf)
		}
		return buf, nil
	})
	if err != nil {
		return nil, nil, again, err
	}
	return req, run, false, nil
}

// endsBlock reports whether the statements sqls, run in turn, begin a
// transaction block and end it (sqllex.Info.EndsBlock). Each is one
// statement (the extended protocol runs no more), which a line break
// ends should it end with a comment.
func endsBlock(sqls []string) bool {
	return sqllex.Scan(strings.Join(sqls, "\n;\n")).EndsBlock
}
