package stdlib_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// account and its store are written against database/sql only, the way an
// application would be; the test runs them with driver "pgline".
type account struct {
	ID      int64
	Owner   string
	Balance float64
	Note    sql.NullString
	Created time.Time
}

type store struct{ db *sql.DB }

func (s store) migrate(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `DROP TABLE IF EXISTS plain_accounts;
		CREATE TABLE plain_accounts (id bigserial PRIMARY KEY, owner text NOT NULL UNIQUE,
			balance float8 NOT NULL CHECK (balance >= 0), note text, created timestamptz NOT NULL DEFAULT now())`)
	return err
}

func (s store) open(ctx context.Context, owner string, balance float64) (int64, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, "INSERT INTO plain_accounts (owner, balance) VALUES ($1, $2) RETURNING id", owner, balance).Scan(&id)
	return id, err
}

func (s store) transfer(ctx context.Context, from, to int64, amount float64) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "UPDATE plain_accounts SET balance = balance - $1 WHERE id = $2", amount, from); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE plain_accounts SET balance = balance + $1 WHERE id = $2", amount, to); err != nil {
		return err
	}
	return tx.Commit()
}

func (s store) list(ctx context.Context) ([]account, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, owner, balance, note, created FROM plain_accounts ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []account
	for rows.Next() {
		var a account
		if err := rows.Scan(&a.ID, &a.Owner, &a.Balance, &a.Note, &a.Created); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func TestPlainDatabaseSQLProgram(t *testing.T) {
	ctx := testCtx(t)
	db := openDB(t, 4)
	s := store{db}
	if err := s.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	alice, err := s.open(ctx, "alice", 100)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := s.open(ctx, "bob", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.open(ctx, "alice", 1); sqlState(err) != "23505" {
		t.Errorf("duplicate owner: %v", err)
	}
	// Concurrent transfers through the pool; serialization failures retried.
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				err := s.transfer(ctx, alice, bob, 5)
				if sqlState(err) == "40001" {
					continue
				}
				errs <- err
				return
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// An overdraft violates the CHECK and rolls the transfer back.
	if err := s.transfer(ctx, bob, alice, 1000); sqlState(err) != "23514" {
		t.Errorf("overdraft: %v", err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE plain_accounts SET note = $1 WHERE id = $2", "vip", bob); err != nil {
		t.Fatal(err)
	}
	accts, err := s.list(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%d %s %v %v | %d %s %v %v", accts[0].ID, accts[0].Owner, accts[0].Balance, accts[0].Note,
		accts[1].ID, accts[1].Owner, accts[1].Balance, accts[1].Note)
	if want := fmt.Sprintf("%d alice 50 { false} | %d bob 50 {vip true}", alice, bob); got != want {
		t.Errorf("accounts: %s, want %s", got, want)
	}
	if time.Since(accts[0].Created) > time.Minute || accts[0].Created.IsZero() {
		t.Errorf("created: %v", accts[0].Created)
	}
	if err := db.QueryRowContext(ctx, "SELECT id FROM plain_accounts WHERE owner = $1", "carol").Scan(new(int64)); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v", err)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	if st := db.Stats(); st.OpenConnections > 4 {
		t.Errorf("%d connections open, limit 4", st.OpenConnections)
	}
}
