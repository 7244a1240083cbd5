package matrix

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/pyhook"
	"github.com/trt-action/trt-action/internal/runfiles"
	"github.com/trt-action/trt-action/internal/settings"
	"github.com/trt-action/trt-action/internal/text"

	"go.yaml.in/yaml/v3"
)

// A build with run: runs a command, a program that builds TensorRT
// engines itself (a builder script, docs/builder-scripts.md), instead of
// building an ONNX model. It has keys of its own (run, env, workdir, and
// engine as a list) and takes no builder settings: the program's builder
// config holds them, and trt-action reads them from there and reports
// them. A key that would set one, written on the build, is refused where
// it is written; one in defaults does not apply to it (the other builds
// take it), as run:, engine: and sim: in defaults do not.

// scriptKeys are the keys a build with run: allows.
var scriptKeys = []string{"name", "backend", "run", "engine", "inputs", "outputs", "env", "workdir", "budgets", "matrix"}

// scriptDefaults are the keys of defaults a build with run: takes.
var scriptDefaults = []string{"name", "backend", "env", "workdir", "budgets"}

// scriptOnly are the keys only a build with run: has.
var scriptOnly = []string{"run", "env", "workdir", "inputs", "outputs"}

// noSettings says why a build with run: takes no builder settings.
const noSettings = "a build with run: takes no builder settings: its program's code sets them, " +
	"and trt-action reads them from the builder config and reports them"

// isScript reports whether a build's own keys make it a build with run:.
func isScript(own *yaml.Node) bool { return index(own, "run") >= 0 }

// scriptSource is the mapping a build with run: is decoded from: its own
// keys that it allows, over the keys of defaults it takes. Every other
// key written on it is refused here, once for all its matrix combinations.
func (w *walker) scriptSource(own *yaml.Node, defaults *buildSource) *yaml.Node {
	kept := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: own.Line, Column: own.Column}
	for _, p := range w.pairs(own, "build") {
		key := p.key.Value
		switch _, isSetting := settings.Lookup(key); {
		case slices.Contains(scriptKeys, key):
			kept.Content = append(kept.Content, p.key, p.val)
		case key == "onnx":
			w.errs.add(w.pos(p.key), "onnx: a build with run: builds what its command builds; give the command the model it reads (in run:), or make a build without run: to build this model")
		case key == "trtexec" || isSetting:
			w.errs.add(w.pos(p.key), "%s: %s", key, noSettings)
		case key == simKey:
			w.errs.add(w.pos(p.key), "%s: a build with run: is never simulated by its own settings; build --backend %s stands a simulated build in for it", key, backend.Sim)
		default:
			w.errs.add(w.pos(p.key), "%s", unknownKey(key, "build with run:", scriptKeys))
		}
	}
	// Of defaults (readDefaults kept a mapping), the keys it takes; never
	// the trtexec line, which splitLine took out of it.
	taken := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if m := defaults.defaults; !isNull(m) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if slices.Contains(scriptDefaults, m.Content[i].Value) {
				taken.Content = append(taken.Content, m.Content[i], m.Content[i+1])
			}
		}
	}
	return w.merge(taken, kept)
}

// noteDefaults warns, once, of the keys of defaults (as written) that
// some builds do not take: builds with run: take only scriptDefaults, and
// the other builds none of scriptOnly. Neither is an error: one defaults
// serves both kinds of build.
func (w *walker) noteDefaults(defaults *yaml.Node) {
	if isNull(defaults) {
		return
	}
	var notScript, onlyScript []string
	var notScriptAt, onlyScriptAt Pos
	for i := 0; i+1 < len(defaults.Content); i += 2 {
		k := resolve(defaults.Content[i])
		switch {
		case slices.Contains(scriptOnly, k.Value):
			if onlyScript = append(onlyScript, k.Value); len(onlyScript) == 1 {
				onlyScriptAt = w.pos(k)
			}
		case !slices.Contains(scriptDefaults, k.Value):
			if notScript = append(notScript, k.Value); len(notScript) == 1 {
				notScriptAt = w.pos(k)
			}
		}
	}
	if len(notScript) > 0 && w.firstScript != (Pos{}) {
		w.warns.add(notScriptAt, "defaults: %s: not for builds with run: (the first at %s), which take only %s from defaults",
			choices(notScript), w.firstScript, choices(scriptDefaults))
	}
	if len(onlyScript) > 0 && w.firstModel != (Pos{}) {
		w.warns.add(onlyScriptAt, "defaults: %s: only for builds with run:; the builds without it (the first at %s) do not take them",
			choices(onlyScript), w.firstModel)
	}
}

