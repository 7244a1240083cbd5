package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/onnx"
	"github.com/trt-action/trt-action/internal/settings"
)

// FormatVersion is part of every key and of the cache's folder layout.
// Bump it whenever what a key means changes: a field added to or dropped
// from keyDoc, a normalization changed, or a change in how trt-action
// applies a setting that gives the same key another engine. A change that
// only gives one key to settings that always build the same engine (best
// read as fp16, int8 and bf16) needs none: no old key can then name
// another engine, and entries under keys no longer made age out.
//
// 2: targets are a set before the build too (a list with repeats built
// another engine under the same key), layer-precisions and
// layer-output-types keep their written order (which pattern wins depends
// on it), and workspace is memory-pools.workspace.
//
// 3: an entry holds several files (entry.json lists each, files.go), so a
// build with run: keeps every engine and output it declares, and builds
// with run: have keys (scriptkey.go).
const FormatVersion = 3

// Key names one engine: 64 lowercase hex digits of a SHA-256.
type Key string

// Env is what a key needs beyond the build itself.
type Env struct {
	// Library is the identity of the TensorRT library the backend loads
	// (libraryIdentity); the backend's name for one that loads none (the
	// simulator).
	Library string
	// Target is, for backend tensorrt, the name and compute capability of
	// the GPU the build runs on; "" otherwise (tensorrt-rtx builds for the
	// targets its settings name, not for the machine).
	Target string
}

// keyDoc is everything that decides an engine's bytes, in a form whose
// JSON encoding is canonical: maps (sorted keys by encoding/json), and
// lists only where their order means something.
type keyDoc struct {
	Format   int            `json:"format"`
	Backend  string         `json:"backend"`
	Library  string         `json:"library"`
	Target   string         `json:"target,omitempty"`
	Model    *modelDoc      `json:"model,omitempty"`
	Settings map[string]any `json:"settings,omitempty"`
	Sim      *simDoc        `json:"sim,omitempty"`
	Script   *scriptDoc     `json:"script,omitempty"` // a build with run: (scriptkey.go)
}

// modelDoc is the ONNX file's bytes and those of every external-data file
// it references, by the location written in the model.
type modelDoc struct {
	SHA256   string            `json:"sha256"`
	External map[string]string `json:"external,omitempty"` // location -> SHA-256
}

// simDoc is what shapes a simulated build: its trace (the built-in one
// when empty) and how it is replayed; not sim.allocate, memory the
// simulator touches while it runs, which changes no engine.
type simDoc struct {
	Trace   string `json:"trace,omitempty"` // SHA-256 of the trace file
	StepNs  int64  `json:"step_ns"`
	Fast    bool   `json:"fast"`
	Repeat  int    `json:"repeat"`
	Threads int    `json:"threads"`
	Fault   string `json:"fault"`
	FaultNs int64  `json:"fault_ns,omitempty"`
	// EngineSize is sim.engine-size; left out when not set, so the keys
	// of builds without it stay as they were.
	EngineSize int64 `json:"engine_size,omitempty"`
}

// keySalt starts the hashed text, so a key can never equal the SHA-256 of
// some other JSON document trt-action hashes.
const keySalt = "trt-action engine key\n"

// Key computes b's key. Names, budgets, output paths (engine, timing
// cache), matrix axes and positions are not in it: renaming a build or
// changing its budget finds the same engine. The error names the file that
// could not be read (a missing external-data file names the model too).
// Reading the files (a model can be gigabytes) stops when ctx ends; the
// error then wraps context.Cause(ctx).
func (h *Hasher) Key(ctx context.Context, b matrix.Build, env Env) (Key, error) {
	data, _, err := h.document(ctx, b, env)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(keySalt), data...))
	return Key(hex.EncodeToString(sum[:])), nil
}

