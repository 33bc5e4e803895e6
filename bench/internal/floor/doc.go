// Package floor is the benchmark's raw floor client: the least work a
// PostgreSQL client can do for a query.
//
// It speaks the frontend/backend protocol (version 3.0) itself over a
// net.Conn. A query is one Bind/Execute/Sync of a statement prepared once;
// the reply is read as framing only — a 5-byte header (type, int32 length),
// then the body is discarded unparsed — up to ReadyForQuery. It counts
// DataRow messages and received bytes so that callers can check the answer,
// and reads the body of an ErrorResponse only to report it.
//
// Protocol flow of one query (or of n, pipelined):
//
//	client: Bind(stmt, params) Execute("" , 0) Sync   [× n, one write]
//	server: BindComplete DataRow* CommandComplete ReadyForQuery   [× n]
//
// Startup supports trust, cleartext password, md5 and SCRAM-SHA-256
// authentication, without TLS (sslmode=disable).
package floor
