package pgline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pgline/pgline/internal/session"
)

// The engine's rules that live in one place (docs/architecture.md,
// section 5), pinned against the source: a change that writes around
// them fails here, with the place to use instead.

// sessionDir holds the session engine (internal/session).
const sessionDir = "internal/session"

// parseRootFiles parses the non-test files of the package and of the
// session engine, by path (the engine's under sessionDir).
func parseRootFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, dir := range []string{".", sessionDir} {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = f
			n++
		}
		if n < 10 {
			t.Fatalf("parsed %d files in %s: not the package's directory?", n, dir)
		}
	}
	return files
}

// inSession reports whether the file at path is one of the session's
// named base (or any of its files, for "").
func inSession(path, base string) bool {
	return filepath.Dir(path) == sessionDir && (base == "" || filepath.Base(path) == base)
}

// eachMethodCall calls f for every call of a selector (x.M(...)) in the
// package's non-test files, with the file's name; it returns how many
// calls f counted (f reports whether the call is one it looks for).
func eachMethodCall(t *testing.T, f func(name string, call *ast.CallExpr, sel *ast.SelectorExpr) bool) int {
	t.Helper()
	found := 0
	for name, file := range parseRootFiles(t) {
		ast.Inspect(file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && f(name, call, sel) {
					found++
				}
			}
			return true
		})
	}
	return found
}

// exprText renders a selector chain (c.writer.sock, r.req) as text.
func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	case *ast.ParenExpr:
		return exprText(e.X)
	case *ast.StarExpr:
		return exprText(e.X)
	}
	return "?"
}

// TestArchRequestFixedAtSubmission: outside the queue and its reader
// (the session's pipeline.go, reply.go), no code assigns a request's
// field: what a request is goes in its ReqSpec, given to
// Session.submitLocked.
func TestArchRequestFixedAtSubmission(t *testing.T) {
	fields := map[string]bool{}
	for _, rt := range []reflect.Type{reflect.TypeFor[session.Request](), reflect.TypeFor[session.ReqSpec]()} {
		for f := range rt.Fields() {
			fields[f.Name] = true
		}
	}
	found := 0
	for name, f := range parseRootFiles(t) {
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for _, lhs := range as.Lhs {
				sel, ok := lhs.(*ast.SelectorExpr)
				if !ok || !fields[sel.Sel.Name] {
					continue
				}
				recv := exprText(sel.X)
				if !strings.EqualFold(recv, "req") && !strings.HasSuffix(strings.ToLower(recv), ".req") {
					continue
				}
				found++
				if !inSession(name, "pipeline.go") && !inSession(name, "reply.go") {
					t.Errorf("%s: %s.%s assigned outside the queue (the session's pipeline.go, reply.go): put it in the request's ReqSpec", name, recv, sel.Sel.Name)
				}
			}
			return true
		})
	}
	if found == 0 {
		t.Fatal("no assignment to a request's field found anywhere: the check looks at nothing")
	}
}

// TestArchOnlyWriterWritesSocket: once the startup is done, only the
// writer (the session's writer.go, writer_sock_*.go) writes to the
// connection's socket; the startup (the session's startup.go, connect.go,
// and tls.go's negotiateTLS) writes before the pipeline exists, and a
// CancelRequest goes on a socket of its own (the session's cancel.go).
func TestArchOnlyWriterWritesSocket(t *testing.T) {
	allowed := func(name string) bool {
		base := filepath.Base(name)
		if inSession(name, "") {
			return strings.HasPrefix(base, "writer") || base == "cancel.go" || base == "startup.go"
		}
		return base == "connect.go" || base == "tls.go"
	}
	isSocket := func(e string) bool {
		e = strings.ToLower(e)
		return strings.HasSuffix(e, "netconn") || strings.HasSuffix(e, ".sock") || e == "sock"
	}
	found := eachMethodCall(t, func(name string, call *ast.CallExpr, sel *ast.SelectorExpr) bool {
		recv := exprText(sel.X)
		socket := isSocket(recv)
		writes := strings.HasPrefix(sel.Sel.Name, "Write") || strings.HasPrefix(sel.Sel.Name, "write")
		copies := recv == "io" && (sel.Sel.Name == "Copy" || sel.Sel.Name == "CopyN") && len(call.Args) > 0 && isSocket(exprText(call.Args[0]))
		if !(socket && writes) && !copies {
			return false
		}
		if !allowed(name) {
			t.Errorf("%s: %s.%s writes to the socket outside the writer: use the writer's methods (writer.go)", name, recv, sel.Sel.Name)
		}
		return true
	})
	if found == 0 {
		t.Fatal("no socket write found anywhere: the check looks at nothing")
	}
}

// TestArchOneCancelSender: CancelRequests are sent by
// Session.cancelSession only (the session's cancel.go), which keeps the
// cancel clock.
func TestArchOneCancelSender(t *testing.T) {
	found := eachMethodCall(t, func(name string, _ *ast.CallExpr, sel *ast.SelectorExpr) bool {
		if !strings.EqualFold(sel.Sel.Name, "sendCancel") && !strings.EqualFold(exprText(sel), "c.cancelClock.Add") {
			return false
		}
		if !inSession(name, "cancel.go") {
			t.Errorf("%s: %s called outside the session's cancel.go: use Session.cancelSession", name, exprText(sel))
		}
		return true
	})
	if found == 0 {
		t.Fatal("no call of sendCancel found: the check looks at nothing")
	}
}

// TestArchSessionSurface: the names the session engine exports
// (internal/session) are those listed in its surface.txt, so that a
// change of the surface between the API and the engine shows in review
// as a change of that file. PGLINE_UPDATE_SURFACE=1 writes the list.
func TestArchSessionSurface(t *testing.T) {
	var names []string
	for path, f := range parseRootFiles(t) {
		if !inSession(path, "") {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil {
					names = append(names, exprText(d.Recv.List[0].Type)+"."+d.Name.Name+"()")
				} else {
					names = append(names, d.Name.Name+"()")
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						names = append(names, "type "+s.Name.Name)
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									if n.IsExported() {
										names = append(names, s.Name.Name+"."+n.Name)
									}
								}
								if len(fl.Names) == 0 && ast.IsExported(strings.TrimPrefix(exprText(fl.Type), "*")) {
									names = append(names, s.Name.Name+"."+strings.TrimPrefix(exprText(fl.Type), "*")+" (embedded)")
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	got := strings.Join(names, "\n") + "\n"
	path := filepath.Join(sessionDir, "surface.txt")
	if os.Getenv("PGLINE_UPDATE_SURFACE") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("the session's exported names differ from %s (run with PGLINE_UPDATE_SURFACE=1 to write them):\ngot:\n%s", path, got)
	}
	if len(names) == 0 {
		t.Fatal("no exported name found in the session: the check looks at nothing")
	}
}
