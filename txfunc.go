package pgline

import (
	"context"
	"errors"

	"github.com/pgline/pgline/internal/pool"
)

// BeginFunc starts a transaction on db (a *Conn, a *Pool, or a *Tx, whose
// Begin makes a savepoint), runs fn in it, and commits when fn returns
// nil. When fn returns an error or panics, the transaction is rolled back
// and fn's error returned (or its panic resumed). As pgx's BeginFunc.
// Rows fn leaves open are closed by the Commit or Rollback (see Tx):
// rows left unread make the Commit roll back, with ErrTxRolledBack.
func BeginFunc(ctx context.Context, db interface {
	Begin(context.Context) (*Tx, error)
}, fn func(*Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	return runInTx(ctx, tx, fn)
}

// BeginTxFunc is BeginFunc with options, for a *Conn or a *Pool.
func BeginTxFunc(ctx context.Context, db interface {
	BeginTx(context.Context, TxOptions) (*Tx, error)
}, opts TxOptions, fn func(*Tx) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	return runInTx(ctx, tx, fn)
}

// runInTx runs fn in tx and ends tx: Commit after nil, Rollback after an
// error or a panic.
func runInTx(ctx context.Context, tx *Tx, fn func(*Tx) error) (err error) {
	done := false
	// Rollback keeps ctx's deadline: after ctx's end, it queues the
	// ROLLBACK without waiting for its reply (see Tx.Rollback).
	defer func() {
		if !done {
			// fn panicked: roll back and go on panicking.
			tx.Rollback(ctx)
		}
	}()
	ferr := fn(tx)
	done = true
	if ferr != nil {
		if rerr := tx.Rollback(ctx); rerr != nil && !errors.Is(rerr, ErrTxClosed) {
			return errors.Join(ferr, rerr)
		}
		return ferr
	}
	return tx.Commit(ctx)
}

// AcquireFunc acquires a connection, runs fn with it and releases it,
// whatever fn returns (or if it panics). As pgxpool's AcquireFunc.
func (p *Pool) AcquireFunc(ctx context.Context, fn func(*PoolConn) error) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return fn(c)
}

// Ping checks that a connection of the pool reaches the server, with an
// empty query routed as a statement (opening a connection if none is
// open).
func (p *Pool) Ping(ctx context.Context) error {
	return p.retry(ctx, func(pc *pool.Conn) error {
		err := connOf(pc).Ping(ctx)
		p.done(pc, false)
		return err
	})
}

// Config returns a copy of the pool's configuration, as parsed (pool_*
// settings included); changing it does not change the pool.
func (p *Pool) Config() *Config {
	c := *p.cfg
	c.Hosts = append([]HostConfig(nil), p.cfg.Hosts...)
	c.RuntimeParams = make(map[string]string, len(p.cfg.RuntimeParams))
	for k, v := range p.cfg.RuntimeParams {
		c.RuntimeParams[k] = v
	}
	c.proxies = nil
	return &c
}
