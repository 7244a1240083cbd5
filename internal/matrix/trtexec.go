package matrix

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/text"

	"go.yaml.in/yaml/v3"
)

// A build may say `trtexec: "--onnx=m.onnx --fp16 ..."`: its build flags
// become the build's keys. Keys written next to the line (in the same
// mapping, or in the build when the line comes from defaults) win over its
// flags. trtexecLine goes the other way.

// trtexecFlag is one trtexec build flag and the matrix key it sets.
type trtexecFlag struct {
	name    string // without "--"
	key     string
	noValue bool
	// read turns the flag's value into the key's YAML form in keys; nil
	// copies it to key as written.
	read func(keys *trtexecKeys, value string) error
}

// trtexecKeys collects the keys a line sets, as YAML nodes, so the
// decoder checks them exactly as if they were written as keys.
type trtexecKeys struct {
	at    *yaml.Node // the trtexec string: every node gets its position
	order []string
	nodes map[string]*yaml.Node
	flags map[string]string // key -> the flag that set it, for messages
}

func (k *trtexecKeys) node(kind yaml.Kind, tag, value string) *yaml.Node {
	return &yaml.Node{Kind: kind, Tag: tag, Value: value, Line: k.at.Line, Column: k.at.Column}
}

func (k *trtexecKeys) scalar(s string) *yaml.Node { return k.node(yaml.ScalarNode, "!!str", s) }

func (k *trtexecKeys) set(key string, n *yaml.Node) {
	if _, seen := k.nodes[key]; !seen {
		k.order = append(k.order, key)
	}
	k.nodes[key] = n
}

// list appends to a key holding a list.
func (k *trtexecKeys) list(key, item string) {
	n, ok := k.nodes[key]
	if !ok {
		n = k.node(yaml.SequenceNode, "!!seq", "")
		k.set(key, n)
	}
	n.Content = append(n.Content, k.scalar(item))
}

// mapping returns the mapping under key, then under each of path.
func (k *trtexecKeys) mapping(key string, path ...string) *yaml.Node {
	n, ok := k.nodes[key]
	if !ok {
		n = k.node(yaml.MappingNode, "!!map", "")
		k.set(key, n)
	}
	for _, p := range path {
		var child *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				child = n.Content[i+1]
			}
		}
		if child == nil {
			child = k.node(yaml.MappingNode, "!!map", "")
			n.Content = append(n.Content, k.scalar(p), child)
		}
		n = child
	}
	return n
}

func (k *trtexecKeys) put(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, k.scalar(key), v)
}

func (k *trtexecKeys) value(key, v string) error { k.set(key, k.scalar(v)); return nil }

// renamed reads a value through a table of trtexec's spellings.
func renamed(key string, names map[string]string) func(*trtexecKeys, string) error {
	return func(k *trtexecKeys, v string) error {
		ours, ok := names[v]
		if !ok {
			return fmt.Errorf("value %q; trtexec's values: %s", v, choices(keysOf(names)))
		}
		return k.value(key, ours)
	}
}

