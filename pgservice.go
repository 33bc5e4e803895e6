package pgline

import (
	"bufio"
	"errors"
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
// holding the service is used. Its keys fill in what the DSN leaves unset
// and take precedence over the environment.

// defaultSysConfDir is where pg_service.conf is looked for without
// PGSYSCONFDIR.
const defaultSysConfDir = "/etc/postgresql-common"

// maxServiceFileLine bounds one line of a service file.
const maxServiceFileLine = 64 << 10

// applyService adds the keys of the service named by service or PGSERVICE
// to s, without replacing keys already set.
func applyService(s settings, src *configSource) error {
	name := s.get("service")
	if _, inDSN := s["service"]; !inDSN {
		name = src.env("PGSERVICE")
	}
	if name == "" {
		return nil
	}
	var files []string
	if f := src.env("PGSERVICEFILE"); f != "" {
		files = append(files, f)
	} else if h := src.homeDir(); h != "" {
		files = append(files, filepath.Join(h, ".pg_service.conf"))
	}
	dir := src.env("PGSYSCONFDIR")
	if dir == "" {
		dir = defaultSysConfDir
	}
	files = append(files, filepath.Join(dir, "pg_service.conf"))

	for _, f := range files {
		pairs, found, err := readServiceFile(f, name)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		for _, p := range pairs {
			if _, ok := s[p.key]; !ok {
				s[p.key] = setting{value: p.value, origin: "service file " + f}
			}
		}
		return nil
	}
	return parseError("the service named by service or PGSERVICE is not defined in %s", strings.Join(files, " or "))
}

// readServiceFile returns the keys of section name in the service file
// path, and whether the section exists. A missing file is not an error.
func readServiceFile(path, name string) ([]dsnPair, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, parseError("cannot read service file: %v", err)
	}
	defer f.Close()

	var pairs []dsnPair
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
				return pairs, true, nil // only the first section of that name counts
			}
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, false, parseError("syntax error in service file %s, line %d: missing \"]\"", path, lineNo)
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
			return nil, false, parseError("syntax error in service file %s, line %d: expected key=value", path, lineNo)
		case key == "service":
			return nil, false, parseError("syntax error in service file %s, line %d: nested service specifications are not supported", path, lineNo)
		}
		pairs = append(pairs, dsnPair{key, value})
	}
	if err := sc.Err(); err != nil {
		return nil, false, parseError("cannot read service file %s: %v", path, err)
	}
	return pairs, found, nil
}
