package matrix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/settings"

	"go.yaml.in/yaml/v3"
)

// Keys each mapping allows. schema.json must list the same keys
// (schema_test.go checks).
var (
	topKeys   = []string{"version", "run-budget", "regression", "allow-paths", "cache", "matrix", "defaults", "builds"}
	buildKeys = slices.Concat([]string{"name", "backend", "onnx", "engine"}, scriptOnly, settings.Keys(),
		[]string{"trtexec", "budgets", simKey, "matrix"})
	// defaultsKeys are the build keys defaults may hold: not a build's own
	// matrix, nor its command, nor what it declares for the cache (each
	// build with run: names its own).
	defaultsKeys = slices.DeleteFunc(slices.Clone(buildKeys), func(k string) bool {
		return k == "matrix" || k == "run" || k == "inputs" || k == "outputs"
	})
	budgetKeys     = []string{"build", "stall", "phases", "warn", "grace", "memory", "gpu-memory"}
	simKeys        = []string{"trace", "step", "threads", "fault", "repeat", "engine-size", "allocate"}
	regressionKeys = []string{"warn", "fail", "min", "memory"}
	cacheKeys      = []string{"dir", "max-size", "remote", "remote-mode"}
	shapeKeys      = []string{"min", "opt", "max"}
)

// simKey holds the simulated backend's own settings, under its name.
const simKey = backend.Sim

// faultKinds are the simulator faults sim.fault allows.
var faultKinds = []string{"none", "crash", "hang", "fail", "silence"}

const (
	// maxBuilds bounds a whole file's expansion.
	maxBuilds = 200000
	// maxExpandedNodes bounds the document after alias expansion, against
	// "billion laughs" files.
	maxExpandedNodes = 5000000
)

// walker holds what one parseContent call shares across builds.
type walker struct {
	file string // the path as given, for positions
	// src is the file's text, for the position of a part of a scalar
	// (posAt); lineStarts, worked out from it when first needed.
	src        []byte
	lineStarts []int
	dir        string // relative paths in the file are relative to this
	ws         workspace
	// realDirs caches output folders with their symlinks resolved.
	realDirs map[string]string
	errs     collector
	warns    collector       // File.Warnings
	stats    map[string]bool // path -> exists; many builds name the same model
	axes     map[string]bool // every axis of every build, for top-level excludes
	// topExcludeKeys are top-level exclude keys some build did not have as an axis.
	topExcludeKeys []*yaml.Node
	// aliasKeys are the key nodes canonical made for alias keys, each
	// with the alias it was written as (aliases.go).
	aliasKeys map[*yaml.Node]string

	// skipInputs leaves out the check that input files (models, traces)
	// exist: a plan is made where the models are not.
	skipInputs bool

	// firstScript and firstModel are where the first build with run: and
	// the first build of a model are, for what defaults says to each.
	firstScript, firstModel Pos
}

func (w *walker) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: w.file}
	}
	return Pos{File: w.file, Line: n.Line, Column: n.Column}
}

// Load reads, parses, expands and validates the matrix file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseContent(path, data)
}

// LoadPartial is Load, except that a file with errors (Errors) comes back
// too, as far as it decoded: its builds with what of each was valid, so a
// check of the files they name can report beside the file's errors rather
// than on the run after they are fixed. The File is nil when the file
// cannot be read or is not YAML.
func LoadPartial(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parsePartial(path, data, false)
}

// LoadWithoutInputs is Load without the check that input files (models,
// traces) exist: plan and merge run on machines that have the matrix file
// but not the models. Everything else is checked as by Load.
func LoadWithoutInputs(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, data, true)
}

// parseContent is Load without reading: data is the file's content. Relative paths
// inside are resolved (and checked to exist) against filepath.Dir(path).
// The error, if any, is an Errors listing every problem by position.
func parseContent(path string, data []byte) (*File, error) {
	return parse(path, data, false)
}

func parse(path string, data []byte, skipInputs bool) (*File, error) {
	f, err := parsePartial(path, data, skipInputs)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// parsePartial is parse returning the File as far as it decoded, also
// beside errors; nil when the document could not be read at all.
func parsePartial(path string, data []byte, skipInputs bool) (*File, error) {
	w := &walker{file: path, src: data, dir: filepath.Dir(path), ws: findWorkspace(filepath.Dir(path)), stats: map[string]bool{}, axes: map[string]bool{}, aliasKeys: map[*yaml.Node]string{}, skipInputs: skipInputs}
	doc, ok := w.parseYAML(data)
	if !ok {
		return nil, w.errs.result()
	}
	f := w.topLevel(doc)
	if w.warns.result() != nil {
		f.Warnings = w.warns.errs
	}
	return f, w.errs.result()
}

// parseYAML returns the document's root node.
func (w *walker) parseYAML(data []byte) (root *yaml.Node, ok bool) {
	var doc yaml.Node
	if err := safeUnmarshal(data, &doc); err != nil {
		w.errs.add(syntaxPos(w.file, data, err), "%s", syntaxMessage(err))
		return nil, false
	}
	if len(doc.Content) == 0 {
		w.errs.add(Pos{File: w.file, Line: 1, Column: 1}, "the file is empty; it needs at least version: 1 and builds")
		return nil, false
	}
	root = doc.Content[0]
	if expandedSize(root, map[*yaml.Node]int{}) > maxExpandedNodes {
		w.errs.add(w.pos(root), "the document is too large after expanding aliases")
		return nil, false
	}
	return root, true
}

// safeUnmarshal turns a panic inside the YAML library into an error, so a
// malformed file can never crash the program.
func safeUnmarshal(data []byte, out *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse: %v", r)
		}
	}()
	return yaml.Unmarshal(data, out)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// maxSearchLines bounds the prefix search in syntaxPos.
const maxSearchLines = 20000

// syntaxPos finds where a YAML syntax error is. The library reports only a
// line, and for many errors it is the line where the enclosing block began
// rather than the offending one. The offending line is the first whose
// inclusion makes a prefix of the file fail with the same message, found by
// bisection. The column is that line's first non-blank character.
func syntaxPos(file string, data []byte, err error) Pos {
	lines := strings.SplitAfter(string(data), "\n")
	line := 0
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	if len(lines) <= maxSearchLines {
		if found := firstFailingLine(lines, syntaxMessage(err)); found > 0 {
			line = found
		}
	}
	if line < 1 || line > len(lines) {
		return Pos{File: file, Line: max(line, 1), Column: 1}
	}
	text := lines[line-1]
	col := 1 + len(text) - len(strings.TrimLeft(text, " \t"))
	return Pos{File: file, Line: line, Column: col}
}

// firstFailingLine returns the smallest n such that the first n lines fail
// to parse with message msg, or 0.
func firstFailingLine(lines []string, msg string) int {
	fails := func(n int) bool {
		var doc yaml.Node
		err := safeUnmarshal([]byte(strings.Join(lines[:n], "")), &doc)
		return err != nil && syntaxMessage(err) == msg
	}
	lo, hi := 1, len(lines)
	if !fails(hi) {
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func syntaxMessage(err error) string {
	msg := yamlLine.ReplaceAllString(err.Error(), "")
	return "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")
}

// expandedSize counts nodes with aliases expanded; memo makes it linear.
// A node being counted is marked -1 so a cycle counts as too large.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int) int {
	if n == nil {
		return 0
	}
	if s, seen := memo[n]; seen {
		if s < 0 {
			return maxExpandedNodes + 1
		}
		return s
	}
	memo[n] = -1
	size := 1
	if n.Kind == yaml.AliasNode {
		size += expandedSize(n.Alias, memo)
	}
	for _, c := range n.Content {
		size += expandedSize(c, memo)
		if size > maxExpandedNodes {
			break
		}
	}
	memo[n] = size
	return size
}

