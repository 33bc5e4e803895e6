package pgline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The engine's rules that live in one place (docs/architecture.md,
// section 5), pinned against the source: a change that writes around
// them fails here, with the place to use instead.

// parseRootFiles parses the package's non-test files.
func parseRootFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	if len(files) < 10 {
		t.Fatalf("parsed %d files: not the package's directory?", len(files))
	}
	return files
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
// (pipeline.go, reply.go), no code assigns a request's field: what a
// request is goes in its reqSpec, given to Conn.submitLocked.
func TestArchRequestFixedAtSubmission(t *testing.T) {
	fields := map[string]bool{}
	for _, rt := range []reflect.Type{reflect.TypeFor[request](), reflect.TypeFor[reqSpec]()} {
		for f := range rt.Fields() {
			fields[f.Name] = true
		}
	}
	engine := []string{"pipeline.go", "reply.go"}
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
				if recv != "req" && !strings.HasSuffix(recv, ".req") {
					continue
				}
				found++
				if !slices.Contains(engine, name) {
					t.Errorf("%s: %s.%s assigned outside the queue (%v): put it in the request's reqSpec", name, recv, sel.Sel.Name, engine)
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
// writer (writer.go, writer_sock_*.go) writes to the connection's socket;
// the startup (startup.go, connect.go's startTLS, tls.go) writes before the
// pipeline exists, and a CancelRequest goes on a socket of its own
// (cancel.go).
func TestArchOnlyWriterWritesSocket(t *testing.T) {
	allowed := func(name string) bool {
		return strings.HasPrefix(name, "writer") || name == "startup.go" || name == "connect.go" || name == "tls.go" || name == "cancel.go"
	}
	found := eachMethodCall(t, func(name string, call *ast.CallExpr, sel *ast.SelectorExpr) bool {
		recv := exprText(sel.X)
		socket := strings.HasSuffix(recv, "netConn") || strings.HasSuffix(recv, ".sock") || recv == "sock"
		writes := strings.HasPrefix(sel.Sel.Name, "Write") || strings.HasPrefix(sel.Sel.Name, "write")
		copies := recv == "io" && (sel.Sel.Name == "Copy" || sel.Sel.Name == "CopyN") && len(call.Args) > 0 && strings.HasSuffix(exprText(call.Args[0]), "netConn")
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
// session.cancelSession only (cancel.go), which keeps the cancel clock.
func TestArchOneCancelSender(t *testing.T) {
	found := eachMethodCall(t, func(name string, _ *ast.CallExpr, sel *ast.SelectorExpr) bool {
		if sel.Sel.Name != "sendCancel" && exprText(sel) != "c.cancelClock.Add" {
			return false
		}
		if name != "cancel.go" {
			t.Errorf("%s: %s called outside cancel.go: use session.cancelSession", name, exprText(sel))
		}
		return true
	})
	if found == 0 {
		t.Fatal("no call of sendCancel found: the check looks at nothing")
	}
}

// sessionFiles are the files of the session engine (session.go): every
// method they declare is the session's or one of its own types'.
var sessionFiles = []string{
	"session.go", "pipeline.go", "reply.go", "writer.go", "writer_sock_unix.go", "writer_sock_other.go",
	"sockpeek_unix.go", "sockpeek_other.go", "cancel.go", "gate.go", "copyproto.go", "stmtcache.go",
	"describe.go", "simple.go", "txpooler.go", "idlecheck.go", "txblock.go", "errclass.go", "retry.go", "result.go", "run.go", "batchrun.go",
}

// TestArchSessionIsTheEngine: the session's files declare no method of
// an API type (Conn, Rows, Tx, ...), and use nothing declared in the
// API's files: the errors it makes come from apiErrors (session.go), and
// what it takes from the Config or reports back goes through sessionOpts.
// A new call from the engine into the API fails here.
func TestArchSessionIsTheEngine(t *testing.T) {
	files := parseRootFiles(t)
	engine := map[string]bool{}
	for _, name := range sessionFiles {
		engine[name] = true
	}
	api := map[string]bool{} // top-level names declared in the API's files
	for name, f := range files {
		if engine[name] {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name != "init" {
					api[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						api[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							api[n.Name] = true
						}
					}
				}
			}
		}
	}
	checked := 0
	for name, f := range files {
		if !engine[name] {
			continue
		}
		checked++
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				if recv := exprText(fd.Recv.List[0].Type); api[recv] {
					t.Errorf("%s: method %s of %s, an API type, in a file of the session", name, fd.Name.Name, recv)
				}
			}
		}
		skip := map[*ast.Ident]bool{} // selected names, literal keys and methods' names are not references to the package's names
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				skip[n.Name] = true
			case *ast.SelectorExpr:
				skip[n.Sel] = true
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					skip[id] = true
				}
			case *ast.Ident:
				// Obj is nil for names declared in other files.
				if !skip[n] && n.Obj == nil && api[n.Name] {
					t.Errorf("%s: the session uses %s, declared in the API's files: pass it in sessionOpts (session.go)", name, n.Name)
				}
			}
			return true
		})
	}
	if checked != len(sessionFiles) {
		t.Fatalf("checked %d of the session's %d files: a file was renamed?", checked, len(sessionFiles))
	}
}
