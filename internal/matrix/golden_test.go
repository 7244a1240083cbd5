package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
)

// TestGolden parses every testdata/*.yml: a file with mistakes must give
// exactly the error text in its .golden file; a valid file gives its plan.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.yml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, in := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(in), ".yml"), func(t *testing.T) {
			golden.Check(t, strings.TrimSuffix(filepath.Base(in), ".yml")+".golden", string(goldenOutput(t, in)))
		})
	}
}

// goldenOutput is a file's errors, or its plan, then its warnings (as
// validate and plan print them). The plan's absolute paths (a workdir)
// are shown relative to the package's folder, as the file names them.
func goldenOutput(t *testing.T, path string) []byte {
	t.Helper()
	f, err := LoadPartial(path)
	var buf bytes.Buffer
	if err != nil {
		var errs Errors
		if !errors.As(err, &errs) {
			t.Fatalf("error is %T, want Errors: %v", err, err)
		}
		buf.WriteString(err.Error())
		buf.WriteString("\n")
	} else {
		PlanText(&buf, f.Builds)
	}
	if f != nil {
		for _, w := range f.Warnings {
			fmt.Fprintf(&buf, "%s: warning: %s\n", w.Pos, w.Msg)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte(wd+string(filepath.Separator)), nil)
}

// TestErrorsSortedAndComplete checks the error list is in file order and
// that one file can report many problems at once.
func TestErrorsSortedAndComplete(t *testing.T) {
	_, err := Load("testdata/enums.yml")
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want Errors, got %v", err)
	}
	if len(errs) < 8 {
		t.Errorf("want every problem reported, got %d:\n%v", len(errs), err)
	}
	for i := 1; i < len(errs); i++ {
		if errs[i].Pos.before(errs[i-1].Pos) {
			t.Errorf("errors out of order: %v before %v", errs[i-1], errs[i])
		}
	}
	for _, e := range errs {
		if e.Pos.File != "testdata/enums.yml" || e.Pos.Line == 0 || e.Pos.Column == 0 {
			t.Errorf("error without a full position: %#v", e)
		}
	}
}

func TestExampleLoads(t *testing.T) {
	f, err := Load("../../examples/trt-builds.yml")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Builds); n < 4 || n > 6 {
		t.Errorf("demo has %d builds, want 4 to 6", n)
	}
	exceeded := 0
	for _, b := range f.Builds {
		if b.Backend != "sim" {
			t.Errorf("demo build %s uses %s, want sim", b.Name, b.Backend)
		}
		for _, p := range b.Budgets.Phases {
			if p.Limit <= 1e9 {
				exceeded++
			}
		}
	}
	if exceeded != 1 {
		t.Errorf("want exactly one build with a deliberately tight phase budget, got %d", exceeded)
	}
}