// topLevel reads the whole file from its root mapping.
func (w *walker) topLevel(root *yaml.Node) *File {
	top := w.fields(root, "the file", topKeys)
	d := &decoder{w: w}
	f := &File{Path: w.file, Version: d.version(top, root)}
	if p, ok := top.get("run-budget"); ok {
		f.RunBudget, _ = d.duration(p.val, "run-budget")
	}
	if p, ok := top.get("regression"); ok {
		f.Regression = d.regression(p.val)
	}
	if p, ok := top.get("allow-paths"); ok {
		d.readAllowPaths(p.val) // before the builds, whose outputs it allows
	}
	if p, ok := top.get("cache"); ok {
		f.Cache = d.cache(p) // after allow-paths, which may allow its folder
	}
	topMatrix := w.readMatrix(top.val("matrix"), "matrix", true)
	written := w.readDefaults(top.val("defaults"))
	defaults, defaultsLine := w.splitLine(w.canonical(written))
	f.Builds = w.builds(top, root, &buildSource{defaults: defaults, defaultsLine: defaultsLine}, topMatrix)
	w.noteDefaults(written)
	w.checkTopExcludes()
	w.checkUniqueNames(f.Builds)
	w.checkUniqueEngines(f.Builds)
	return f
}

// version returns 1, the only version, or reports why not.
func (d *decoder) version(top fieldSet, root *yaml.Node) int {
	p, ok := top.get("version")
	if !ok {
		d.w.errs.add(d.w.pos(root), "version is required; write version: 1")
		return 0
	}
	v, ok := d.text(p.val, "version", "1")
	if !ok {
		return 0
	}
	if strings.TrimSpace(v) != "1" {
		d.w.errs.add(d.w.pos(p.val), "version: unsupported version %q; the only version is 1", v)
		return 0
	}
	return 1
}

// builds expands every item of the builds list, in file order.
func (w *walker) builds(top fieldSet, root *yaml.Node, defaults *buildSource, topMatrix *matrixSpec) []Build {
	p, ok := top.get("builds")
	if !ok {
		w.errs.add(w.pos(root), "builds is required: a list of builds, each with at least name and backend")
		return nil
	}
	items, ok := w.items(p.val, "builds", "a list of builds")
	if ok && len(items) == 0 {
		w.errs.add(w.pos(p.val), "builds: the list is empty; add at least one build")
	}
	var out []Build
	for _, item := range items {
		out = append(out, w.expandBuild(item, defaults, topMatrix)...)
		if len(out) > maxBuilds {
			w.errs.add(w.pos(p.key), "builds: the matrix expands to more than %d builds", maxBuilds)
			return out
		}
	}
	return out
}

func (d *decoder) regression(n *yaml.Node) *Regression {
	r := &Regression{}
	for key, p := range d.w.fields(n, "regression", regressionKeys).all() {
		switch key {
		case "warn":
			r.WarnPercent, _ = d.percent(p.val, "regression.warn", 0)
		case "fail":
			r.FailPercent, _ = d.percent(p.val, "regression.fail", 0)
		case "min":
			r.Min, _ = d.duration(p.val, "regression.min")
		case "memory":
			r.MemoryPercent, _ = d.percent(p.val, "regression.memory", 0)
		}
	}
	if r.WarnPercent > 0 && r.FailPercent > 0 && r.WarnPercent > r.FailPercent {
		d.w.errs.add(d.w.pos(n), "regression: warn (%g%%) must not be above fail (%g%%)", r.WarnPercent, r.FailPercent)
	}
	return r
}

