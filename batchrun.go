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
