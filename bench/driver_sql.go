package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	"github.com/lib/pq"
)

// pgxSQLDriver is pgx through database/sql (github.com/jackc/pgx/v5/stdlib).
func pgxSQLDriver() *driver {
	return sqlDriver(namePgxSQL, "pgx", func(s []string) any { return s })
}

// libpqDriver is github.com/lib/pq through database/sql.
func libpqDriver() *driver {
	return sqlDriver(nameLibPQ, "postgres", func(s []string) any { return pq.Array(s) })
}

// sqlDriver builds a driver over database/sql: connect pins one *sql.Conn,
// shared is a *sql.DB limited to one connection, pool a *sql.DB of size
// connections.
func sqlDriver(name, sqlName string, array func([]string) any) *driver {
	openDB := func(ctx context.Context, dsn string, size int) (*sql.DB, error) {
		db, err := sql.Open(sqlName, dsn)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(size)
		db.SetMaxIdleConns(size)
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	return &driver{
		name: name,
		connect: func(ctx context.Context, dsn string) (conn, error) {
			db, err := openDB(ctx, dsn, 1)
			if err != nil {
				return nil, err
			}
			c, err := db.Conn(ctx)
			if err != nil {
				db.Close()
				return nil, err
			}
			return &sqlConn{q: c, closer: func() error { c.Close(); return db.Close() }}, nil
		},
		shared: func(ctx context.Context, dsn string) (conn, string, error) {
			db, err := openDB(ctx, dsn, 1)
			if err != nil {
				return nil, "", err
			}
			return &sqlConn{q: db, closer: db.Close}, "database/sql DB with MaxOpenConns=1", nil
		},
		pool: func(ctx context.Context, dsn string, size int) (conn, string, error) {
			db, err := openDB(ctx, dsn, size)
			if err != nil {
				return nil, "", err
			}
			return &sqlConn{q: db, closer: db.Close}, fmt.Sprintf("database/sql DB with MaxOpenConns=%d", size), nil
		},
		textArray: array,
	}
}

// sqlQueryer is what *sql.DB and *sql.Conn have in common.
type sqlQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtPrefix marks a Query string that names a prepared *sql.Stmt.
const stmtPrefix = "\x00stmt:"

type sqlConn struct {
	q      sqlQueryer
	closer func() error
	stmts  map[string]*sql.Stmt // by stmtPrefix+name; written only by Prepare, before use
}

func (s *sqlConn) Query(ctx context.Context, query string, args ...any) (rows, error) {
	var r *sql.Rows
	var err error
	if strings.HasPrefix(query, stmtPrefix) {
		st := s.stmts[query]
		if st == nil {
			return nil, fmt.Errorf("no prepared statement %q", query[len(stmtPrefix):])
		}
		r, err = st.QueryContext(ctx, args...)
	} else {
		r, err = s.q.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

func (s *sqlConn) Exec(ctx context.Context, query string, args ...any) error {
	_, err := s.q.ExecContext(ctx, query, args...)
	return err
}

func (s *sqlConn) Prepare(ctx context.Context, name, query string) (string, error) {
	st, err := s.q.PrepareContext(ctx, query)
	if err != nil {
		return "", err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[stmtPrefix+name] = st
	return stmtPrefix + name, nil
}

func (s *sqlConn) Close() error {
	for _, st := range s.stmts {
		st.Close()
	}
	return s.closer()
}

// sqlRows adapts *sql.Rows, whose Close returns an error (also reported
// by Err).
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }
