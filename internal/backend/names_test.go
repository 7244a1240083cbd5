package backend

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNoBackendNameOutsideTheRegistry: production code names a backend
// through this package, never as a string of its own, so a new backend or
// a renamed one is a change here alone. Tests may spell names (they check
// what a user writes).
func TestNoBackendNameOutsideTheRegistry(t *testing.T) {
	root := filepath.Join("..", "..")
	names := Names()
	found := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "bin" || rel == filepath.Join("internal", "backend") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		found++
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(names, s) {
				t.Errorf("%s spells the backend %q: use the registry (internal/backend)", rel, s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 50 {
		t.Fatalf("only %d Go files scanned; the walk missed the tree", found)
	}
}
