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
// the test files verbatim (see checkDocSnippets): one per library.
func TestEcosystemDoc(t *testing.T) {
	t.Parallel()
	if tests := checkDocSnippets(t, "ecosystem.md"); len(tests) != 6 {
		t.Errorf("found %d snippets for docs/ecosystem.md in the test files, want 6: %v", len(tests), tests)
	}
}

// checkDocSnippets checks that docs/<doc> shows each snippet of the test
// files of this package, the code between the lines "// <doc>: TestName"
// and "// <doc>: end", verbatim in a Go block, right after a line that
// names its test and its file; that TestName is a test of that file; and
// that the document shows no Go code that is not one of them. It returns
// the snippets' test names, in the order of the files.
func checkDocSnippets(t *testing.T, doc string) []string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	marker := "// " + doc + ": "
	snippets := map[string]string{} // test name: code
	fileOf := map[string]string{}   // test name: its file
	var order []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		var code []string
		for _, line := range strings.Split(string(src), "\n") {
			if rest, ok := strings.CutPrefix(line, marker); ok {
				switch {
				case rest == "end" && name == "":
					t.Errorf("%s: %q with no snippet open", f, line)
				case rest == "end":
					snippets[name] = strings.TrimSpace(strings.Join(code, "\n"))
					name, code = "", nil
				case name != "":
					t.Errorf("%s: %q inside the snippet of %s", f, line, name)
				case fileOf[rest] != "":
					t.Errorf("%s: a second snippet of %s (the first is in %s)", f, rest, fileOf[rest])
				default:
					name = rest
					order = append(order, name)
					fileOf[name] = f
					if !strings.Contains(string(src), "\nfunc "+name+"(t *testing.T) {\n") {
						t.Errorf("%s: the snippet of %s names no test of this file", f, name)
					}
				}
				continue
			}
			if name != "" {
				code = append(code, line)
			}
		}
		if name != "" {
			t.Errorf("%s: the snippet of %s has no %q line", f, name, marker+"end")
		}
	}
	if len(order) == 0 {
		t.Fatalf("no snippet for docs/%s in the test files (no %q lines)", doc, marker+"TestName")
	}

	// The Go blocks of the document, each with the text just before it.
	var blocks []string
	var before []string
	lines := strings.Split(string(text), "\n")
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
					t.Errorf("docs/%s: the snippet of %s does not name its test in the lines before it", doc, test)
				}
				if !strings.Contains(before[i], "integration/"+fileOf[test]) {
					t.Errorf("docs/%s: the snippet of %s does not name its file, integration/%s, in the lines before it", doc, test, fileOf[test])
				}
			}
		}
		if !found {
			t.Errorf("docs/%s lacks the snippet of %s, verbatim:\n%s", doc, test, snippets[test])
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("docs/%s shows Go code that is no snippet of a test file:\n%s", doc, blocks[i])
		}
	}
	return order
}
