package build

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/pyhook/pyhooktest"
)

// TestHookResultsAreTheHooks: the results an end message may carry are
// the words the Python hook writes (internal/pyhook/py) and its protocol's
// description (internal/pyhook's package comment) lists, no more, no less.
func TestHookResultsAreTheHooks(t *testing.T) {
	want := []string{hookResultError, hookResultNone, hookResultOK}
	slices.Sort(want)

	python := pyhooktest.WrittenWords(t, regexp.MustCompile(`\["result"\]\s*=\s*"([a-z_]+)"`))
	if !slices.Equal(python, want) {
		t.Errorf("the hook writes the results %q, the supervisor reads %q", python, want)
	}

	doc, err := os.ReadFile("../pyhook/pyhook.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := regexp.MustCompile(`"result":((?:"[a-z_]+"\|?)+)`).FindStringSubmatch(string(doc))
	if listed == nil {
		t.Fatal(`internal/pyhook's package comment lists no "result":"..."|"..." of an end message`)
	}
	var described []string
	for _, w := range strings.Split(listed[1], "|") {
		described = append(described, strings.Trim(w, `"`))
	}
	slices.Sort(described)
	if !slices.Equal(described, want) {
		t.Errorf("internal/pyhook's package comment lists the results %q, the supervisor reads %q", described, want)
	}
}

// TestHookWordsAreComparedByName: wherever the supervisor's code compares
// what a hook message says (its kind, result or route) with a word, it
// names the word (hookEnd, hookResultOK, ...), so a word renamed on the
// protocol's side is renamed everywhere it is read.
func TestHookWordsAreComparedByName(t *testing.T) {
	fields := map[string]bool{"M": true, "Result": true, "Route": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			cmp, ok := n.(*ast.BinaryExpr)
			if !ok || (cmp.Op != token.EQL && cmp.Op != token.NEQ) {
				return true
			}
			for _, pair := range [][2]ast.Expr{{cmp.X, cmp.Y}, {cmp.Y, cmp.X}} {
				sel, isField := pair[0].(*ast.SelectorExpr)
				lit, isWord := pair[1].(*ast.BasicLit)
				if isField && isWord && fields[sel.Sel.Name] && lit.Kind == token.STRING {
					t.Errorf("%s: compares .%s with %s: name the protocol's word (hookproto.go)", fset.Position(cmp.Pos()), sel.Sel.Name, lit.Value)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
}
