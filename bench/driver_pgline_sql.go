package main

import _ "github.com/pgline/pgline/stdlib" // registers "pgline"

// namePglineSQL is pgline through database/sql.
const namePglineSQL = "pgline/stdlib"

// pglineSQLDriver is pgline through database/sql
// (github.com/pgline/pgline/stdlib), run like the other database/sql
// drivers. pgline encodes []string as text[] itself.
func pglineSQLDriver() *driver {
	return sqlDriver(namePglineSQL, "pgline", func(s []string) any { return s })
}
