package integration

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pgline/pgline/integration/port/pglineapp"
	"github.com/pgline/pgline/integration/port/pgxapp"
)

// TestPortFromPgx ports a pgx program (port/pgxapp) to pgline with what
// docs/from-pgx.md says and nothing else: its changes by hand (the diff
// blocks of "Porting, step by step"), then its renames (the table), then
// one import of each path. The result must be port/pglineapp as it is
// checked in (PGLINE_UPDATE_PORT=1 writes it), and the two programs,
// run against the same server, must print the same.
func TestPortFromPgx(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/from-pgx.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("port/pgxapp/app.go")
	if err != nil {
		t.Fatal(err)
	}
	steps := portSection(t, string(doc))
	ported := string(src)
	for _, h := range portHunks(steps) {
		ported = applyHunk(t, ported, h)
	}
	renames := portRenames(steps)
	if len(renames) < 10 {
		t.Fatalf("docs/from-pgx.md: %d renames found in its table, want the table", len(renames))
	}
	for _, r := range renames {
		ported = renameAll(ported, r[0], r[1])
	}
	ported = strings.Replace(ported, "package pgxapp", "package pglineapp", 1)
	ported = dedupeImports(ported)
	out, err := format.Source([]byte(ported))
	if err != nil {
		t.Fatalf("the ported program does not parse: %v\n%s", err, ported)
	}
	if os.Getenv("PGLINE_UPDATE_PORT") != "" {
		if err := os.WriteFile("port/pglineapp/app.go", out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile("port/pglineapp/app.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, out) {
		t.Fatalf("port/pglineapp/app.go is not what docs/from-pgx.md makes of port/pgxapp/app.go (PGLINE_UPDATE_PORT=1 rewrites it); the port gives:\n%s", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var fromPgx, fromPgline bytes.Buffer
	if err := pgxapp.Run(ctx, newDatabase(t), &fromPgx); err != nil {
		t.Fatalf("pgx program: %v", err)
	}
	if err := pglineapp.Run(ctx, newDatabase(t), &fromPgline); err != nil {
		t.Fatalf("ported program: %v", err)
	}
	if fromPgx.String() != fromPgline.String() {
		t.Fatalf("the programs print differently\npgx:\n%s\npgline:\n%s", &fromPgx, &fromPgline)
	}
	for _, want := range []string{"copied 2", "duplicate: 23505 product_name_key on product", "bad query: 42703", "missing: true", "batch: UPDATE 1, stock 14", "prepared true, traced true"} {
		if !strings.Contains(fromPgline.String(), want) {
			t.Errorf("the programs' output lacks %q:\n%s", want, &fromPgline)
		}
	}
	t.Logf("both print:\n%s", &fromPgline)
}

// portSection returns the section "Porting, step by step" of the doc.
func portSection(t *testing.T, doc string) string {
	_, rest, ok := strings.Cut(doc, "\n## Porting, step by step\n")
	if !ok {
		t.Fatal(`docs/from-pgx.md has no section "## Porting, step by step"`)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// portRenames returns the rows of the section's table whose two cells are
// code: | `pgx's` | `pgline's` |.
func portRenames(section string) [][2]string {
	var rows [][2]string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		from, to := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if len(from) < 2 || len(to) < 2 || from[0] != '`' || to[0] != '`' || from[len(from)-1] != '`' || to[len(to)-1] != '`' {
			continue
		}
		rows = append(rows, [2]string{from[1 : len(from)-1], to[1 : len(to)-1]})
	}
	return rows
}

// portHunks returns the section's diff blocks, each as its lines.
func portHunks(section string) [][]string {
	var hunks [][]string
	lines := strings.Split(section, "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```diff" {
			continue
		}
		var h []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			h = append(h, lines[i])
		}
		hunks = append(hunks, h)
	}
	return hunks
}

// applyHunk replaces, in src, the lines a hunk removes and keeps (compared
// without their indentation) by the lines it keeps and adds. The hunk
// must match exactly once.
func applyHunk(t *testing.T, src string, hunk []string) string {
	t.Helper()
	var old, repl []string
	for _, l := range hunk {
		if l == "" {
			t.Fatalf("docs/from-pgx.md: an empty line in a diff block:\n%s", strings.Join(hunk, "\n"))
		}
		body := strings.TrimSpace(l[1:])
		switch l[0] {
		case ' ':
			old, repl = append(old, body), append(repl, body)
		case '-':
			old = append(old, body)
		case '+':
			repl = append(repl, body)
		default:
			t.Fatalf("docs/from-pgx.md: a diff line starts with %q: %s", l[0], l)
		}
	}
	lines := strings.Split(src, "\n")
	at := -1
	for i := 0; i+len(old) <= len(lines); i++ {
		match := true
		for j, o := range old {
			if strings.TrimSpace(lines[i+j]) != o {
				match = false
				break
			}
		}
		if match {
			if at >= 0 {
				t.Fatalf("docs/from-pgx.md: a diff block matches the pgx program twice:\n%s", strings.Join(hunk, "\n"))
			}
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("docs/from-pgx.md: a diff block does not match the pgx program:\n%s", strings.Join(hunk, "\n"))
	}
	out := append(append(append([]string{}, lines[:at]...), repl...), lines[at+len(old):]...)
	return strings.Join(out, "\n")
}

// renameAll replaces each from in s by to where from stands as a whole:
// an end of from that is part of a name is not next to more of that name.
func renameAll(s, from, to string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, from)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(from)
		whole := !(isIdent(from[0]) && i > 0 && isIdent(s[i-1])) &&
			!(isIdent(from[len(from)-1]) && j < len(s) && isIdent(s[j]))
		b.WriteString(s[:i])
		if whole {
			b.WriteString(to)
		} else {
			b.WriteString(from)
		}
		s = s[j:]
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// dedupeImports drops a repeated import line, as goimports would.
func dedupeImports(src string) string {
	head, rest, ok := strings.Cut(src, "import (\n")
	if !ok {
		return src
	}
	block, tail, _ := strings.Cut(rest, "\n)\n")
	seen := map[string]bool{}
	var kept []string
	for _, l := range strings.Split(block, "\n") {
		k := strings.TrimSpace(l)
		if k != "" && seen[k] {
			continue
		}
		seen[k] = true
		kept = append(kept, l)
	}
	return head + "import (\n" + strings.Join(kept, "\n") + "\n)\n" + tail
}
