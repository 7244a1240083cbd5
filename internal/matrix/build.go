package matrix

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/backend"

	"go.yaml.in/yaml/v3"
)

// buildName keeps names safe as file names, in tables and in workflow
// output: they start with a letter or digit, so a name can never begin a
// workflow command line ("::").
var buildName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+=@,-]{0,127}$`)

// build decodes one expanded build from its sources.
func (d *decoder) build(src *buildSource, at Pos) Build {
	mark := len(d.w.errs.errs)
	defer d.nameTrtexecFlags(mark)
	n := src.merged
	if n == nil {
		n = d.withLines(src)
	}
	fs := d.w.fields(n, "build", buildKeys)
	b := Build{Axes: d.combo.asMap(), Pos: at, TrtexecIgnored: d.trtexecIgnored, TrtexecWarnings: d.trtexecWarnings}
	d.name(fs, &b, at)
	backendOK := false
	if p, ok := fs.get("backend"); !ok {
		d.w.errs.add(at, "build: backend is required (or a trtexec line that starts with its tool); one of %s", choices(backend.Names()))
	} else {
		b.Backend, backendOK = d.enum(p.val, "backend", backend.Names())
	}
	if backendOK {
		d.checkLineTools(b)
	}

	d.model(fs, &b, at, backendOK)
	d.settings(fs, &b)
	if p, ok := fs.get("budgets"); ok {
		b.Budgets = d.budgets(p.val)
	}
	b.Budgets.Grace = cmp.Or(b.Budgets.Grace, defaultGrace)
	d.sim(fs, &b, backendOK)
	return b
}

// name reads the build's name.
func (d *decoder) name(fs fieldSet, b *Build, at Pos) {
	p, ok := fs.get("name")
	if !ok {
		d.w.errs.add(at, "build: name is required")
		return
	}
	if name, ok := d.str(p.val, "name"); ok {
		if msg := nameProblem(name); msg != "" {
			d.w.errs.add(d.w.pos(p.val), "name: %s", msg)
			return
		}
		b.Name = name
	}
}

// nameProblem says why name is not a build's name; "" when it is one.
func nameProblem(name string) string {
	if buildName.MatchString(name) {
		return ""
	}
	return fmt.Sprintf("%q is not a valid build name; use up to 128 letters, digits and . _ - + = @ , starting with a letter or digit", name)
}

// model reads the input and output files.
func (d *decoder) model(fs fieldSet, b *Build, at Pos, backendOK bool) {
	if p, ok := fs.get("onnx"); ok {
		b.ONNX, _ = d.existingPath(p.val, "onnx")
		b.ONNXPos = d.w.pos(p.key)
	} else if backendOK && !backend.Of(b.Backend).Simulated {
		d.w.errs.add(at, "build: onnx is required for backend %s", b.Backend)
	}
	b.EnginePos = at
	if p, ok := fs.get("engine"); ok {
		b.Engine, _ = d.outputPath(p.val, "engine")
		b.EnginePos = d.w.pos(p.key)
	} else if p, ok := fs.get("name"); ok && b.Name != "" {
		b.Engine = d.w.resolvePath(b.Name + ".engine")
		b.EnginePos = d.w.pos(p.key) // the engine's path is the name's
		d.checkOutput(b.EnginePos, "engine", b.Engine)
	}
}

// shapes reads one optimization profile, {input: {min, opt, max}}, written
// at what (shapes, profiles[1]); keys are where each input was named.
func (d *decoder) shapes(n *yaml.Node, what string) (out map[string]Shape, keys map[string]*yaml.Node) {
	ps := d.w.pairs(n, what)
	if len(ps) == 0 {
		return nil, nil
	}
	out, keys = make(map[string]Shape, len(ps)), make(map[string]*yaml.Node, len(ps))
	for _, p := range ps {
		at := what + "." + p.key.Value
		fs := d.w.fields(p.val, at, shapeKeys)
		var s Shape
		ok := true
		for _, k := range shapeKeys {
			kp, has := fs.get(k)
			if !has {
				d.w.errs.add(d.w.pos(p.key), "%s: %s is required (min, opt and max are all needed)", at, k)
				ok = false
				continue
			}
			dims, good := d.dims(kp.val, at+"."+k)
			ok = ok && good
			switch k {
			case "min":
				s.Min = dims
			case "opt":
				s.Opt = dims
			case "max":
				s.Max = dims
			}
		}
		if ok {
			d.checkShape(s, at, p.key)
		}
		out[p.key.Value], keys[p.key.Value] = s, p.key
	}
	return out, keys
}

// profiles reads a list of optimization profiles, each as shapes is
// written, in order: item i is the engine's profile i. Every profile gives
// the same inputs, as TensorRT needs each to give every dynamic input.
func (d *decoder) profiles(n *yaml.Node, key string) ([]map[string]Shape, bool) {
	items, ok := d.w.items(n, key, "a list of optimization profiles, each like shapes: {INPUT: {min, opt, max}}")
	if !ok {
		return nil, false
	}
	if len(items) == 0 {
		d.w.errs.add(d.w.pos(n), "%s: the list is empty; give at least one profile, or remove the key", key)
		return nil, false
	}
	out := make([]map[string]Shape, len(items))
	keys := make([]map[string]*yaml.Node, len(items))
	for i, item := range items {
		what := fmt.Sprintf("%s[%d]", key, i)
		out[i], keys[i] = d.shapes(item, what)
		if len(out[i]) == 0 && (isNull(item) || item.Kind == yaml.MappingNode) {
			d.w.errs.add(d.w.pos(item), "%s: the profile is empty; give each dynamic input's {min, opt, max}", what)
			ok = false
		}
	}
	return out, d.sameInputs(key, items, keys) && ok
}

// sameInputs reports each input one profile gives and another does not,
// against the first profile: at the profile that lacks it, or where the
// profile that has it named it.
func (d *decoder) sameInputs(key string, items []*yaml.Node, keys []map[string]*yaml.Node) bool {
	ok := true
	first := fmt.Sprintf("%s[0]", key)
	for i := 1; i < len(items); i++ {
		what := fmt.Sprintf("%s[%d]", key, i)
		for _, input := range slices.Sorted(maps.Keys(keys[0])) {
			if _, has := keys[i][input]; !has && len(keys[i]) > 0 {
				d.w.errs.add(d.w.pos(items[i]), "%s: gives no shapes for input %q, which %s gives; every profile gives the same inputs", what, input, first)
				ok = false
			}
		}
		for _, input := range slices.Sorted(maps.Keys(keys[i])) {
			if _, has := keys[0][input]; !has && len(keys[0]) > 0 {
				d.w.errs.add(d.w.pos(keys[i][input]), "%s.%s: %s gives no shapes for input %q; every profile gives the same inputs", what, input, first, input)
				ok = false
			}
		}
	}
	return ok
}

// checkShape wants min <= opt <= max in every dimension, all of one rank.
func (d *decoder) checkShape(s Shape, what string, at *yaml.Node) {
	if len(s.Min) != len(s.Opt) || len(s.Opt) != len(s.Max) {
		d.w.errs.add(d.w.pos(at), "%s: min, opt and max must have the same number of dimensions (%d, %d, %d)", what, len(s.Min), len(s.Opt), len(s.Max))
		return
	}
	for i := range s.Min {
		if s.Min[i] > s.Opt[i] || s.Opt[i] > s.Max[i] {
			d.w.errs.add(d.w.pos(at), "%s: dimension %d must satisfy min <= opt <= max, got %d, %d, %d", what, i, s.Min[i], s.Opt[i], s.Max[i])
			return
		}
	}
}

func (d *decoder) budgets(n *yaml.Node) Budgets {
	var b Budgets
	for key, p := range d.w.fields(n, "budgets", budgetKeys).all() {
		what := "budgets." + key
		switch key {
		case "build":
			b.Build, _ = d.duration(p.val, what)
		case "stall":
			b.Stall, _ = d.duration(p.val, what)
		case "grace":
			b.Grace, _ = d.duration(p.val, what)
		case "warn":
			b.WarnPercent, _ = d.percent(p.val, what, 100)
		case "phases":
			b.Phases = d.phases(p.val)
		case "memory":
			b.Memory, _ = d.byteSize(p.val, what)
		case "gpu-memory":
			b.GPUMemory, _ = d.byteSize(p.val, what)
		}
	}
	return b
}

func (d *decoder) phases(n *yaml.Node) []PhaseBudget {
	var out []PhaseBudget
	for _, p := range d.w.pairs(n, "budgets.phases") {
		pattern := p.key.Value
		if err := checkPhasePattern(pattern); err != nil {
			d.w.errs.add(d.w.pos(p.key), "budgets.phases: %q: %v; use a phase name, a glob like \"Timing*\" or a path like \"Building engine/Timing tactics\"", pattern, err)
			continue
		}
		if limit, ok := d.duration(p.val, "budgets.phases."+pattern); ok {
			out = append(out, PhaseBudget{Pattern: pattern, Limit: limit, Pos: d.w.pos(p.key)})
		}
	}
	return out
}

// defaultSim is the simulator's settings when none are given but the
// step: the built-in tree's, the trace's own timing without one.
func defaultSim() Sim {
	return Sim{Threads: 4, Repeat: 1, Fault: Fault{Kind: "none"}, Step: builtInStep}
}

// builtInStep is the time per callback of the built-in tree, which has
// no timings of its own.
const builtInStep = 2 * time.Millisecond

// sim reads the simulator settings and applies their defaults.
func (d *decoder) sim(fs fieldSet, b *Build, backendOK bool) {
	b.Sim = defaultSim()
	b.Sim.Step = 0
	stepSet := false
	if p, ok := fs.get(simKey); ok {
		for key, sp := range d.w.fields(p.val, simKey, simKeys).all() {
			what := simKey + "." + key
			switch key {
			case "trace":
				if backendOK && !backend.Of(b.Backend).Simulated {
					d.w.errs.add(d.w.pos(sp.key), "sim.trace: only allowed with backend %s (this build uses %s)", backend.Sim, b.Backend)
				}
				b.Sim.Trace, _ = d.existingPath(sp.val, what)
				b.SimTracePos = d.w.pos(sp.key)
			case "step":
				if zeroDuration(sp.val) {
					b.Sim.Fast, stepSet = true, true
					continue
				}
				b.Sim.Step, stepSet = d.duration(sp.val, what)
			case "repeat":
				b.Sim.Repeat, _ = d.intIn(sp.val, what, 1, 1_000_000)
			case "threads":
				b.Sim.Threads, _ = d.intIn(sp.val, what, 1, 64)
			case "fault":
				b.Sim.Fault, _ = d.fault(sp.val, what)
			case "engine-size":
				b.Sim.EngineSize, _ = d.byteSize(sp.val, what) // at least 1 byte, as max-size
			case "allocate":
				b.Sim.Allocate, _ = d.byteSize(sp.val, what)
			}
		}
	}
	if !stepSet && b.Sim.Trace == "" {
		b.Sim.Step = builtInStep
	}
}

// fault reads none | crash | hang | fail | silence:DURATION.
func (d *decoder) fault(n *yaml.Node, what string) (Fault, bool) {
	s, ok := d.text(n, what, "a fault: "+choices(faultKinds))
	if !ok {
		return Fault{Kind: "none"}, false
	}
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	bad := func(format string, args ...any) (Fault, bool) {
		d.w.errs.add(d.w.pos(n), what+": "+format, args...)
		return Fault{Kind: "none"}, false
	}
	switch {
	case !slices.Contains(faultKinds, kind):
		return bad("unknown fault %q; allowed: none, crash, hang, fail, silence:DURATION (like silence:5s)", s)
	case kind == "silence" && !hasArg:
		return bad("silence needs a duration, like silence:5s")
	case kind != "silence" && hasArg:
		return bad("fault %s takes no duration, got %q", kind, s)
	case kind != "silence":
		return Fault{Kind: kind}, true
	}
	dur, err := time.ParseDuration(strings.TrimSpace(arg))
	if err != nil || dur <= 0 {
		return bad("invalid silence duration %q; use a positive Go duration like 5s", arg)
	}
	return Fault{Kind: kind, Duration: dur}, true
}

// path reads a path, relative to the matrix file's directory.
func (d *decoder) path(n *yaml.Node, what string) (string, bool) {
	s, ok := d.str(n, what)
	if !ok {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		d.w.errs.add(d.w.pos(n), "%s: expected a path, got an empty string", what)
		return "", false
	}
	return d.w.resolvePath(s), true
}

// existingPath is path for inputs, which must exist.
func (d *decoder) existingPath(n *yaml.Node, what string) (string, bool) {
	p, ok := d.path(n, what)
	if ok && !d.w.skipInputs && !d.w.exists(p) {
		d.w.errs.add(d.w.pos(n), "%s: file %s not found (relative paths are relative to %s)", what, quoted(p), quoted(d.w.dir))
		return p, false
	}
	return p, ok
}

func (w *walker) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(w.dir, p)
}

func (w *walker) exists(p string) bool {
	if e, seen := w.stats[p]; seen {
		return e
	}
	_, err := os.Stat(p)
	w.stats[p] = err == nil
	return err == nil
}

// zeroDuration is whether n says a duration of zero ("0s", "0"): for
// sim.step that means no pacing at all, where other durations must be > 0.
func zeroDuration(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	return err == nil && v == 0
}
