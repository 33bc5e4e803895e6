// Package dsn reads what libpq reads to connect: connection strings (DSNs)
// in both forms, the PG* environment variables, the password file and the
// connection service file. It is the one implementation that package
// config (behind pgline's ParseConfig), pgline's SetDSNParam and package
// pgtest use; it builds no settings and checks no values.
//
// # DSNs
//
// Split turns a DSN into ordered key/value pairs, with libpq's rules for
// the key=value form
//
//	host=db1 port=5432 dbname='my db' password='it\'s'
//
// and for URLs, multi-host ones included:
//
//	postgres://user:pass@db1:5432,db2/mydb?sslmode=require
//
// A key may come more than once; the last one wins (Lookup). Render writes
// pairs back in key=value form, Quote quotes one value, Set adds a setting
// to a DSN of either form and Join appends settings to a key=value DSN.
//
// Errors never quote the DSN: a malformed one may hold a password in any
// place, so messages name a key the caller declares known, or a byte
// offset. They carry no prefix; callers add their own.
//
// # Outside the DSN
//
// A Source is the environment, the operating-system user and the socket
// directories; System is the real one, and tests build their own. Through
// it come the environment variable of each keyword (EnvVars, Get), the
// default files (DefaultPassFile, UserFile, ServiceFiles) and host
// (DefaultHost), and the keys of a service (Service). ReadPassFile and
// PassFile.Password read the password file.
package dsn
