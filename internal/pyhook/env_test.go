package pyhook

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPythonReadsTheVariablesGoSets: the trt-action variables the hook's
// Python and the wheel's files spell are exactly Vars, the names the
// supervisor sets (or, TRT_ACTION_ROUTE, the user may): a name renamed on one side only, or a
// variable the Python reads that Go does not know, fails here.
func TestPythonReadsTheVariablesGoSets(t *testing.T) {
	variable := regexp.MustCompile(`TRT_ACTION_[A-Z_]+`)
	var spelled []string
	files := 0
	for _, dir := range []string{"py", "wheel"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".py") || strings.HasSuffix(path, ".pth")) {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			spelled = append(spelled, variable.FindAllString(string(b), -1)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 10 {
		t.Fatalf("only %d Python files read", files)
	}
	slices.Sort(spelled)
	spelled = slices.Compact(spelled)
	want := slices.Sorted(slices.Values(Vars))
	if !slices.Equal(spelled, want) {
		t.Errorf("the hook's Python spells %q; pyhook.Vars is %q", spelled, want)
	}
	for _, v := range HookEnv {
		if !slices.Contains(Vars, v) {
			t.Errorf("HookEnv's %s is not one of the hook's variables", v)
		}
	}
}