func keysOf[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func is(key, v string) func(*trtexecKeys, string) error {
	return func(k *trtexecKeys, _ string) error { return k.value(key, v) }
}

func addTo(key, item string) func(*trtexecKeys, string) error {
	return func(k *trtexecKeys, _ string) error { k.list(key, item); return nil }
}

func appendValue(key string) func(*trtexecKeys, string) error {
	return func(k *trtexecKeys, v string) error { k.list(key, v); return nil }
}

// trtexec's spellings of our values.
var (
	trtexecHardware  = map[string]string{"none": "none", "ampere+": "ampere-plus", "sameComputeCapability": "same-compute-capability"}
	trtexecPlatform  = map[string]string{"SameAsBuild": "same-as-build", "WindowsAMD64": "windows-amd64"}
	trtexecVerbosity = map[string]string{"layer_names_only": "layer-names-only", "detailed": "detailed", "none": "none"}
	trtexecTactics   = map[string]string{"CUBLAS": "cublas", "CUBLAS_LT": "cublas-lt", "CUDNN": "cudnn",
		"EDGE_MASK_CONVOLUTIONS": "edge-mask-convolutions", "JIT_CONVOLUTIONS": "jit-convolutions"}
	trtexecPreview = map[string]string{"profileSharing0806": "profile-sharing-0806", "aliasedPluginIO1003": "aliased-plugin-io-10-03",
		"runtimeActivationResize1010": "runtime-activation-resize-10-10", "multiDeviceRuntime1016": "multidevice-runtime-10-16"}
	trtexecPools = map[string]string{"workspace": "workspace", "tacticSharedMem": "tactic-shared", "dlaSRAM": "dla-sram",
		"dlaLocalDRAM": "dla-local", "dlaGlobalDRAM": "dla-global"}
	trtexecTargets = map[string]string{"7.5": "sm75", "8.0": "sm80", "8.6": "sm86", "8.9": "sm89", "12.0": "sm120", "12.1": "sm121"}
)

var trtexecFlags = []trtexecFlag{
	{name: "onnx", key: "onnx"},
	{name: "saveEngine", key: "engine"},
	{name: "fp16", key: "precision", noValue: true, read: addTo("precision", "fp16")},
	{name: "bf16", key: "precision", noValue: true, read: addTo("precision", "bf16")},
	{name: "int8", key: "precision", noValue: true, read: addTo("precision", "int8")},
	{name: "fp8", key: "precision", noValue: true, read: addTo("precision", "fp8")},
	{name: "best", key: "precision", noValue: true, read: addTo("precision", "best")},
	{name: "noTF32", key: "tf32", noValue: true, read: is("tf32", "false")},
	{name: "stronglyTyped", key: "strongly-typed", noValue: true, read: is("strongly-typed", "true")},
	{name: "minShapes", key: "shapes", read: readShapes("min")},
	{name: "optShapes", key: "shapes", read: readShapes("opt")},
	{name: "maxShapes", key: "shapes", read: readShapes("max")},
	{name: "shapes", key: "shapes", read: readStaticShapes},
	{name: "memPoolSize", key: "memory-pools", read: readPools},
	{name: "workspace", key: "workspace", read: func(k *trtexecKeys, v string) error { return k.value("workspace", v+"MiB") }},
	{name: "builderOptimizationLevel", key: "opt-level"},
	{name: "tilingOptimizationLevel", key: "tiling-optimization-level"},
	{name: "l2LimitForTiling", key: "l2-limit-for-tiling"},
	{name: "timingCacheFile", key: "timing-cache"},
	{name: "precisionConstraints", key: "precision-constraints"},
	{name: "layerPrecisions", key: "layer-precisions", read: readLayerTypes("layer-precisions")},
	{name: "layerOutputTypes", key: "layer-output-types", read: readLayerTypes("layer-output-types")},
	{name: "calib", key: "int8-calibration-cache"},
	{name: "hardwareCompatibilityLevel", key: "hardware-compatibility", read: renamed("hardware-compatibility", trtexecHardware)},
	{name: "versionCompatible", key: "version-compatible", noValue: true, read: is("version-compatible", "true")},
	{name: "vc", key: "version-compatible", noValue: true, read: is("version-compatible", "true")},
	{name: "excludeLeanRuntime", key: "exclude-lean-runtime", noValue: true, read: is("exclude-lean-runtime", "true")},
	{name: "refit", key: "refit", noValue: true, read: is("refit", "refit")},
	{name: "stripWeights", key: "strip-weights", noValue: true, read: is("strip-weights", "true")},
	{name: "weightStreaming", key: "weight-streaming", noValue: true, read: is("weight-streaming", "true")},
	{name: "runtimePlatform", key: "runtime-platform", read: renamed("runtime-platform", trtexecPlatform)},
	{name: "tacticSources", key: "tactic-sources", read: readToggles("tactic-sources", trtexecTactics)},
	{name: "maxTactics", key: "max-tactics"},
	{name: "sparsity", key: "sparsity", read: func(k *trtexecKeys, v string) error {
		if v == "force" {
			return errors.New("value force rewrites the model's weights, which trt-action does not do; prune the model and use enable")
		}
		return k.value("sparsity", v)
	}},
	{name: "maxAuxStreams", key: "max-aux-streams"},
	{name: "profilingVerbosity", key: "profiling-verbosity", read: renamed("profiling-verbosity", trtexecVerbosity)},
	{name: "preview", key: "preview-features", read: readToggles("preview-features", trtexecPreview)},
	{name: "useDLACore", key: "dla", read: func(k *trtexecKeys, v string) error { k.put(k.mapping("dla"), "core", k.scalar(v)); return nil }},
	{name: "allowGPUFallback", key: "dla", noValue: true, read: func(k *trtexecKeys, _ string) error {
		k.put(k.mapping("dla"), "gpu-fallback", k.scalar("true"))
		return nil
	}},
	{name: "staticPlugins", key: "plugins", read: appendValue("plugins")},
	{name: "dynamicPlugins", key: "plugins", read: appendValue("plugins")},
	{name: "plugins", key: "plugins", read: appendValue("plugins")},
	{name: "setPluginsToSerialize", key: "plugins-serialize", read: appendValue("plugins-serialize")},
	{name: "noCompilationCache", key: "builder-flags", noValue: true, read: addTo("builder-flags", "disable-compilation-cache")},
	{name: "errorOnTimingCacheMiss", key: "builder-flags", noValue: true, read: addTo("builder-flags", "error-on-timing-cache-miss")},
	{name: "computeCapabilities", key: "targets", read: func(k *trtexecKeys, v string) error {
		for _, cc := range strings.Split(v, ",") {
			t, ok := trtexecTargets[strings.TrimSpace(cc)]
			if !ok {
				return fmt.Errorf("compute capability %q; TensorRT-RTX builds for %s", cc, choices(keysOf(trtexecTargets)))
			}
			k.list("targets", t)
		}
		return nil
	}},
}

// trtexecInferenceFlags only matter when trtexec runs the engine: a line
// may keep them, and they are reported as ignored.
var trtexecInferenceFlags = []string{
	"iterations", "duration", "warmUp", "avgRuns", "percentile", "useCudaGraph", "noDataTransfers", "useSpinWait",
	"threads", "streams", "infStreams", "exposeDMA", "separateProfileRun", "dumpProfile", "dumpLayerInfo",
	"exportProfile", "exportTimes", "exportLayerInfo", "exportOutput", "dumpOutput", "dumpRawBindingsToFile",
	"loadInputs", "useRuntime", "leanDLLPath", "verbose", "skipInference", "device", "idleTime", "sleepTime",
	"useProfile", "timeDeserialize", "timeRefit", "persistentCacheRatio", "useManagedMemory",
	"allocationStrategy", "profile", "dumpRefit", "noBuilderCache", "timingCacheMode", "getPlanVersionOnly",
}

// trtexecUnsupported are build flags trt-action has no key for, with why.
var trtexecUnsupported = map[string]string{
	"loadEngine":                       "it loads an engine instead of building one",
	"inputIOFormats":                   "I/O formats are not a trt-action setting",
	"outputIOFormats":                  "I/O formats are not a trt-action setting",
	"stripAllWeights":                  "use strip-weights with refit: individual",
	"calibProfile":                     "calibration runs without data in trt-action",
	"safe":                             "the safety runtime is not supported",
	"consistency":                      "the safety runtime is not supported",
	"remoteAutoTuningConfig":           "remote auto-tuning is not supported",
	"markDebug":                        "debug tensors are not supported",
	"markUnfusedTensorsAsDebugTensors": "debug tensors are not supported",
	"tempdir":                          "not a build setting",
	"tempfileControls":                 "not a build setting",
	"directIO":                         "deprecated and not supported",
	"refitIdentical":                   "write refit: identical",
}

// withTrtexec returns n with the trtexec line's keys added, unless a key
// that wins over the line is written; own lists the build's own keys.
func (d *decoder) withTrtexec(n *yaml.Node, own map[string]bool) *yaml.Node {
	var line *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "trtexec" {
			line = resolve(n.Content[i+1])
		}
	}
	if line == nil {
		return n
	}
	text, ok := d.text(line, "trtexec", "a trtexec command line")
	if !ok {
		return n
	}
	keys, ignored, errs := parseTrtexec(text, line)
	for _, e := range errs {
		d.w.errs.add(d.w.pos(line), "trtexec: %s", e)
	}
	d.trtexecIgnored = ignored
	d.trtexecAt, d.trtexecFlags = d.w.pos(line), keys.flags
	wins := func(key string) bool {
		if own["trtexec"] {
			return own[key]
		}
		return true // the line comes from defaults: every written key wins
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	written := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if _, fromLine := keys.nodes[key]; fromLine && !wins(key) {
			continue
		}
		written[key] = true
		out.Content = append(out.Content, n.Content[i], n.Content[i+1])
	}
	for _, key := range keys.order {
		if !written[key] {
			out.Content = append(out.Content, keys.scalarKey(key), keys.nodes[key])
		}
	}
	return out
}

