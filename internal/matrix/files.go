package matrix

import (
	"github.com/trt-action/trt-action/internal/onnx"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/settings"
)

// RunFiles is every file a run of the builds run (chosen from f, as given
// to the workers) reads and writes as the matrix names them, for
// runfiles.Check: the matrix file and every build's inputs (the model and
// the files its external data lives in, plugins, a calibration cache, a
// simulator trace) are inputs; the engines and timing caches of run are
// outputs. Every build's inputs count, not only run's: an engine written
// over the model of a build left out by --only is lost all the same.
func (f *File) RunFiles(run []Build) []runfiles.File {
	files := []runfiles.File{{Path: f.Path, Role: runfiles.Input, What: "the matrix file"}}
	external := map[string][]string{} // model -> its external data files, each model read once
	for _, b := range f.Builds {
		input := func(what, path string) {
			files = append(files, runfiles.File{Path: path, Role: runfiles.Input, What: what, Build: b.Name})
		}
		if b.ONNX != "" {
			input("model", b.ONNX)
			data, ok := external[b.ONNX]
			if !ok {
				// A model that cannot be read has no external data the
				// parser would read either; the build says what is wrong.
				data, _ = onnx.ExternalFiles(b.ONNX)
				external[b.ONNX] = data
			}
			for _, p := range data {
				input("external data", p)
			}
		}
		for _, s := range b.Settings {
			if !settings.IsFile(s.Key) {
				continue
			}
			switch v := s.Value.(type) {
			case string:
				input(s.Key, v)
			case []string:
				for _, p := range v {
					input(s.Key, p)
				}
			}
		}
		if b.Sim.Trace != "" {
			input("sim.trace", b.Sim.Trace)
		}
	}
	for _, b := range run {
		if b.Engine != "" {
			files = append(files, runfiles.File{Path: b.Engine, Role: runfiles.Output, What: "engine", Build: b.Name, Pos: b.EnginePos.String()})
		}
		if b.TimingCache != "" {
			files = append(files, runfiles.File{Path: b.TimingCache, Role: runfiles.Shared, What: "timing-cache", Build: b.Name, Pos: b.TimingCachePos.String()})
		}
	}
	return files
}
