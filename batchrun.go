package pgline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pgline/pgline/internal/sqllex"
	"github.com/pgline/pgline/internal/wire"
)

// batchReply is a sent batch's reply, which BatchResults reads statement
// by statement, and what its statements need to be sent again.
type batchReply struct {
	req   *request
	watch *ctxWatch
	sds   []*stmtDesc // what each statement is bound as
	all   bool        // AllOrNothing
	// abandoned: the ctx ended while the reply was read; the rest of it
	// is the connection's to drain (see session.abandon).
	abandoned bool
	// released: the last statement was sent again, the batch's request
	// handed on (see release).
	released bool
	// What was sent, for a statement sent again: the ctx, the
	// transaction, the statements.
	ctx   context.Context
	owner *holder
	items []batchItem
	// resends is the batch's retry budget (see retry.go), carried into
	// the batches and statements it sends again.
	resends resends
}

// How a batch statement whose reply failed before its first row is sent
// again (startStatement): not; with the statements after it, as a batch
// of their own (batchSent.mayResendRefused); on its own, as the batch's
// last (batchSent.mayResend).
const (
	resendNone = iota
	resendRest
	resendLast
)

// startStatement reads statement i's reply into res up to its first row.
// When that fails, err is the statement's error and again how the retry
// policy lets it be sent again; when it may not be, a stale statement is
// dropped from the cache, so that its next use prepares it again.
func (br *batchReply) startStatement(c *session, i int, res *result) (again int, err error) {
	sd := br.sds[i]
	*res = result{sd: sd, req: br.req, inBatch: true, stopAtComplete: br.all}
	if err := res.start(c); err == nil {
		return resendNone, nil
	}
	br.statementEnded(res)
	sent := br.sent()
	if sent.mayResendRefused(i, res.err) && br.resends.again(br.ctx, resendInterfered) {
		return resendRest, res.err
	}
	if sent.mayResend(i, res.err, res.txStatus) && br.resends.again(br.ctx, resendInterfered) {
		return resendLast, res.err
	}
	if code, message, ok := apiErrors.serverCode(res.err); ok {
		c.dropOutdated(sd, code, message) // the next use prepares it again
	}
	return resendNone, res.err
}

// statementEnded notes the end of a statement's reply (res): its error
// wraps the batch's ctx's when that ended, and a reply its caller gave
// up is the batch's to drain.
func (br *batchReply) statementEnded(res *result) {
	res.err = br.watch.wrap(res.err)
	br.abandoned = br.abandoned || res.abandoned
}

// sendFrom sends the batch's statements from i on again, as a batch of
// their own, queued behind every request queued meanwhile (see
// BatchResults.resendRefused).
func (br *batchReply) sendFrom(c *session, i int) error {
	req, run, err := c.startBatch(br.ctx, br.owner, br.all, br.items[i:], &br.resends)
	if err != nil {
		return err
	}
	br.req, br.watch, br.released = req, nil, false
	if req != nil {
		br.watch = c.watch(br.ctx, req)
	}
	br.sds = append(br.sds[:i:i], run...)
	return nil
}

// release reads the rest of the batch's reply and hands the connection
// on; it fails when the rest cannot be read.
func (br *batchReply) release(c *session) error {
	if err := c.drainReply(br.req); err != nil {
		if err == errInterrupted {
			br.abandoned = true // Close drains what is left
		}
		return err
	}
	br.watch.stop()
	c.handoff(br.req) // br.req and its watch are reused from here on
	br.req, br.watch, br.released = nil, nil, true
	return nil
}

// endReply ends the batch's reply for Close, once its statements were
// read: the rest of it is drained, or given to the connection to drain,
// and the turn handed on. It returns the batch's error: first, the first
// statement error (wrapping the ctx's when that ended) when there is one;
// else, for a reply given up, what its drain returned; else err.
func (br *batchReply) endReply(c *session, first, err error) error {
	if br.all && !br.abandoned && c.drainReply(br.req) == errInterrupted {
		// The end of the reply: the batch's one ReadyForQuery.
		br.abandoned = true
	}
	if br.abandoned {
		err = c.abandon(br.req)
		if first != nil {
			err = first
		}
	} else {
		br.watch.stop()
		if first != nil {
			err = br.watch.wrap(first)
		}
		c.handoff(br.req) // br.req and its watch are reused from here on
	}
	br.watch = nil
	br.req = nil
	return err
}

