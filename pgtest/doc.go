// Package pgtest starts a throwaway PostgreSQL cluster for tests and
// benchmarks: initdb into a fresh temporary directory, a free port on
// 127.0.0.1 (and ::1), a Unix socket, and the users, pg_hba.conf entries and
// TLS certificates the test asks for. It uses only the standard library and
// the PostgreSQL programs initdb, pg_ctl, postgres and psql.
//
// # Using it from TestMain
//
// Start one cluster per test binary with Run and share it:
//
//	var srv *pgtest.Server
//
//	func TestMain(m *testing.M) {
//		os.Exit(pgtest.Run(m, pgtest.Options{
//			TLS: true,
//			Users: []pgtest.User{
//				{Name: "alice", Password: "secret", Method: "scram-sha-256"},
//			},
//		}, &srv))
//	}
//
//	func TestSomething(t *testing.T) {
//		dsn := srv.DSN("user=alice", "password=secret") // later keys win
//		...
//	}
//
// Run stops the cluster and removes its directory after the tests. If the
// cluster cannot start, Run prints why and returns 1: tests that need a
// server never skip silently. Start and Stop do the same by hand, for a
// cluster of one test's own.
//
// Server.Exec and Server.Query run SQL as the superuser "postgres" through
// psql over the Unix socket, for setup and checks that must not depend on
// the driver under test.
//
// Each cluster has its own directory and port, so several test binaries
// (go test ./...) can run at once. A cluster left behind by a test binary
// that was killed is stopped and removed by the next Start.
//
// # Standbys and failover
//
// Server.StartStandby makes a hot standby that streams from a cluster (a
// base backup into its own directory, its own port); it is a Server like
// any other, read-only until promoted. With StandbyOptions.Synchronous the
// primary waits, on every commit, until a synchronous standby has applied
// it. Server.Shutdown stops a postmaster ("smart", "fast" or "immediate",
// the last a crash) but keeps its files, Server.Restart starts it again on
// the same port, and Server.Promote turns a standby into a primary:
//
//	primary, err := pgtest.Start(pgtest.Options{})
//	...
//	defer primary.Stop()
//	standby, err := primary.StartStandby(pgtest.StandbyOptions{Synchronous: true})
//	...
//	defer standby.Stop()
//	// For the driver under test: whichever of the two is the primary.
//	dsn := fmt.Sprintf("host=127.0.0.1,127.0.0.1 port=%d,%d user=postgres dbname=postgres "+
//		"sslmode=disable target_session_attrs=read-write", primary.Port, standby.Port)
//	// ... commit through the driver: the row is on the standby already.
//	primary.Shutdown("immediate") // the primary crashes
//	standby.Promote()             // and the standby takes over
//	// ... the driver reconnects, to the new primary.
//
// Every cluster pgtest starts can have standbys: pg_hba.conf trusts
// replication connections of the superuser, and WAL is kept for them
// (wal_keep_size = 64MB). Stop each standby; stopping the primary does
// not. A standby of an external server cannot be made.
//
// # Binaries
//
// initdb, pg_ctl and postgres are taken from PATH (following symlinks to
// their real directory) or else from the highest version under
// /usr/lib/postgresql/*/bin; psql from the same directory or PATH, and
// pg_basebackup (for standbys) from the same directory. Without them Start
// fails and says what to install (apt-get install -y postgresql).
// Options.BinDir, or else the environment variable PGLINE_PG_BINDIR, names
// the directory to take them from instead: how a test run picks the
// server version it is against.
//
// A directory without pg_basebackup (the npm registry's server packages
// have only initdb, pg_ctl and postgres) still gives standbys:
// StartStandby then copies the data directory while one psql session
// holds a backup open (pg_backup_start and pg_backup_stop, or
// pg_start_backup and pg_stop_backup before PostgreSQL 15), leaving out
// the running server's own files and the WAL, which the standby streams
// from the primary (wal_keep_size keeps it). psql of another major
// version, such as the system's, serves.
//
// # An existing server: PGLINE_TEST_DSN
//
// When the environment variable PGLINE_TEST_DSN holds a DSN (key=value or
// postgres:// URL), Start and Run start nothing: the Server describes that
// server (External is true), DSN returns it plus any extra pairs, Exec and
// Query run psql against it, and Stop does nothing. Options are ignored, so
// tests needing particular users or TLS must create them there themselves.
//
//	PGLINE_TEST_DSN='host=db.example port=5432 user=postgres password=x' go test ./...
//
// # Running as root
//
// PostgreSQL refuses to run as root. When the test process is root (as in
// many containers), initdb, pg_ctl and the server run as the user "postgres"
// if it exists, else "nobody"; the temporary directory is given to that
// user. psql and the test itself stay root, which may read every file; the
// client key (ClientKeyFile) stays owned by the test process with mode 0600,
// as libpq demands. The temporary directory must be reachable by that user:
// if TMPDIR points into /root, set it to /tmp.
package pgtest
