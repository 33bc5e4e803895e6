package dsn

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// The password file (libpq's ~/.pgpass) holds lines
//
//	hostname:port:database:username:password
//
// The first four fields are literal values or "*", which matches anything;
// ":" and "\" inside a field are escaped with "\". Lines starting with "#"
// are comments. The first matching line gives the password. On Unix the
// file is ignored unless it is a regular file that grants no access to
// group or others (chmod 0600).

// PassFile is the usable lines of a password file, in file order. The
// zero value has none.
type PassFile struct {
	entries []passEntry
}

// passEntry is one line of the password file, split and unescaped. A nil
// field is the wildcard "*".
type passEntry struct {
	host, port, database, user *string
	password                   string
}

// maxPassFileSize bounds how much of a password file is read.
const maxPassFileSize = 1 << 20

// ReadPassFile reads and splits the password file at path. A missing or
// unreadable file, one that is not a regular file, or (on Unix) one
// readable by group or others gives no entries and no error, as in libpq.
// A symbolic link is followed.
func ReadPassFile(path string) PassFile {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return PassFile{}
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return PassFile{}
	}
	f, err := os.Open(path)
	if err != nil {
		return PassFile{}
	}
	defer f.Close()
	var entries []passEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), maxPassFileSize)
	for sc.Scan() {
		if e, ok := parsePassLine(sc.Text()); ok {
			entries = append(entries, e)
		}
	}
	return PassFile{entries}
}

// Password returns the password of the first line matching host, port,
// database and user, or "". Fields are compared as strings: port is
// written in decimal without leading zeros, and the caller picks the host
// name a Unix socket is looked up under ("localhost" for a default socket
// directory, as in libpq).
func (f PassFile) Password(host, port, database, user string) string {
	match := func(field *string, v string) bool { return field == nil || *field == v }
	for _, e := range f.entries {
		if match(e.host, host) && match(e.port, port) && match(e.database, database) && match(e.user, user) {
			return e.password
		}
	}
	return ""
}

// parsePassLine splits one line; comments, blank lines and lines with fewer
// than five fields give false.
func parsePassLine(line string) (passEntry, bool) {
	line = strings.TrimRight(line, "\r")
	if line == "" || line[0] == '#' {
		return passEntry{}, false
	}
	var fields [4]*string
	rest := line
	for i := range fields {
		v, wild, r, ok := passField(rest)
		if !ok {
			return passEntry{}, false
		}
		if !wild {
			fields[i] = &v
		}
		rest = r
	}
	// The password runs to the next unescaped ":" or the end of the line.
	var b strings.Builder
	for i := 0; i < len(rest) && rest[i] != ':'; i++ {
		if rest[i] == '\\' && i+1 < len(rest) {
			i++
		}
		b.WriteByte(rest[i])
	}
	return passEntry{fields[0], fields[1], fields[2], fields[3], b.String()}, true
}

// passField reads one ":"-terminated field from s: its unescaped value,
// whether it is the wildcard "*", and the text after the ":".
func passField(s string) (value string, wildcard bool, rest string, ok bool) {
	if strings.HasPrefix(s, "*:") {
		return "", true, s[2:], true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == ':':
			return b.String(), false, s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", false, "", false
}
