package sqllex

import "testing"

// TestPrepares: Info.Prepares, the texts that may prepare a statement
// with SQL PREPARE.
func TestPrepares(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"PREPARE s AS SELECT 1", true},
		{"prepare s (int) AS SELECT $1", true},
		{`PREPARE "Odd" AS SELECT 1`, true},
		{"SELECT 1; PREPARE s AS SELECT 2", true},
		{"DO $$BEGIN EXECUTE 'PREPARE s AS SELECT 1'; END$$", true},
		{"DO 'BEGIN EXECUTE ''prepare s AS SELECT 1''; END'", true},
		{"PREPARE TRANSACTION 'x'", false},
		{"prepare transaction 'x'", false},
		{"SELECT prepared FROM t", false},
		{"EXECUTE s", false},
		{"DEALLOCATE s", false},
		{"-- PREPARE s\nSELECT 1", false},
		{"SELECT 'prepared'", false},
	} {
		if got := Scan(tc.sql).Prepares; got != tc.want {
			t.Errorf("Scan(%q).Prepares = %v, want %v", tc.sql, got, tc.want)
		}
	}
}