func (k *trtexecKeys) scalarKey(key string) *yaml.Node { return k.scalar(key) }

// nameTrtexecFlags rewrites the errors found since mark about keys a
// trtexec line set, so they name the flag the user wrote: "trtexec
// --builderOptimizationLevel: opt-level: expected an integer from 0 to 5".
func (d *decoder) nameTrtexecFlags(mark int) {
	c := &d.w.errs
	kept := c.errs[:mark]
	for _, e := range c.errs[mark:] {
		if e.Pos == d.trtexecAt {
			for key, flag := range d.trtexecFlags {
				if strings.HasPrefix(e.Msg, key+":") || strings.HasPrefix(e.Msg, key+".") || strings.HasPrefix(e.Msg, key+" and ") {
					e.Msg = "trtexec " + flag + ": " + e.Msg
					break
				}
			}
			if c.seen[e] && !slices.Contains(c.errs[mark:], e) {
				continue // the same rewritten error, from another combination of the matrix
			}
			c.seen[e] = true
		}
		kept = append(kept, e)
	}
	c.errs = kept
}

// parseTrtexec reads a trtexec command line: the program name may lead;
// every other word is --flag or --flag=value.
func parseTrtexec(line string, at *yaml.Node) (keys *trtexecKeys, ignored []string, errs []string) {
	keys = &trtexecKeys{at: at, nodes: map[string]*yaml.Node{}, flags: map[string]string{}}
	words, err := shellWords(line)
	if err != nil {
		return keys, nil, []string{err.Error()}
	}
	if len(words) > 0 && (words[0] == "trtexec" || words[0] == "tensorrt_rtx" || strings.HasSuffix(words[0], "/trtexec")) {
		words = words[1:]
	}
	names := make([]string, 0, len(trtexecFlags))
	for _, f := range trtexecFlags {
		names = append(names, f.name)
	}
	for _, w := range words {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(w, "--"), "=")
		if !strings.HasPrefix(w, "--") {
			errs = append(errs, fmt.Sprintf("%q is not a flag; write --name or --name=value", w))
			continue
		}
		i := slices.IndexFunc(trtexecFlags, func(f trtexecFlag) bool { return f.name == name })
		switch {
		case i >= 0:
			f := trtexecFlags[i]
			if f.noValue && hasValue {
				errs = append(errs, fmt.Sprintf("--%s takes no value, got %q", name, value))
			} else if !f.noValue && (!hasValue || value == "") {
				errs = append(errs, fmt.Sprintf("--%s needs a value: --%s=VALUE", name, name))
			} else if f.read == nil {
				keys.flags[f.key] = "--" + name
				_ = keys.value(f.key, value)
			} else if err := f.read(keys, value); err != nil {
				errs = append(errs, fmt.Sprintf("--%s: %v", name, err))
			} else {
				keys.flags[f.key] = "--" + name
			}
		case slices.Contains(trtexecInferenceFlags, name):
			ignored = append(ignored, "--"+name)
		case trtexecUnsupported[name] != "":
			errs = append(errs, fmt.Sprintf("--%s is not supported: %s", name, trtexecUnsupported[name]))
		default:
			msg := fmt.Sprintf("unknown flag --%s", name)
			if c := closest(name, names); c != "" {
				msg += fmt.Sprintf(" (did you mean --%s?)", c)
			}
			errs = append(errs, msg+"; see the README for the trtexec flags trt-action reads")
		}
	}
	return keys, ignored, errs
}

