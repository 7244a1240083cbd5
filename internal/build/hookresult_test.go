package build

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHookResultsAreTheHooks: the results an end message may carry are
// the words the Python hook writes (internal/pyhook/py) and its protocol's
// description (internal/pyhook's package comment) lists, no more, no less.
func TestHookResultsAreTheHooks(t *testing.T) {
	want := []string{hookResultError, hookResultNone, hookResultOK}
	slices.Sort(want)

	files, err := filepath.Glob("../pyhook/py/trt_action_hook/*.py")
	if err != nil || len(files) == 0 {
		t.Fatalf("the hook's Python: %v %v", files, err)
	}
	written := regexp.MustCompile(`\["result"\]\s*=\s*"([a-z_]+)"`)
	var python []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range written.FindAllStringSubmatch(string(b), -1) {
			python = append(python, m[1])
		}
	}
	slices.Sort(python)
	if python = slices.Compact(python); !slices.Equal(python, want) {
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