// cache reads the top-level cache: {dir, max-size}. The folder is written
// to, so like an engine it must lie in the workspace or an allowed folder.
// Without dir the folder comes from the command line (--cache, the
// action's cache input); build says so when neither gives one.
func (d *decoder) cache(p pair) *Cache {
	if v := resolve(p.val); isNull(v) || v.Kind != yaml.MappingNode {
		where, hint := d.w.pos(p.val), ""
		if isNull(v) {
			where, hint = d.w.pos(p.key), "; remove the key to turn the cache off"
		}
		d.w.errs.add(where, "cache: expected a mapping like {dir: .trt-cache, max-size: 20GiB}, got %s; allowed keys: %s%s",
			describe(v), strings.Join(cacheKeys, ", "), hint)
		return nil
	}
	c := &Cache{Pos: d.w.pos(p.key)}
	fs := d.w.fields(p.val, "cache", cacheKeys)
	if dp, ok := fs.get("dir"); ok {
		if dir, ok := d.path(dp.val, "cache.dir"); ok {
			c.Dir, c.DirPos = dir, d.w.pos(dp.key)
			d.checkOutputFolder(d.w.pos(dp.val), "cache.dir", dir)
		}
	}
	if sp, ok := fs.get("max-size"); ok {
		c.MaxSize, _ = d.byteSize(sp.val, "cache.max-size")
	}
	if rp, ok := fs.get("remote"); ok {
		c.Remote, c.RemotePos = d.remoteURL(rp.val), d.w.pos(rp.key)
	}
	if mp, ok := fs.get("remote-mode"); ok {
		c.RemoteMode, _ = d.enum(mp.val, "cache.remote-mode", RemoteModes)
		c.RemoteModePos = d.w.pos(mp.key)
	}
	return c
}

// RemoteModes are what cache.remote-mode (and --cache-remote-mode) take:
// remote.Mode's values, the first the default.
var RemoteModes = []string{string(remote.ReadWrite), string(remote.ReadOnly)}

// remoteURL reads cache.remote: a URL remote.Open takes (oci://… or
// s3://…). Only its form is checked here, with no credentials read and
// nothing sent: the store is opened, and may be down, when a run starts.
func (d *decoder) remoteURL(n *yaml.Node) string {
	raw, ok := d.text(n, "cache.remote", "a URL: "+strings.Join(remote.Forms(), " or "))
	if !ok {
		return ""
	}
	if err := CheckRemote(raw); err != nil {
		d.w.errs.add(d.w.pos(n), "cache.remote: %v", err)
		return ""
	}
	return raw
}

// CheckRemote refuses a shared store's URL of a form no store takes (a
// *remote.URLError, which names the forms): remote.Open is asked with an
// empty environment, so it reads no credentials of this process, and its
// other errors (a configuration it could not read) are left to the run.
func CheckRemote(raw string) error {
	_, err := remote.Open(context.Background(), raw, remote.Options{Getenv: func(string) string { return "" }})
	var ue *remote.URLError
	if errors.As(err, &ue) {
		return ue
	}
	return nil
}

// readDefaults keeps the valid build keys of defaults, reporting the rest
// once here rather than once per build.
func (w *walker) readDefaults(n *yaml.Node) *yaml.Node {
	if isNull(n) {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for _, p := range w.pairs(n, "defaults") {
		switch {
		case p.key.Value == "matrix":
			w.errs.add(w.pos(p.key), "defaults: matrix is not allowed here; put shared axes in the top-level matrix")
		case p.key.Value == "run":
			w.errs.add(w.pos(p.key), "defaults: run is not allowed here; each build with run: names its own command")
		case p.key.Value == "inputs" || p.key.Value == "outputs":
			w.errs.add(w.pos(p.key), "defaults: %s is not allowed here; each build with run: declares its own", p.key.Value)
		case !slices.Contains(defaultsKeys, p.key.Value):
			w.errs.add(w.pos(p.key), "%s", unknownKey(p.key.Value, "defaults", defaultsKeys))
		default:
			out.Content = append(out.Content, p.key, p.val)
		}
	}
	return out
}

// merge lays own over def: mappings merge key by key, recursively (so
// budgets.phases merge by phase pattern); anything else in own replaces
// def. A null in own inherits def.
func (w *walker) merge(def, own *yaml.Node) *yaml.Node {
	def, own = resolve(def), resolve(own)
	if isNull(own) {
		return def
	}
	if isNull(def) || def.Kind != yaml.MappingNode || own.Kind != yaml.MappingNode {
		return own
	}
	defPairs, ownPairs := w.pairs(def, "defaults"), w.pairs(own, "build")
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: own.Line, Column: own.Column}
	inOwn := make(map[string]bool, len(ownPairs))
	for _, op := range ownPairs {
		inOwn[op.key.Value] = true
		val := op.val
		for _, dp := range defPairs {
			if dp.key.Value == op.key.Value {
				val = w.merge(dp.val, op.val)
				break
			}
		}
		out.Content = append(out.Content, op.key, val)
	}
	for _, dp := range defPairs {
		if !inOwn[dp.key.Value] {
			out.Content = append(out.Content, dp.key, dp.val)
		}
	}
	return out
}

