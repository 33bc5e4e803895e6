package integration

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgline/pgline"
	"github.com/pgline/pgline/stdlib"
)

// The code between the lines "// ecosystem.md: TestName" and
// "// ecosystem.md: end", here and in each library's test file, is shown
// in docs/ecosystem.md verbatim (TestEcosystemDoc checks), as the snippet
// of the test named.

// ecosystem.md: TestEcosystemDatabaseSQL
// connectSQL opens a pool of pgline connections for database/sql.
func connectSQL(dsn string) (*sql.DB, error) {
	// import _ "github.com/pgline/pgline/stdlib"
	db, err := sql.Open("pgline", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(10)
	return db, nil
}

// connectConfig builds the connections' settings in code.
func connectConfig(dsn string) (*sql.DB, error) {
	cfg, err := pgline.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ApplicationName = "billing"
	return stdlib.OpenDB(cfg), nil
}

// ecosystem.md: end

func TestEcosystemDatabaseSQL(t *testing.T) {
	t.Parallel()
	dsn := newDatabase(t)
	for _, tc := range []struct {
		open func(string) (*sql.DB, error)
		app  string
	}{{connectSQL, ""}, {connectConfig, "billing"}} {
		db, err := tc.open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var sum int
		var app string
		if err := db.QueryRow("SELECT $1::int + $2, current_setting('application_name')", 40, 2).Scan(&sum, &app); err != nil {
			t.Fatal(err)
		}
		if sum != 42 || app != tc.app {
			t.Errorf("sum %d, application_name %q; want 42, %q", sum, app, tc.app)
		}
	}
}

// TestEcosystemDoc checks that docs/ecosystem.md shows each snippet of
// the test files verbatim, right after a line naming its test, and no Go code
// that is not one of them.
func TestEcosystemDoc(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/ecosystem.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	snippets := map[string]string{} // test name: code
	var order []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var code []string
		for line := range strings.Lines(string(src)) {
			line = strings.TrimRight(line, "\n")
			if rest, ok := strings.CutPrefix(line, "// ecosystem.md: "); ok {
				if rest == "end" {
					snippets[name] = strings.TrimSpace(strings.Join(code, "\n"))
					name, code = "", nil
				} else {
					name = rest
					order = append(order, name)
				}
				continue
			}
			if name != "" {
				code = append(code, line)
			}
		}
	}
	if len(snippets) != 6 {
		t.Fatalf("found %d snippets in the test files: %v", len(snippets), order)
	}

	// The Go blocks of the document, each with the text just before it.
	var blocks []string
	var before []string
	lines := strings.Split(string(doc), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```go" {
			continue
		}
		var b []string
		j := i + 1
		for ; j < len(lines) && lines[j] != "```"; j++ {
			b = append(b, lines[j])
		}
		blocks = append(blocks, strings.TrimSpace(strings.Join(b, "\n")))
		lo := max(0, i-3)
		before = append(before, strings.Join(lines[lo:i], "\n"))
		i = j
	}
	used := make([]bool, len(blocks))
	for _, test := range order {
		found := false
		for i, b := range blocks {
			if b == snippets[test] {
				found, used[i] = true, true
				if !strings.Contains(before[i], test) {
					t.Errorf("docs/ecosystem.md: the snippet of %s does not name its test in the lines before it", test)
				}
			}
		}
		if !found {
			t.Errorf("docs/ecosystem.md lacks the snippet of %s, verbatim:\n%s", test, snippets[test])
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("docs/ecosystem.md shows Go code that is no snippet of a test file:\n%s", blocks[i])
		}
	}
}