// readShapes reads "input:1x3x224x224,mask:1x64" into shapes.NAME.which.
func readShapes(which string) func(*trtexecKeys, string) error {
	return func(k *trtexecKeys, v string) error {
		for _, spec := range strings.Split(v, ",") {
			i := strings.LastIndex(spec, ":")
			if i <= 0 {
				return fmt.Errorf("%q is not NAME:DIMS like input:1x3x224x224", spec)
			}
			name := strings.Trim(spec[:i], `'"`)
			k.put(k.mapping("shapes", name), which, k.scalar(spec[i+1:]))
		}
		return nil
	}
}

// readStaticShapes reads --shapes, which trtexec also builds with: an
// input that --minShapes, --optShapes or --maxShapes leave out gets its
// --shapes dims for that bound, whatever the order of the flags.
func readStaticShapes(k *trtexecKeys, v string) error {
	for _, spec := range strings.Split(v, ",") {
		i := strings.LastIndex(spec, ":")
		if i <= 0 {
			return fmt.Errorf("%q is not NAME:DIMS like input:1x3x224x224", spec)
		}
		profile := k.mapping("shapes", strings.Trim(spec[:i], `'"`))
		for _, which := range []string{"min", "opt", "max"} {
			if !hasKey(profile, which) {
				profile.Content = append(profile.Content, k.scalar(which), k.scalar(spec[i+1:]))
			}
		}
	}
	return nil
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// readPools reads "workspace:1024,tacticSharedMem:48K": trtexec sizes are
// in MiB unless they end in B, K, M or G (binary units).
func readPools(k *trtexecKeys, v string) error {
	for _, spec := range strings.Split(v, ",") {
		pool, size, ok := strings.Cut(spec, ":")
		ours, known := trtexecPools[pool]
		if !ok || !known {
			return fmt.Errorf("%q is not POOL:SIZE with a pool of %s", spec, choices(keysOf(trtexecPools)))
		}
		unit := map[byte]string{'B': "B", 'K': "KiB", 'M': "MiB", 'G': "GiB"}
		suffix := "MiB"
		if n := len(size); n > 0 && unit[size[n-1]] != "" {
			suffix, size = unit[size[n-1]], size[:n-1]
		}
		if pool == "workspace" {
			k.set("workspace", k.scalar(size+suffix))
			continue
		}
		k.put(k.mapping("memory-pools"), ours, k.scalar(size+suffix))
	}
	return nil
}

// readLayerTypes reads "layer1:fp16,/conv*/Conv:fp32".
func readLayerTypes(key string) func(*trtexecKeys, string) error {
	return func(k *trtexecKeys, v string) error {
		for _, spec := range strings.Split(v, ",") {
			i := strings.LastIndex(spec, ":")
			if i <= 0 {
				return fmt.Errorf("%q is not LAYER:TYPE", spec)
			}
			if strings.Contains(spec[i+1:], "+") {
				return fmt.Errorf("%q: one type per layer for every output; per-output types are not supported", spec)
			}
			k.put(k.mapping(key), strings.Trim(spec[:i], `'"`), k.scalar(spec[i+1:]))
		}
		return nil
	}
}

// readToggles reads "+CUBLAS,-CUDNN" through a table of trtexec's names.
func readToggles(key string, names map[string]string) func(*trtexecKeys, string) error {
	return func(k *trtexecKeys, v string) error {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if len(t) < 2 || (t[0] != '+' && t[0] != '-') {
				return fmt.Errorf("%q wants a sign, like +%s", t, keysOf(names)[0])
			}
			ours, ok := names[t[1:]]
			if !ok {
				return fmt.Errorf("unknown name %q; trtexec's names: %s", t[1:], choices(keysOf(names)))
			}
			k.list(key, t[:1]+ours)
		}
		return nil
	}
}