// document is the canonical JSON that Key hashes, and, by part, the files
// whose content the parts of a build with run: are (a build without run:
// has its own: Hasher.fileParts); a build with run: without inputs: has
// none (ErrNoInputs).
func (h *Hasher) document(ctx context.Context, b matrix.Build, env Env) ([]byte, map[string]string, error) {
	doc := keyDoc{Format: FormatVersion, Backend: b.Backend, Library: env.Library, Target: env.Target}
	files := map[string]string{}
	var err error
	if b.Script != nil {
		if doc.Script, err = h.script(ctx, b.Script, files); err != nil {
			return nil, nil, err
		}
	} else if err := h.buildParts(ctx, b, &doc); err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("build %s: cannot encode its key: %w", b.Name, err)
	}
	return data, files, nil
}

// buildParts fills in what decides the engine of a build without run:
// its model, its settings and, simulated, how it is simulated.
func (h *Hasher) buildParts(ctx context.Context, b matrix.Build, doc *keyDoc) error {
	if b.ONNX != "" {
		m, err := h.model(ctx, b.ONNX)
		if err != nil {
			return err
		}
		doc.Model = m
	}
	settings, err := h.settings(ctx, b)
	if err != nil {
		return err
	}
	doc.Settings = settings
	if backend.Of(b.Backend).Simulated {
		if doc.Sim, err = h.sim(ctx, b.Sim); err != nil {
			return err
		}
	}
	return nil
}

// model hashes the ONNX file and its external data.
func (h *Hasher) model(ctx context.Context, path string) (*modelDoc, error) {
	sum, locations, err := h.onnx(ctx, path)
	if err != nil {
		return nil, err
	}
	m := &modelDoc{SHA256: sum}
	for _, loc := range locations {
		file := onnx.ExternalPath(path, loc)
		s, err := h.file(ctx, file)
		if err != nil {
			return nil, fmt.Errorf("model %s: external data %q: %w", path, loc, err)
		}
		if m.External == nil {
			m.External = map[string]string{}
		}
		m.External[loc] = s
	}
	return m, nil
}

