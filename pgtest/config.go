package pgtest

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// confValue quotes v as a postgresql.conf string value.
func confValue(v string) string {
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// syncConfName is the file in the data directory that holds the
// synchronous replication settings of a primary (see syncConf). It is
// included at the end of postgresql.conf, so that it wins over
// Options.Settings, and a standby empties its copy.
const syncConfName = "pgtest_sync.conf"

// postgresqlConf returns the settings pgtest appends to the postgresql.conf
// written by initdb for a server of major version major; later lines win,
// so Options.Settings come last, followed only by the include of
// syncConfName.
func postgresqlConf(opts *Options, socketDir string, ipv6 bool, tf *tlsFiles, major int) string {
	var b strings.Builder
	set := func(name, value string) {
		fmt.Fprintf(&b, "%s = %s\n", name, confValue(value))
	}
	b.WriteString("\n# Added by pgtest.\n")
	if ipv6 {
		set("listen_addresses", "127.0.0.1,::1")
	} else {
		set("listen_addresses", "127.0.0.1")
	}
	set("unix_socket_directories", socketDir)
	set("fsync", "off")
	set("synchronous_commit", "off")
	set("full_page_writes", "off")
	set("max_connections", "200")
	set("shared_buffers", "32MB")
	set("logging_collector", "off")
	// Keep some WAL for standbys that connect a little after their base
	// backup (StartStandby); wal_level and max_wal_senders allow them by
	// default since PostgreSQL 10.
	if major >= 13 {
		set("wal_keep_size", "64MB")
	} else {
		set("wal_keep_segments", "4")
	}
	if tf != nil {
		setTLS(&b, tf)
	}
	names := make([]string, 0, len(opts.Settings))
	for n := range opts.Settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		set(n, opts.Settings[n])
	}
	fmt.Fprintf(&b, "include_if_exists %s\n", confValue(syncConfName))
	return b.String()
}

// setTLS writes the settings that turn ssl on with the files of tf.
func setTLS(b *strings.Builder, tf *tlsFiles) {
	fmt.Fprintf(b, "ssl = 'on'\n")
	fmt.Fprintf(b, "ssl_cert_file = %s\n", confValue(tf.serverCert))
	fmt.Fprintf(b, "ssl_key_file = %s\n", confValue(tf.serverKey))
	fmt.Fprintf(b, "ssl_ca_file = %s\n", confValue(tf.caCert))
}

// standbyConf returns the settings a standby appends to the postgresql.conf
// copied from its primary: its own socket directory and TLS files (tf, nil
// without TLS), and hot_standby.
func standbyConf(socketDir string, tf *tlsFiles) string {
	var b strings.Builder
	b.WriteString("\n# Added by pgtest for a standby.\n")
	fmt.Fprintf(&b, "unix_socket_directories = %s\n", confValue(socketDir))
	b.WriteString("hot_standby = 'on'\n")
	if tf != nil {
		setTLS(&b, tf)
	}
	return b.String()
}

// syncConf returns the content of syncConfName for a primary whose
// synchronous standbys are names (by application_name): empty when there
// are none, else any one of them must confirm each commit, after applying
// it (pgtest's synchronous_commit = off would not wait at all).
func syncConf(names []string) string {
	if len(names) == 0 {
		return ""
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = `"` + n + `"`
	}
	return "# Written by pgtest for its synchronous standbys.\n" +
		"synchronous_standby_names = " + confValue("ANY 1 ("+strings.Join(quoted, ", ")+")") + "\n" +
		"synchronous_commit = 'remote_apply'\n"
}

// hbaConf returns the whole pg_hba.conf: Options.HBA first, then the trusted
// superuser (also for replication, which standbys need), then one block per
// user.
func hbaConf(opts *Options, ipv6 bool) string {
	var b strings.Builder
	addrs := []string{"127.0.0.1/32"}
	if ipv6 {
		addrs = append(addrs, "::1/128")
	}
	line := func(typ, db, user, addr, method string) {
		fmt.Fprintf(&b, "%-8s %s %s %s %s\n", typ, db, hbaName(user), addr, method)
	}
	b.WriteString("# Written by pgtest.\n")
	for _, l := range opts.HBA {
		b.WriteString(l + "\n")
	}
	for _, db := range []string{"all", "replication"} {
		line("local", db, superuser, "", "trust")
		for _, a := range addrs {
			line("host", db, superuser, a, "trust")
		}
	}
	for _, u := range opts.users() {
		typ := "host"
		if u.HostSSLOnly || u.Method == "cert" {
			typ = "hostssl"
		}
		if u.Method != "cert" {
			line("local", "all", u.Name, "", u.Method)
		}
		for _, a := range addrs {
			line(typ, "all", u.Name, a, u.Method)
		}
	}
	return b.String()
}

// hbaName quotes a role name for pg_hba.conf, so that names like "all" or
// "+group" are taken literally.
func hbaName(name string) string {
	return `"` + name + `"`
}

// usersSQL creates the roles of opts.users().
func usersSQL(opts *Options) string {
	var b strings.Builder
	for _, u := range opts.users() {
		enc := "scram-sha-256"
		if u.Method == "md5" || u.Method == "password" {
			enc = "md5"
		}
		fmt.Fprintf(&b, "SET password_encryption = %s;\n", quoteLiteral(enc))
		fmt.Fprintf(&b, "CREATE ROLE %s LOGIN", quoteIdent(u.Name))
		if u.Password != "" {
			fmt.Fprintf(&b, " PASSWORD %s", quoteLiteral(u.Password))
		}
		b.WriteString(";\n")
		fmt.Fprintf(&b, "GRANT ALL ON DATABASE postgres TO %s;\n", quoteIdent(u.Name))
		fmt.Fprintf(&b, "GRANT ALL ON SCHEMA public TO %s;\n", quoteIdent(u.Name))
	}
	b.WriteString("RESET password_encryption;\n")
	return b.String()
}

// appendFile appends s to the file at path, keeping its owner and mode.
func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("pgtest: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pgtest: write %s: %w", path, err)
	}
	return nil
}

// writeOwned writes content to the file at path (mode 0600), creating it
// if need be, and gives it to the server account.
func (s *Server) writeOwned(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return s.owner.chown(path)
}

// rewriteFile replaces the content of the existing file at path, keeping its
// owner and mode.
func rewriteFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("pgtest: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pgtest: write %s: %w", path, err)
	}
	return nil
}
