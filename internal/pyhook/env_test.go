package pyhook

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/pyhook/pyhooktest"
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

// TestTheRoutesAreNamedAlike: the routes the hook's Python puts in a
// begin message are exactly RouteNative and RoutePython, which the
// supervisor reads; the protocol in the package comment and the report's
// reference (docs/reports.md's route) name each of them.
func TestTheRoutesAreNamedAlike(t *testing.T) {
	want := []string{RouteNative, RoutePython}
	slices.Sort(want)

	// "route": "python", message["route"] = "native", route = "native"
	python := pyhooktest.WrittenWords(t, regexp.MustCompile(`\broute"?\]?\s*[:=]\s*"([a-z_]+)"`))
	if !slices.Equal(python, want) {
		t.Errorf("the hook's Python names the routes %q; pyhook's are %q", python, want)
	}

	comment, err := os.ReadFile("pyhook.go")
	if err != nil {
		t.Fatal(err)
	}
	if listed := `"route":"` + RouteNative + `"|"` + RoutePython + `"`; !strings.Contains(string(comment), listed) {
		t.Errorf("the protocol in pyhook.go's package comment does not give a begin message's routes as %s", listed)
	}
	reports, err := os.ReadFile("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	_, route, _ := strings.Cut(string(reports), "`route` (")
	route, _, _ = strings.Cut(route, "`route_note`")
	for _, r := range want {
		if !strings.Contains(route, "`"+r+"`") {
			t.Errorf("docs/reports.md's route does not name `%s`: %q", r, route)
		}
	}
}
