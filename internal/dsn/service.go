package dsn

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The connection service file (libpq's pg_service.conf) names sets of
// connection keys:
//
//	# comment
//	[mydb]
//	host=db1.example.com
//	dbname=app
//
// A DSN selects one with service=mydb (or PGSERVICE=mydb). The per-user
// file (PGSERVICEFILE, default ~/.pg_service.conf) is searched first, then
// the system file pg_service.conf in PGSYSCONFDIR (default
// /etc/postgresql-common, where Debian's libpq looks); the first file
// holding the service is used.

// DefaultSysConfDir is where pg_service.conf is looked for without
// PGSYSCONFDIR.
const DefaultSysConfDir = "/etc/postgresql-common"

// maxServiceFileLine bounds one line of a service file.
const maxServiceFileLine = 64 << 10

// ServiceFiles returns the service files searched, in order: PGSERVICEFILE
// or else ~/.pg_service.conf (left out when the home directory is
// unknown), then pg_service.conf in PGSYSCONFDIR or DefaultSysConfDir.
func (src *Source) ServiceFiles() []string {
	var files []string
	if f := src.Env("PGSERVICEFILE"); f != "" {
		files = append(files, f)
	} else if h := src.HomeDir(); h != "" {
		files = append(files, filepath.Join(h, ".pg_service.conf"))
	}
	dir := src.Env("PGSYSCONFDIR")
	if dir == "" {
		dir = DefaultSysConfDir
	}
	return append(files, filepath.Join(dir, "pg_service.conf"))
}

// Service returns the keys of the service name, in file order, and the
// file that defines it: the first of ServiceFiles holding a section of
// that name. A service no file defines is an error, and so is a file that
// cannot be read (a missing one is skipped) or a syntax error met before
// the section ends. Errors hold file paths and line numbers, never values.
func (src *Source) Service(name string) (pairs []Pair, file string, err error) {
	files := src.ServiceFiles()
	for _, f := range files {
		pairs, found, err := ReadServiceFile(f, name)
		if err != nil {
			return nil, "", err
		}
		if found {
			return pairs, f, nil
		}
	}
	return nil, "", fmt.Errorf("the service named by service or PGSERVICE is not defined in %s", strings.Join(files, " or "))
}

// ReadServiceFile returns the keys of section name in the service file at
// path, in file order, and whether the section exists. Only the first
// section of that name counts. A missing file is not an error; a key
// named service (nesting) is.
func ReadServiceFile(path, name string) ([]Pair, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("cannot read service file: %v", err)
	}
	defer f.Close()

	var pairs []Pair
	found, inSection := false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), maxServiceFileLine)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#':
			continue
		case line[0] == '[':
			if inSection {
				return pairs, true, nil
			}
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, false, fmt.Errorf("syntax error in service file %s, line %d: missing \"]\"", path, lineNo)
			}
			inSection = line[1:end] == name
			found = found || inSection
			continue
		case !inSection:
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok || key == "":
			return nil, false, fmt.Errorf("syntax error in service file %s, line %d: expected key=value", path, lineNo)
		case key == "service":
			return nil, false, fmt.Errorf("syntax error in service file %s, line %d: nested service specifications are not supported", path, lineNo)
		}
		pairs = append(pairs, Pair{key, value})
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("cannot read service file %s: %v", path, err)
	}
	return pairs, found, nil
}