// mergeBuild lays a build's keys from one source (own) over those from the
// sources before it (def), as merge does, but for the keys that write one
// setting in two forms (the settings table's ItemOf: shapes is one item of
// profiles): a source that writes either replaces what the sources before
// it wrote in the other, so a build's profiles replaces its defaults'
// shapes, and its shapes their profiles, as a list replaces a list.
func (w *walker) mergeBuild(def, own *yaml.Node) *yaml.Node {
	def, own = resolve(def), resolve(own)
	if isNull(def) || isNull(own) || def.Kind != yaml.MappingNode || own.Kind != yaml.MappingNode {
		return w.merge(def, own)
	}
	var replaced []string
	for _, row := range settings.All() {
		switch {
		case row.ItemOf == "":
		case index(own, row.Key) >= 0:
			replaced = append(replaced, row.ItemOf)
		case index(own, row.ItemOf) >= 0:
			replaced = append(replaced, row.Key)
		}
	}
	if !slices.ContainsFunc(replaced, func(key string) bool { return index(def, key) >= 0 }) {
		return w.merge(def, own)
	}
	kept := &yaml.Node{Kind: yaml.MappingNode, Tag: def.Tag, Line: def.Line, Column: def.Column}
	for i := 0; i+1 < len(def.Content); i += 2 {
		if !slices.Contains(replaced, resolve(def.Content[i]).Value) {
			kept.Content = append(kept.Content, def.Content[i], def.Content[i+1])
		}
	}
	return w.merge(kept, own)
}

// buildSource is where one builds item's keys come from, lowest
// precedence first: its defaults' trtexec line, its defaults, its own
// line, its own keys (trtexec.go). Each mapping says every setting in its
// one place (canonical). merged is the four merged, when no line needs
// reading for each matrix combination.
type buildSource struct {
	defaultsLine, defaults, line, keys *yaml.Node
	merged                             *yaml.Node
}

// splitLine takes the trtexec line out of a mapping of build keys.
func (w *walker) splitLine(m *yaml.Node) (keys, line *yaml.Node) {
	if isNull(m) {
		return m, nil
	}
	keys = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: m.Line, Column: m.Column}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "trtexec" && !isNull(m.Content[i+1]) {
			line = m.Content[i+1]
			continue
		}
		keys.Content = append(keys.Content, m.Content[i], m.Content[i+1])
	}
	return keys, line
}

// expandBuild turns one builds item into its expanded builds.
func (w *walker) expandBuild(item *yaml.Node, defaults *buildSource, topMatrix *matrixSpec) []Build {
	item = resolve(item)
	if item.Kind != yaml.MappingNode {
		w.errs.add(w.pos(item), "builds: expected a build (a mapping with name, backend, ...), got %s", describe(item))
		return nil
	}
	own := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: item.Line, Column: item.Column}
	var ownMatrix *matrixSpec
	for _, p := range w.pairs(item, "build") {
		if p.key.Value == "matrix" {
			ownMatrix = w.readMatrix(p.val, "matrix", false)
			continue
		}
		own.Content = append(own.Content, p.key, p.val)
	}
	at := w.pos(item)
	script, src := w.itemSource(own, defaults, at)
	spec := combine(topMatrix, ownMatrix)
	if spec != nil {
		for _, name := range spec.axisNames() {
			w.axes[name] = true
		}
	}
	combos := w.expand(spec, at)
	builds := make([]Build, 0, len(combos))
	for _, c := range combos {
		d := &decoder{w: w, combo: c, inBuild: true}
		if script != nil {
			builds = append(builds, d.scriptBuild(script, at))
		} else {
			builds = append(builds, d.build(src, at))
		}
	}
	return builds
}