// settings are b's builder settings normalized: a value equal to the
// library's documented default is left out, lists that are sets are sorted,
// toggles keep each name's last sign, and files become their SHA-256. An
// accelerator (the timing cache) is left out: it speeds a build up, it does
// not change what a correct engine is. Optimization profiles come as
// BuilderSettings gives them: one is shapes, however it was written (the
// key shapes always had), several are profiles, in order (profile i is the
// engine's profile i).
func (h *Hasher) settings(ctx context.Context, b matrix.Build) (map[string]any, error) {
	out := map[string]any{}
	for key, v := range b.BuilderSettings() {
		if row, _ := settings.Lookup(key); row.Accelerator {
			continue
		}
		if def, ok := settings.Default(key); ok && sameValue(v, def) {
			continue
		}
		if key == "precision" {
			if v = effectivePrecision(v); v == nil {
				continue
			}
		}
		if settings.IsFile(key) {
			sums, err := h.files(ctx, key, v)
			if err != nil {
				return nil, err
			}
			out[key] = sums
			continue
		}
		out[key] = normalize(key, v)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// files hashes a file-valued setting, keeping the order of a list (plugins
// load in that order).
func (h *Hasher) files(ctx context.Context, key string, v any) (any, error) {
	hash := func(p string) (string, error) {
		s, err := h.file(ctx, p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
		return s, nil
	}
	switch v := v.(type) {
	case string:
		return hash(v)
	case []string:
		sums := make([]string, len(v))
		for i, p := range v {
			s, err := hash(p)
			if err != nil {
				return nil, err
			}
			sums[i] = s
		}
		return sums, nil
	}
	return nil, fmt.Errorf("%s: unexpected value %T", key, v)
}

// effectivePrecision drops from a precision list what asks for nothing
// beyond the library's defaults, so a build that writes it shares the key
// of one that does not: the values the settings table marks Implied, tf32
// (TF32 is on by default: NvInfer.h documents BuilderFlag::kTF32 as enabled
// by default, https://github.com/NVIDIA/TensorRT/blob/main/include/NvInfer.h)
// and fp32, which sets no flag (FP32 is always allowed;
// native/backends/precision.h). A value that stands for others (best:
// fp16, int8 and bf16, which the backends set as if written) is those
// others, so precision: [best] and [fp16, int8, bf16] share a key. nil
// when nothing is left.
func effectivePrecision(v any) any {
	list, ok := v.([]string)
	if !ok {
		return v
	}
	row, _ := settings.Lookup("precision")
	var out []string
	for _, p := range list {
		value, _ := row.Value(p)
		switch {
		case len(value.Implies) > 0:
			out = append(out, value.Implies...)
		case !value.Implied:
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// normalize puts one setting's value in its canonical form: in a set,
// order and repeats mean nothing; of "+name,-name" toggles, the last sign
// of a name wins; of layer types, what decides a layer's type
// (layerTypesKey).
func normalize(key string, v any) any {
	if lt, ok := v.([]settings.LayerType); ok {
		return layerTypesKey(lt)
	}
	list, ok := v.([]string)
	row, _ := settings.Lookup(key)
	switch {
	case !ok:
		return v
	case row.Kind == settings.Set:
		return sortedSet(list)
	case row.Kind == settings.Toggles:
		last := map[string]string{}
		for _, t := range list {
			last[t[1:]] = t[:1]
		}
		out := make([]string, 0, len(last))
		for _, name := range slices.Sorted(maps.Keys(last)) {
			out = append(out, last[name]+name)
		}
		return out
	}
	return list
}

// layerTypesDoc is layer-precisions or layer-output-types as a key holds
// them: the order written decides only among the globs other than "*"
// (native/backends/layer_match.h), so exact names are a map (sorted when
// encoded) and "*" stands apart. Its shape is not the written list's, so
// no key made before trt-action skipped the layers trtexec skips for a
// wildcard can equal one made since.
type layerTypesDoc struct {
	Names  map[string]string    `json:"names,omitempty"`  // exact layer name -> type
	Globs  []settings.LayerType `json:"globs,omitempty"`  // in the order written
	Others string               `json:"others,omitempty"` // the type "*" gives
}

func layerTypesKey(list []settings.LayerType) layerTypesDoc {
	var d layerTypesDoc
	for _, lt := range list {
		switch {
		case lt.Layer == "*":
			d.Others = lt.Type
		case settings.IsLayerGlob(lt.Layer):
			d.Globs = append(d.Globs, lt)
		default:
			if d.Names == nil {
				d.Names = map[string]string{}
			}
			d.Names[lt.Layer] = lt.Type
		}
	}
	return d
}

func sortedSet(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

// sameValue compares a setting's value with a documented default (bool,
// string or int).
func sameValue(v, def any) bool {
	switch d := def.(type) {
	case int:
		switch x := v.(type) {
		case int:
			return x == d
		case int64:
			return x == int64(d)
		}
		return false
	}
	return v == def
}

// sim is the simulator's part of a key.
func (h *Hasher) sim(ctx context.Context, s matrix.Sim) (*simDoc, error) {
	d := &simDoc{StepNs: int64(s.Step), Fast: s.Fast, Repeat: s.Repeat, Threads: s.Threads,
		Fault: s.Fault.Kind, FaultNs: int64(s.Fault.Duration), EngineSize: s.EngineSize}
	if s.Trace != "" {
		sum, err := h.file(ctx, s.Trace)
		if err != nil {
			return nil, fmt.Errorf("sim.trace: %w", err)
		}
		d.Trace = sum
	}
	return d, nil
}

// RestorePrefix is the start of every RunKey on this OS and architecture
// with this FormatVersion: actions/cache's restore-keys, so a run whose
// builds changed restores the newest cache folder that can hold hits.
func RestorePrefix() string {
	return fmt.Sprintf("trt-engines-v%d-%s-%s-", FormatVersion, runtime.GOOS, runtime.GOARCH)
}

// RunKey is one key for a whole run, from its builds' keys (order and
// repeats do not count): actions/cache's key, which changes when any
// build's key does.
func RunKey(keys []Key) string {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	h := sha256.New()
	for _, k := range sorted {
		h.Write([]byte(string(k) + "\n"))
	}
	return RestorePrefix() + hex.EncodeToString(h.Sum(nil))
}

// Valid reports whether k looks like a key: 64 lowercase hex digits. A key
// names a folder in the cache, so nothing else may become one.
func (k Key) Valid() bool {
	if len(k) != 2*sha256.Size {
		return false
	}
	return strings.Trim(string(k), "0123456789abcdef") == ""
}
