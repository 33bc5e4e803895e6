package pgline

import (
	"testing"

	"github.com/pgline/pgline/internal/sqllex"
)

// Texts that may commit must be seen as transaction control: a FATAL before
// their reply would otherwise be taken to mean nothing of them persisted.
func TestAuditTxoLexTransactionControl(t *testing.T) {
	for _, s := range []string{
		"-- comment\nCALL p()",
		"/* c */ CALL p()",
		"/* nested /* c */ */ COMMIT",
		"SELECT 1; COMMIT",
		"select 1;commit",
		"  \n\tEND",
		"((CALL p()))",
		"E'x'; COMMIT",
		"SELECT $$;$$; ROLLBACK",
		"SELECT 'it''s'; ABORT",
		"SELECT \"a;b\"; START TRANSACTION",
		"DO $$BEGIN NULL; END$$",
		"do language plpgsql $x$ begin null; end $x$",
		`SELECT 'a\'; COMMIT`,
		"SELECT 1 /* ; */ ; COMMIT",
		"SELECT U&'\\0041'; COMMIT",
	} {
		if !sqllex.Scan(s).TransactionControl {
			t.Errorf("%q: not seen as transaction control", s)
		}
	}
}
