package matrix

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to parseContent: it must never panic, and it
// either returns a File or an Errors whose every entry has a position.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yml")
	seeds = append(seeds, "../../examples/trt-builds.yml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parseContent("testdata/fuzz.yml", data)
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error is not a non-empty Errors: %T %v", err, err)
			}
			for _, e := range errs {
				if !strings.HasPrefix(e.Pos.File, "testdata/fuzz.yml") || e.Pos.Line < 1 {
					t.Fatalf("error without a position: %#v", e)
				}
			}
			return
		}
		if len(file.Builds) == 0 {
			t.Fatal("a valid file has no builds")
		}
		PlanText(io.Discard, file.Builds)
		if err := PlanJSON(io.Discard, file.Builds, nil, ""); err != nil {
			t.Fatal(err)
		}
	})
}
