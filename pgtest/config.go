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

// postgresqlConf returns the settings pgtest appends to the postgresql.conf
// written by initdb; later lines win, so Options.Settings come last.
func postgresqlConf(opts *Options, socketDir string, ipv6 bool, tf *tlsFiles) string {
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
	if tf != nil {
		set("ssl", "on")
		set("ssl_cert_file", tf.serverCert)
		set("ssl_key_file", tf.serverKey)
		set("ssl_ca_file", tf.caCert)
	}
	names := make([]string, 0, len(opts.Settings))
	for n := range opts.Settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		set(n, opts.Settings[n])
	}
	return b.String()
}

// hbaConf returns the whole pg_hba.conf: Options.HBA first, then the trusted
// superuser, then one block per user.
func hbaConf(opts *Options, ipv6 bool) string {
	var b strings.Builder
	addrs := []string{"127.0.0.1/32"}
	if ipv6 {
		addrs = append(addrs, "::1/128")
	}
	line := func(typ, user, addr, method string) {
		fmt.Fprintf(&b, "%-8s all %s %s %s\n", typ, hbaName(user), addr, method)
	}
	b.WriteString("# Written by pgtest.\n")
	for _, l := range opts.HBA {
		b.WriteString(l + "\n")
	}
	line("local", superuser, "", "trust")
	for _, a := range addrs {
		line("host", superuser, a, "trust")
	}
	for _, u := range opts.users() {
		typ := "host"
		if u.HostSSLOnly || u.Method == "cert" {
			typ = "hostssl"
		}
		if u.Method != "cert" {
			line("local", u.Name, "", u.Method)
		}
		for _, a := range addrs {
			line(typ, u.Name, a, u.Method)
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
