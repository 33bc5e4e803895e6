package sqllex_test

import (
	"fmt"

	"github.com/pgline/pgline/internal/sqllex"
)

func ExampleScan() {
	for _, sql := range []string{
		"SELECT deallocated_at, ';' FROM t",
		"/* load */ copy t (a, b) from stdin",
		"DISCARD TEMP; RESET ALL",
		"DO $$BEGIN EXECUTE 'DEALLOCATE ALL'; END$$",
	} {
		info := sqllex.Scan(sql)
		fmt.Printf("%q %d copy=%v deallocates=%v keepsOwnSync=%v\n",
			info.FirstKeyword, info.Statements, info.CopyFromStdin, info.Deallocates, info.KeepsOwnSync())
	}
	// Output:
	// "SELECT" 1 copy=false deallocates=false keepsOwnSync=false
	// "copy" 1 copy=true deallocates=false keepsOwnSync=true
	// "DISCARD" 2 copy=false deallocates=false keepsOwnSync=false
	// "DO" 1 copy=false deallocates=true keepsOwnSync=true
}
