// Package config reads how to connect as libpq does: Parse merges a DSN,
// the connection service file, the PG* environment variables and the
// defaults, checks every value and looks the password file up, and gives
// the result as Settings. Package dsn does the reading of each input;
// config decides what the inputs mean. It knows nothing of pgline's own
// types: package pgline turns Settings into its public Config
// (ParseConfig) and owns the connections.
//
// # Precedence
//
// Each key is read from the first of: the DSN (where the last occurrence
// of a key wins, and a key set to "" takes its default without looking
// further), the service named by service or PGSERVICE, the key's
// environment variable (an empty one is unset), the default. When no
// password is given, each host's is looked up in the password file.
//
// # Errors
//
// Every error of Parse starts with "pgline: cannot parse DSN: " and holds
// no value from the DSN, the service file or the environment, with one
// exception. A DSN may hold a password in any place, even where a key or
// another value was expected, so an error names only known keys (see
// Parse for the key list), counts, byte offsets, and where a bad value
// came from (an environment variable's name, a service file's path and
// line). The exception: a bad value of an enumerated key (sslmode,
// target_session_attrs, ...: a few fixed words) is shown, quoted, as libpq
// shows it, since it is what the user typed into that key; it is clipped
// to 64 bytes and not shown when it holds "=", as a key=value pair read
// as the value does ("sslmode= password=x"). settings.invalidValue alone
// shows it. A password given as one (password=, a URL's user:password@,
// PGPASSWORD, a bare word) cannot leak through an error; every error is
// built by parseError or dsnError, which keep to this rule.
//
// # Using it
//
//	s, err := config.Parse(conninfo, dsn.System(), defaultMaxConns)
//	if err != nil {
//		return err // safe to log: no value of the DSN in it
//	}
//	for _, h := range s.Hosts { ... }
package config
