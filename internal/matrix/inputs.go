package matrix

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/trt-action/trt-action/internal/runfiles"
)

// What a build with run: declares for the engine cache: inputs:, the
// files that decide its engines (the key reads them), and outputs:, the
// other files its program writes that go with its engines. A build with
// run: has a key only with inputs: (docs/engine-cache.md says what else
// its key holds); then it must declare the engines the cache keeps.

// Cached reports whether the build has an engine cache key: it declares
// its inputs.
func (s *Script) Cached() bool { return len(s.Inputs) > 0 }

// InputFiles lists the files Inputs name now, relative to Workdir with /
// between parts, sorted (runfiles.Glob), and each pattern's problem: one
// that matches no file, or would follow a link out of Roots.
func (s *Script) InputFiles() ([]string, []runfiles.GlobProblem) {
	var within func(string) bool
	if s.Roots != nil {
		within = func(real string) bool {
			return slices.ContainsFunc(s.Roots, func(root string) bool { return runfiles.Within(real, root) })
		}
	}
	return runfiles.Glob(s.Workdir, s.Inputs, within)
}

// inputs reads inputs: one pattern or a list, each a string as written
// (${{ matrix.AXIS }} substituted), named at its place.
func (d *decoder) inputs(p pair) ([]string, []Pos) {
	v := resolve(p.val)
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items, _ = d.w.items(v, "inputs", "a list of patterns")
		if len(items) == 0 {
			d.w.errs.add(d.w.pos(v), "inputs: the list is empty; name the files that decide the engines, or remove the key for a build that is not cached")
			return nil, nil
		}
	}
	var patterns []string
	var pos []Pos
	for _, it := range items {
		s, ok := d.text(it, "inputs", "a pattern (a string)")
		if !ok {
			continue
		}
		patterns, pos = append(patterns, s), append(pos, d.w.pos(it))
	}
	return patterns, pos
}

// checkCaching checks what the engine cache needs of a build with run:
// at: engines to keep when it declares inputs or outputs, and, where the
// files are checked, that each including pattern matches a file and
// follows no link out of the workspace.
func (d *decoder) checkCaching(s *Script, outputsAt Pos) {
	switch {
	case len(s.Inputs) > 0 && len(s.Engines) == 0:
		d.w.errs.add(s.InputsPos, "inputs: a build with run: is cached with the engines it declares, and this one declares none; name them in engine:")
	case len(s.Outputs) > 0 && len(s.Engines) == 0:
		d.w.errs.add(outputsAt, "outputs: the files that go with the engines a build with run: declares, and this one declares none; name them in engine:")
	case len(s.Outputs) > 0 && len(s.Inputs) == 0:
		d.w.warns.add(outputsAt, "outputs: without inputs: the build is not cached, so its outputs only go into the report; name what decides its engines in inputs: to cache them")
	}
	if d.w.skipInputs || len(s.Inputs) == 0 || s.Workdir == "" || folderProblem(s.Workdir, "") != "" {
		return
	}
	files, problems := s.InputFiles()
	for _, p := range problems {
		d.w.errs.add(s.InputPos[p.Pattern], "inputs: %s %s (patterns are relative to workdir %s)", quoted(s.Inputs[p.Pattern]), p.Msg, quoted(s.Workdir))
	}
	if len(problems) == 0 && len(files) == 0 {
		d.w.errs.add(s.InputsPos, "inputs: every file the patterns match is excluded by a ! pattern; the key would hold no input")
	}
}

// roots are the folders inputs' links may lead into: the workspace and
// allow-paths.
func (ws workspace) roots() []string {
	return append([]string{ws.root}, ws.allowed...)
}