// itemSource is where one builds item's builds are decoded from, own its
// keys but its matrix: for a build with run:, the mapping scriptBuild
// reads (script); else the sources build reads (src).
func (w *walker) itemSource(own *yaml.Node, defaults *buildSource, at Pos) (script *yaml.Node, src *buildSource) {
	if isScript(own) {
		if w.firstScript == (Pos{}) {
			w.firstScript = at
		}
		return w.scriptSource(own, defaults), nil
	}
	if w.firstModel == (Pos{}) {
		w.firstModel = at
	}
	src = &buildSource{defaultsLine: defaults.defaultsLine, defaults: defaults.defaults}
	src.keys, src.line = w.splitLine(w.canonical(own))
	if src.defaultsLine == nil && src.line == nil {
		src.merged = w.mergeBuild(src.defaults, src.keys)
	}
	for _, key := range scriptOnly {
		if i := index(own, key); i >= 0 {
			w.errs.add(w.pos(resolve(own.Content[i])), "%s: only a build with run: has %s; this build builds a model", key, key)
		}
	}
	return nil, src
}

func (w *walker) checkTopExcludes() {
	known := make([]string, 0, len(w.axes))
	for name := range w.axes {
		known = append(known, name)
	}
	slices.Sort(known)
	for _, k := range w.topExcludeKeys {
		if !w.axes[k.Value] {
			w.errs.add(w.pos(k), "matrix.exclude: %q is not a matrix axis of any build; axes: %s", k.Value, choices(known))
		}
	}
}

func (w *walker) checkUniqueNames(builds []Build) {
	first := make(map[string]int, len(builds))
	for i, b := range builds {
		if b.Name == "" {
			continue
		}
		j, dup := first[b.Name]
		if !dup {
			first[b.Name] = i
			continue
		}
		prev := builds[j]
		if prev.Pos == b.Pos {
			w.errs.add(b.Pos, "build name %q is the same for matrix combinations %s and %s; put ${{ matrix.AXIS }} in the name",
				b.Name, axesText(prev.Axes), axesText(b.Axes))
		} else {
			w.errs.add(b.Pos, "duplicate build name %q (first at %s)", b.Name, prev.Pos)
		}
	}
}

// checkUniqueEngines rejects two builds writing the same engine file: a
// build's engine, or one a build with run: names.
func (w *walker) checkUniqueEngines(builds []Build) {
	type writer struct{ build, engine int } // engine: an index into Script.Engines, or -1 for Engine
	first := make(map[string]writer, len(builds))
	for i, b := range builds {
		if b.Name == "" {
			continue
		}
		engines := []string{b.Engine}
		if b.Script != nil {
			engines = b.Script.Engines
		}
		for j, path := range engines {
			if path == "" {
				continue
			}
			this := writer{i, j}
			if b.Script == nil {
				this.engine = -1
			}
			prev, dup := first[path]
			switch {
			case !dup:
				first[path] = this
			case prev.build == i || builds[prev.build].Name == b.Name:
				// named twice by one build (engines said so), or a duplicate name (said already)
			default:
				w.errs.add(builds[i].enginePos(this.engine), "engine %s of build %q is also written by build %q (at %s); give each build its own engine path",
					quoted(path), b.Name, builds[prev.build].Name, builds[prev.build].enginePos(prev.engine))
			}
		}
	}
}

// enginePos is where engine i of b's command was named, or with i < 0
// where b's engine was.
func (b *Build) enginePos(i int) Pos {
	if i < 0 {
		return b.EnginePos
	}
	return b.Script.EnginePos[i]
}