// scriptBuild decodes one expanded build with run: from n (scriptSource).
func (d *decoder) scriptBuild(n *yaml.Node, at Pos) Build {
	keys := d.w.fields(n, "build with run:", scriptKeys)
	s := &Script{}
	b := Build{Axes: d.combo.asMap(), Pos: at, Script: s, EnginePos: at}
	d.name(keys, &b, at)
	b.Backend = d.scriptBackend(keys, at)
	if p, ok := keys.get("run"); ok {
		s.Argv, s.RunPos = d.command(p.val), d.w.pos(p.key)
	}
	if p, ok := keys.get("engine"); ok {
		s.Engines, s.EnginePos = d.declaredFiles(p, "engine", nil)
	}
	if p, ok := keys.get("env"); ok {
		s.Env = d.env(p.val)
	}
	s.Workdir = d.workdir(keys)
	s.Workspace, s.Roots = d.w.ws.root, d.w.ws.roots()
	if p, ok := keys.get("inputs"); ok {
		s.Inputs, s.InputPos = d.inputs(p)
		s.InputsPos = d.w.pos(p.key)
	}
	var outputsAt Pos
	if p, ok := keys.get("outputs"); ok {
		s.Outputs, s.OutputPos = d.declaredFiles(p, "outputs", s.Engines)
		outputsAt = d.w.pos(p.key)
	}
	d.checkCaching(s, outputsAt)
	if p, ok := keys.get("budgets"); ok {
		b.Budgets = d.budgets(p.val)
	}
	b.Budgets.Grace = cmp.Or(b.Budgets.Grace, defaultGrace)
	b.Sim = defaultSim() // for the simulated build --backend sim puts in its place
	return b
}

// scriptBackend reads backend: the TensorRT the program imports.
func (d *decoder) scriptBackend(keys fieldSet, at Pos) string {
	p, ok := keys.get("backend")
	if !ok {
		d.w.errs.add(at, "build: backend is required: for a build with run:, the TensorRT its program imports (%s)", choices(scriptBackends()))
		return ""
	}
	if s, ok := d.text(p.val, "backend", "one of "+choices(scriptBackends())); ok && backend.Of(s).Simulated {
		d.w.errs.add(d.w.pos(p.val), "backend: %s runs no command: a build with run: names the TensorRT its program imports (%s); build --backend %s stands a simulated build in for it",
			s, choices(scriptBackends()), backend.Sim)
		return ""
	}
	name, _ := d.enum(p.val, "backend", scriptBackends())
	return name
}

// scriptBackends are the backends a program can import: the real ones.
func scriptBackends() []string {
	return slices.DeleteFunc(backend.Names(), func(name string) bool { return backend.Of(name).Simulated })
}

// command reads run: a string split into words as a shell would split
// it (command.go), or a list of words taken as they are.
func (d *decoder) command(n *yaml.Node) []string {
	n = resolve(n)
	var argv []string
	switch {
	case n.Kind == yaml.SequenceNode:
		items, _ := d.w.items(n, "run", "a list of words")
		if len(items) == 0 {
			d.w.errs.add(d.w.pos(n), "run: the list is empty; give the command and its arguments, like [python, build.py]")
			return nil
		}
		ok := true
		for _, it := range items {
			word, good := d.text(it, "run", "a word (a string)")
			if good && strings.ContainsRune(word, 0) {
				d.w.errs.add(d.w.pos(it), "run: %q holds a NUL character, which no argument can hold", word)
				good = false
			}
			ok = ok && good
			argv = append(argv, word)
		}
		if !ok {
			return nil
		}
	case n.Kind == yaml.ScalarNode && !isNull(n):
		s, where, ok := d.substituteMapped(n, n.Value)
		if !ok {
			return nil
		}
		words, issues := splitCommand(s)
		for _, is := range issues {
			at := d.w.posAt(n, where.source(is.at))
			if is.warn {
				d.w.warns.add(at, "run: %s", is.msg)
				continue
			}
			d.w.errs.add(at, "run: %s", is.msg)
			return nil
		}
		if len(words) == 0 {
			d.w.errs.add(d.w.pos(n), "run: the command is empty; give it, like run: python build.py")
			return nil
		}
		if i := slices.IndexFunc(words, func(w string) bool { return strings.ContainsRune(w, 0) }); i >= 0 {
			d.w.errs.add(d.w.pos(n), "run: word %d holds a NUL character, which no argument can hold", i+1)
			return nil
		}
		argv = words
	default:
		d.w.errs.add(d.w.pos(n), "run: expected a command (a string, split into words as a shell would split it, or a list of words), got %s", describe(n))
		return nil
	}
	if argv[0] == "" {
		d.w.errs.add(d.w.pos(n), "run: the command's name (its first word) is empty")
		return nil
	}
	return argv
}

