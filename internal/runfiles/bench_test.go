package runfiles

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkCheck is the check before a run of 10,000 builds that read one
// model and share one timing cache, each writing its own engine, with a
// report and a summary: what every build run and validate pay before the
// first build.
func BenchmarkCheck(b *testing.B) {
	dir := project(b)
	const builds = 10000
	files := inputs(dir)
	for i := range builds {
		name := fmt.Sprintf("b%d", i)
		files = append(files,
			File{Path: filepath.Join(dir, "models/mlp.onnx"), Role: Input, Noun: "the model", Build: name},
			File{Path: filepath.Join(dir, "out", name+".engine"), Role: Output, What: "engine", Noun: "the engine", Build: name},
			File{Path: filepath.Join(dir, "tc.cache"), Role: Shared, What: "timing-cache", Noun: "the timing cache", Build: name})
	}
	files = append(files,
		File{Path: filepath.Join(dir, "trt-report.json"), Role: Output, What: "--report"},
		File{Path: filepath.Join(dir, "summary.md"), Role: Output, What: "--summary"})
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(files); err != nil {
			b.Fatal(err)
		}
	}
}