// sent is what the retry policy asks of the batch (see batchSent).
func (br *batchReply) sent() batchSent {
	return batchSent{owner: br.owner, all: br.all, abandoned: br.abandoned, n: len(br.items), sql: func(i int) string { return br.items[i].sql }, sds: br.sds}
}

// batchItem is a statement of a batch (Batch.Queue): its text and
// arguments.
type batchItem struct {
	sql  string
	args []any
	err  error // NamedArgs that could not be rewritten: fails the batch
}

// startBatch checks a batch's statements (items; all: AllOrNothing),
// prepares them and queues their runs in one request, and waits for its
// turn: the request, and what each statement is bound as (see
// queueBatch). Without a request, err is the batch's error, or (nil) each
// statement of run has its own. budget is the batch's retry budget.
func (c *session) startBatch(ctx context.Context, owner *holder, all bool, items []batchItem, budget *resends) (req *request, run []*stmtDesc, err error) {
	for i, it := range items {
		if it.err != nil {
			return nil, nil, notSent(fmt.Errorf("pgline: batch statement %d: %w", i, it.err))
		}
		if sqllex.Scan(it.sql).CopyFromStdin {
			return nil, nil, notSent(errors.New("pgline: COPY FROM STDIN cannot run in a batch"))
		}
	}
	sqls := make([]string, len(items))
	for i, it := range items {
		sqls[i] = it.sql
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	for {
		req, run, again, err := c.queueBatch(ctx, owner, all, items, sqls, budget)
		if again && budget.again(ctx, resendPathChanged) {
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
func (c *session) queueBatch(ctx context.Context, owner *holder, all bool, items []batchItem, sqls []string, budget *resends) (req *request, run []*stmtDesc, again bool, err error) {
	c.wmu.Lock()
	c.followPoolerLocked()
	sds, err := c.prepareAllUnlock(ctx, owner, sqls, true)
	if err != nil {
		return nil, nil, false, err
	}
	for slices.ContainsFunc(sds, func(sd *stmtDesc) bool { return describeAgain(sd, owner) }) && budget.again(ctx, resendInterfered) {
		// A Parse showed a transaction pooler, or a CancelRequest meant
		// for another statement failed a describe, or another owner's
		// describe failed (see describeAgain): the statements are
		// described again (in describe mode, after a pooler).
		c.wmu.Lock()
		unpinLocked(sds)
		if sds, err = c.prepareAllUnlock(ctx, owner, sqls, true); err != nil {
			return nil, nil, false, err
		}
	}
	// Pinned until the Binds are queued (after send), so that no Close of
	// them goes out before.
	defer func() {
		c.wmu.Lock()
		unpinLocked(sds)
		c.wmu.Unlock()
	}()
	// A statement the server could not prepare fails alone in an
	// independent batch (it is not sent); it fails the whole batch in an
	// all-or-nothing one.
	sent := 0
	for i, sd := range sds {
		switch {
		case sd.err != nil && all:
			return nil, nil, false, notSent(fmt.Errorf("pgline: batch statement %d: %w", i, sd.err))
		case sd.err != nil:
			continue
		case len(items[i].args) != len(sd.paramOIDs):
			return nil, nil, false, notSent(fmt.Errorf("pgline: batch statement %d has %d parameters, but %d arguments were given", i, len(sd.paramOIDs), len(items[i].args)))
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
	spec := reqSpec{owner: owner, extended: true}
	if !all {
		spec.syncs = sent
	}
	spec.txControl = owner == nil && slices.ContainsFunc(sds, func(sd *stmtDesc) bool { return sd.traits.txControl })
	spec.endsBlock = all && spec.txControl && endsBlock(sqls)
	req, err = c.send(ctx, &spec, func(buf []byte) ([]byte, error) {
		for i, it := range items {
			sd := sds[i]
			if sd.err != nil {
				continue
			}
			u, err := c.boundLocked(sd, owner)
			if err != nil {
				// Sent again unless the change is the batch's own.
				again = errors.Is(err, errPathChanged) && !slices.ContainsFunc(sds[:i], func(sd *stmtDesc) bool {
					return sd.err == nil && sd.traits.changesPath
				})
				return nil, fmt.Errorf("batch statement %d: %w", i, err)
			}
			if u != sd { // after a DEALLOCATE, maybe this batch's own
				if &run[0] == &sds[0] {
					run = slices.Clone(sds)
				}
				sd, run[i] = u, u
			}
			if buf, err = c.appendRun(buf, sd, it.args, !all, nil); err != nil {
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
