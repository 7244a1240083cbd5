package matrix

import (
	"path/filepath"

	"github.com/trt-action/trt-action/internal/onnx"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/settings"
)

// RunFiles is every file a run of the builds run (chosen from f, as given
// to the workers) reads and writes as the matrix names them, for
// runfiles.Check: the matrix file and every build's inputs (the model and
// the files its external data lives in, plugins, a calibration cache, a
// simulator trace, the files a build with run: declares as its inputs)
// are inputs; the engines and timing caches of run are outputs, and so are
// the engines and outputs the commands of its builds with run: write (a
// command's workdir is not: trt-action writes nothing there). Every build's inputs count, not only run's: an engine written
// over the model of a build left out by --only is lost all the same.
// Each file is named at the key that names it.
//
// f may be a file that did not validate (LoadPartial): a build whose
// name did not is left out, as a message could not name it, and every
// path that did is compared as the run would open it.
func (f *File) RunFiles(run []Build) []runfiles.File {
	files := []runfiles.File{{Path: f.Path, Role: runfiles.Input, Noun: "the matrix file"}}
	external := map[string][]string{} // model -> its external data files, each model read once
	for _, b := range f.Builds {
		if b.Name == "" {
			continue
		}
		input := func(noun, path string, at Pos) {
			files = append(files, runfiles.File{Path: path, Role: runfiles.Input, Noun: noun, Build: b.Name, Pos: at.String()})
		}
		if b.ONNX != "" {
			input("the model", b.ONNX, b.ONNXPos)
			data, ok := external[b.ONNX]
			if !ok {
				// A model that cannot be read has no external data the
				// parser would read either; the build says what is wrong.
				data, _ = onnx.ExternalFiles(b.ONNX)
				external[b.ONNX] = data
			}
			for _, p := range data {
				input("an external-data file of the model", p, b.ONNXPos)
			}
		}
		for _, s := range b.Settings {
			if !settings.IsFile(s.Key) {
				continue
			}
			switch v := s.Value.(type) {
			case string:
				input(fileSettingNoun(s.Key), v, s.Pos)
			case []string:
				for _, p := range v {
					input(fileSettingNoun(s.Key), p, s.Pos)
				}
			}
		}
		if b.Sim.Trace != "" {
			input("the simulator trace", b.Sim.Trace, b.SimTracePos)
		}
		if b.Script != nil && b.Script.Cached() {
			// What its patterns match now; one that matches nothing says so
			// where the matrix is checked.
			names, _ := b.Script.InputFiles()
			for _, name := range names {
				input("an input of its command (inputs:)", filepath.Join(b.Script.Workdir, filepath.FromSlash(name)), b.Script.InputsPos)
			}
		}
	}
	for _, b := range run {
		if b.Name == "" {
			continue
		}
		if b.Engine != "" {
			files = append(files, runfiles.File{Path: b.Engine, Role: runfiles.Output, What: "engine", Noun: "the engine",
				Build: b.Name, Pos: b.EnginePos.String()})
		}
		if b.Script != nil {
			for i, p := range b.Script.Engines {
				files = append(files, runfiles.File{Path: p, Role: runfiles.Program, What: "engine", Noun: "an engine its command writes",
					Build: b.Name, Pos: b.Script.EnginePos[i].String()})
			}
			for i, p := range b.Script.Outputs {
				files = append(files, runfiles.File{Path: p, Role: runfiles.Program, What: "outputs", Noun: "a file its command writes (outputs:)",
					Build: b.Name, Pos: b.Script.OutputPos[i].String()})
			}
		}
		if b.TimingCache != "" {
			files = append(files, runfiles.File{Path: b.TimingCache, Role: runfiles.Shared, What: "timing-cache", Noun: "the timing cache",
				Build: b.Name, Pos: b.TimingCachePos.String()})
		}
	}
	return files
}

// fileSettingNouns name one file of each builder setting that names files,
// as a message says it: "a plugin of build "a"".
var fileSettingNouns = map[string]string{
	"plugins":                "a plugin",
	"plugins-serialize":      "a plugin to serialize into the engine",
	"int8-calibration-cache": "the INT8 calibration cache",
}

func fileSettingNoun(key string) string {
	if noun, ok := fileSettingNouns[key]; ok {
		return noun
	}
	return "a file of " + key // a key added without a noun reads right still; files_test.go asks for one
}