// declaredFiles reads engine: or outputs: (what) of a build with run:,
// one path or a list: files its program writes, each an output of the
// run, none named twice nor among taken (its engines, for outputs:).
func (d *decoder) declaredFiles(p pair, what string, taken []string) ([]string, []Pos) {
	v := resolve(p.val)
	items := []*yaml.Node{v}
	at := []Pos{d.w.pos(p.key)} // one file is named at its key, as a build's engine is
	if v.Kind == yaml.SequenceNode {
		items, _ = d.w.items(v, what, "a list of paths")
		if len(items) == 0 {
			d.w.errs.add(d.w.pos(v), "%s: the list is empty; name at least one file, or remove the key for none", what)
			return nil, nil
		}
		at = at[:0]
		for _, it := range items {
			at = append(at, d.w.pos(it))
		}
	}
	var paths []string
	var pos []Pos
	for i, it := range items {
		path, ok := d.outputPath(it, what)
		if !ok {
			continue
		}
		if j := slices.Index(paths, path); j >= 0 {
			d.w.errs.add(at[i], "%s: %s is named twice (first at %s)", what, quoted(path), pos[j])
			continue
		}
		if slices.Contains(taken, path) {
			d.w.errs.add(at[i], "%s: %s is one of the build's engines; an output is another file", what, quoted(path))
			continue
		}
		paths, pos = append(paths, path), append(pos, at[i])
	}
	return paths, pos
}

// env reads env: {NAME: value}, as NAME=value sorted by name. Values are
// taken as written: a scalar's text, with ${{ matrix.X }} substituted.
func (d *decoder) env(n *yaml.Node) []string {
	var out []string
	for _, p := range d.w.pairs(n, "env") {
		name := p.key.Value
		if msg := envNameProblem(name); msg != "" {
			d.w.errs.add(d.w.pos(p.key), "env: %s", msg)
			continue
		}
		if isNull(p.val) {
			d.w.errs.add(d.w.pos(p.key), "env.%s: expected a string, number or boolean, got nothing (null); write %s: \"\" for an empty value", name, name)
			continue
		}
		v, ok := d.text(p.val, "env."+name, "a string, number or boolean")
		if ok && strings.ContainsRune(v, 0) {
			d.w.errs.add(d.w.pos(p.val), "env.%s: %s", name, nulInValue)
			ok = false
		}
		if msg := envValueProblem(name, v); ok && msg != "" {
			d.w.errs.add(d.w.pos(p.val), "env.%s: %s", name, msg)
			ok = false
		}
		if ok {
			out = append(out, name+"="+v)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(envName(a), envName(b)) })
	return out
}

// envNameProblem says why env: may not set name; "" when it may.
func envNameProblem(name string) string {
	switch {
	case !text.IsEnvName(name):
		return fmt.Sprintf("%q is not a variable name; use letters, digits and _, not starting with a digit", name)
	case slices.Contains(pyhook.HookEnv, name):
		return name + " is set by trt-action, for the hook that observes the builds the command runs; leave it out"
	}
	return ""
}

// envValueProblem says why env: may not give name the value v; "" when
// it may.
func envValueProblem(name, v string) string {
	if name == pyhook.EnvRoute && v != pyhook.RoutePython {
		return fmt.Sprintf("%q: only %s is allowed (every TensorRT build of the command on the Python route); leave %s out for the native route where it can be taken",
			v, pyhook.RoutePython, pyhook.EnvRoute)
	}
	return ""
}

// nulInValue says why a value may not hold a NUL character.
const nulInValue = "holds a NUL character, which no environment variable can hold"

func envName(kv string) string {
	name, _, _ := strings.Cut(kv, "=")
	return name
}

// EnvNames are the names of the variables s's env: sets, in order: what
// plan shows of them.
func (s *Script) EnvNames() []string {
	names := make([]string, len(s.Env))
	for i, kv := range s.Env {
		names[i] = envName(kv)
	}
	return names
}

// workdir reads workdir:, the folder the command starts in, absolute;
// default the matrix file's folder. Like a model, it must be there when
// the inputs are checked.
func (d *decoder) workdir(keys fieldSet) string {
	p, ok := keys.get("workdir")
	if !ok {
		return runfiles.Abs(d.w.dir)
	}
	dir, ok := d.path(p.val, "workdir")
	if !ok {
		return ""
	}
	if d.w.skipInputs {
		return runfiles.Abs(dir)
	}
	if msg := folderProblem(dir, quoted(d.w.dir)); msg != "" {
		d.w.errs.add(d.w.pos(p.val), "workdir: %s", msg)
	}
	return runfiles.Abs(dir)
}

// folderProblem says why dir, a path relative to relTo (the folder, as a
// message names it), is not a folder a command can start in; "" when it
// is one.
func folderProblem(dir, relTo string) string {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "folder " + quoted(dir) + " not found (relative paths are relative to " + relTo + ")"
	case err != nil:
		return quoted(dir) + ": " + err.Error()
	case !fi.IsDir():
		return quoted(dir) + " is not a folder"
	}
	return ""
}
