// Package pyhooktest reads the Python hook's source for tests that hold
// the supervisor's names of the protocol's words (routes, results) to the
// words the hook writes. Only tests import it.
package pyhooktest

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"testing"
)

// WrittenWords is every first submatch of pattern in the hook's Python
// files (internal/pyhook/py/trt_action_hook), sorted, each once.
func WrittenWords(t testing.TB, pattern *regexp.Regexp) []string {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("pyhooktest: cannot tell where its source is")
	}
	files, err := filepath.Glob(filepath.Join(filepath.Dir(here), "..", "py", "trt_action_hook", "*.py"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the hook's Python: %v %v", files, err)
	}
	var words []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pattern.FindAllStringSubmatch(string(b), -1) {
			words = append(words, m[1])
		}
	}
	slices.Sort(words)
	return slices.Compact(words)
}
