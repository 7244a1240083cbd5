package settings

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/trt-action/trt-action/"

// imports lists the module's packages the non-test Go files of dir import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range parsed.Imports {
			path, _ := strconv.Unquote(spec.Path.Value)
			if strings.HasPrefix(path, module) {
				out = append(out, strings.TrimPrefix(path, module))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestGeneratorStaysInItsLayer: go generate ./internal/settings imports
// this package and nothing it does not import itself, so no import points
// back up the layers (docs/architecture.md): the matrix file's schema,
// which internal/matrix makes from this table, is generated there.
func TestGeneratorStaysInItsLayer(t *testing.T) {
	allowed := append(imports(t, "."), "internal/settings")
	for _, p := range imports(t, "generate") {
		if !slices.Contains(allowed, p) {
			t.Errorf("internal/settings/generate imports %s, which internal/settings does not (it imports %v)", p, allowed[:len(allowed)-1])
		}
	}
}
