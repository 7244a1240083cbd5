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
// through this package, never as a string of its own, whole or inside a
// longer text ("--backend sim: ...", "(tensorrt, tensorrt-rtx, sim)"), so
// a new backend or a renamed one is a change here alone. Tests may spell
// names (they check what a user writes); struct tags are matrix and JSON
// keys (sim: holds the simulator's settings), not backend names.
func TestNoBackendNameOutsideTheRegistry(t *testing.T) {
	root := filepath.Join("..", "..")
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
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		found++
		tags := map[*ast.BasicLit]bool{}
		ast.Inspect(file, func(n ast.Node) bool {
			if f, ok := n.(*ast.Field); ok && f.Tag != nil {
				tags[f.Tag] = true
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || tags[lit] {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil {
				for _, name := range spelledNames(s) {
					pos := fset.Position(lit.Pos())
					t.Errorf("%s:%d spells the backend %q in %q: use the registry (internal/backend)", rel, pos.Line, name, s)
				}
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

// spelledNames lists the backend names s spells as words of their own: not
// part of a longer name (tensorrt_rtx_libs, nvidia/tensorrt, a --sim-x
// flag) nor of a dotted key path (sim.trace); a name that ends a sentence
// ("backend sim.") counts.
func spelledNames(s string) []string {
	var out []string
	for _, name := range Names() {
		for at := 0; ; {
			i := strings.Index(s[at:], name)
			if i < 0 {
				break
			}
			start, end := at+i, at+i+len(name)
			at = start + 1
			before, after := byteAt(s, start-1), byteAt(s, end)
			dottedKey := after == '.' && isWordByte(byteAt(s, end+1))
			if !isWordByte(before) && before != '.' && before != '/' && before != '-' &&
				!isWordByte(after) && after != '/' && after != '-' && !dottedKey {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

func byteAt(s string, i int) byte {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// TestSpelledNames: what counts as a backend's name inside a text.
func TestSpelledNames(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"tensorrt", []string{TensorRT}},
		{"(tensorrt, tensorrt-rtx, sim)", []string{TensorRT, TensorRTRTX, Sim}},
		{"trt-action: --backend sim: 2 of 3", []string{Sim}},
		{"only allowed with backend sim.", []string{Sim}},
		{"a tensorrt build", []string{TensorRT}},
		{"sim.trace: only allowed", nil},
		{"tensorrt_rtx_libs", nil},
		{"nvcr.io/nvidia/tensorrt", nil},
		{"the simulator, simulated, a --sim-step flag", nil},
		{"tensorrt-rtx-cu12-libs", nil},
		{"TensorRT-RTX", nil},
	}
	for _, c := range cases {
		if got := spelledNames(c.in); !slices.Equal(got, c.want) {
			t.Errorf("spelledNames(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
