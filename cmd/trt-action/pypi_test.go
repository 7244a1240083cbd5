package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPyPIPageFirstRun: the first run docs/pypi.md (the wheel's page on
// PyPI) shows a pip user works as it says: its matrix file validates and
// builds, and each command of its sh blocks does what its comment promises.
func TestPyPIPageFirstRun(t *testing.T) {
	first := section(t, page(t, "docs/pypi.md"), "## First run")
	yaml := fenced(first, "yaml")
	if len(yaml) != 1 {
		t.Fatalf(`docs/pypi.md's "First run" has %d yaml blocks, want the matrix file`, len(yaml))
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), yaml[0])
	want := map[string]struct {
		out   string
		files []string
	}{
		"version":  {"backends:", nil},
		"validate": {"trt-builds.yml: ok, 2 builds\n", nil},
		"build":    {"■ ✅ 2 of 2 builds ok in", []string{"trt-report.json", "summary.md", "out/demo-fp16.engine", "out/demo-fp32.engine"}},
	}
	var verbs []string
	for _, block := range fenced(first, "sh") {
		for _, args := range commandLines(t, block) {
			verbs = append(verbs, args[0])
			w, ok := want[args[0]]
			if !ok {
				t.Errorf("docs/pypi.md command %v: no expectation in this test", args)
				continue
			}
			code, out := runIn(t, dir, "", args...)
			if code != 0 || !strings.Contains(out, w.out) {
				t.Errorf("docs/pypi.md command %v: exit %d, want 0, with %q in:\n%s", args, code, w.out, out)
			}
			for _, f := range w.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("docs/pypi.md command %v: %v", args, err)
				}
			}
		}
	}
	if !slices.Equal(verbs, []string{"version", "validate", "build"}) {
		t.Errorf("docs/pypi.md's first run runs %v; this test knows what version, validate and build must do", verbs)
	}
}