// shellWords splits a command line the way a POSIX shell would for plain
// words, 'single' and "double" quotes and backslashes; a backslash before
// a newline joins lines.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
				inWord = true
			}
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c quote", c)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=+/.,:@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// trtexecLine is b as the trtexec (tensorrt) or tensorrt_rtx (tensorrt-rtx)
// command that builds the same engine. missing lists the settings that
// have no flag (they are left out of the line).
func trtexecLine(b Build) (line string, missing []string) {
	tool := backend.Of(b.Backend).Tool
	if tool == "" {
		return "", []string{"backend " + b.Backend + " has no trtexec equivalent"}
	}
	words := []string{tool, "--onnx=" + b.ONNX, "--saveEngine=" + b.Engine}
	flag := func(name string, value ...string) {
		w := "--" + name
		if len(value) > 0 {
			w += "=" + value[0]
		}
		words = append(words, w)
	}
	s := b.BuilderSettings()
	for _, key := range keysOf(s) {
		if err := trtexecFlagsFor(key, s[key], flag); err != nil {
			missing = append(missing, err.Error())
		}
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " "), missing
}

// trtexecFlagsFor writes the flags for one setting.
func trtexecFlagsFor(key string, v any, flag func(string, ...string)) error {
	reverse := func(m map[string]string, ours string) string {
		for theirs, o := range m {
			if o == ours {
				return theirs
			}
		}
		return ours
	}
	toggles := func(m map[string]string, list []string) string {
		out := make([]string, len(list))
		for i, t := range list {
			out[i] = t[:1] + reverse(m, t[1:])
		}
		return strings.Join(out, ",")
	}
	switch key {
	case "workspace":
		flag("memPoolSize", fmt.Sprintf("workspace:%dB", v))
	case "opt-level":
		flag("builderOptimizationLevel", strconv.Itoa(v.(int)))
	case "tiling-optimization-level":
		flag("tilingOptimizationLevel", strconv.Itoa(v.(int)))
	case "precision":
		for _, p := range v.([]string) {
			if p != "fp32" && p != "tf32" { // fp32 and TF32 are trtexec's defaults
				flag(p)
			}
		}
	case "targets":
		ccs := make([]string, 0, len(v.([]string)))
		for _, t := range v.([]string) {
			ccs = append(ccs, reverse(trtexecTargets, t))
		}
		flag("computeCapabilities", strings.Join(ccs, ","))
	case "timing-cache":
		flag("timingCacheFile", v.(string))
	case "shapes":
		shapes := v.(map[string]planShape)
		for _, which := range []string{"min", "opt", "max"} {
			var specs []string
			for _, name := range keysOf(shapes) {
				dims := map[string][]int64{"min": shapes[name].Min, "opt": shapes[name].Opt, "max": shapes[name].Max}[which]
				specs = append(specs, name+":"+dimsX(dims))
			}
			flag(which+"Shapes", strings.Join(specs, ","))
		}
	case "strongly-typed":
		if v.(bool) {
			flag("stronglyTyped")
		}
	case "plugins":
		for _, p := range v.([]string) {
			flag("staticPlugins", p)
		}
	case "plugins-serialize":
		for _, p := range v.([]string) {
			flag("setPluginsToSerialize", p)
		}
	case "precision-constraints":
		flag("precisionConstraints", v.(string))
	case "layer-precisions", "layer-output-types":
		m := v.(map[string]string)
		specs := make([]string, 0, len(m))
		for _, layer := range keysOf(m) {
			specs = append(specs, layer+":"+m[layer])
		}
		flag(map[string]string{"layer-precisions": "layerPrecisions", "layer-output-types": "layerOutputTypes"}[key], strings.Join(specs, ","))
	case "int8-calibration-cache":
		flag("calib", v.(string))
	case "tf32":
		if !v.(bool) {
			flag("noTF32")
		}
	case "hardware-compatibility":
		flag("hardwareCompatibilityLevel", reverse(trtexecHardware, v.(string)))
	case "version-compatible", "exclude-lean-runtime", "strip-weights", "weight-streaming":
		if v.(bool) {
			flag(map[string]string{"version-compatible": "versionCompatible", "exclude-lean-runtime": "excludeLeanRuntime",
				"strip-weights": "stripWeights", "weight-streaming": "weightStreaming"}[key])
		}
	case "refit":
		switch v.(string) {
		case "refit":
			flag("refit")
		case "identical", "individual":
			return fmt.Errorf("refit: %s has no trtexec flag", v)
		}
	case "runtime-platform":
		flag("runtimePlatform", reverse(trtexecPlatform, v.(string)))
	case "tactic-sources":
		flag("tacticSources", toggles(trtexecTactics, v.([]string)))
	case "preview-features":
		flag("preview", toggles(trtexecPreview, v.([]string)))
	case "max-tactics", "max-aux-streams":
		flag(map[string]string{"max-tactics": "maxTactics", "max-aux-streams": "maxAuxStreams"}[key], strconv.Itoa(v.(int)))
	case "sparsity":
		flag("sparsity", v.(string))
	case "l2-limit-for-tiling":
		flag("l2LimitForTiling", strconv.FormatInt(v.(int64), 10))
	case "memory-pools":
		m := v.(map[string]int64)
		specs := make([]string, 0, len(m))
		for _, pool := range keysOf(m) {
			specs = append(specs, fmt.Sprintf("%s:%dB", reverse(trtexecPools, pool), m[pool]))
		}
		flag("memPoolSize", strings.Join(specs, ","))
	case "profiling-verbosity":
		flag("profilingVerbosity", reverse(trtexecVerbosity, v.(string)))
	case "builder-flags":
		var none []string
		for _, f := range v.([]string) {
			if name, ok := map[string]string{"disable-compilation-cache": "noCompilationCache",
				"error-on-timing-cache-miss": "errorOnTimingCacheMiss"}[f]; ok {
				flag(name)
			} else {
				none = append(none, f)
			}
		}
		if len(none) > 0 {
			return fmt.Errorf("builder-flags %s: no trtexec flag", strings.Join(none, ", "))
		}
	case "dla":
		dla := v.(DLA)
		flag("useDLACore", strconv.Itoa(dla.Core))
		if dla.GPUFallback {
			flag("allowGPUFallback")
		}
	default:
		return fmt.Errorf("%s has no trtexec flag", key)
	}
	return nil
}

func dimsX(dims []int64) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, "x")
}

// PlanTrtexec writes each build as a comment line naming it, then its
// trtexec line; what the line cannot say is listed in comments, so
// nothing is silently left out.
func PlanTrtexec(w io.Writer, builds []Build) {
	for _, b := range builds {
		fmt.Fprintf(w, "# %s\n", text.Escaped(b.Name))
		line, missing := trtexecLine(b)
		for _, m := range missing {
			fmt.Fprintf(w, "# not in the line: %s\n", text.Escaped(m))
		}
		if len(b.TrtexecIgnored) > 0 {
			fmt.Fprintf(w, "# ignored from its trtexec line (inference only): %s\n", strings.Join(b.TrtexecIgnored, " "))
		}
		if line != "" {
			fmt.Fprintln(w, text.Escaped(line))
		}
	}
}
