package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/settings"
	"github.com/trt-action/trt-action/internal/text"
	"go.yaml.in/yaml/v3"
)

// trtexecLines reads testdata/trtexec/lines.txt: one command per line, a
// trailing backslash continuing it, # comments.
func trtexecLines(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "trtexec", "lines.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	cur := ""
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "#") || (cur == "" && strings.TrimSpace(l) == "") {
			continue
		}
		cur += l + "\n"
		if !strings.HasSuffix(l, `\`) {
			lines = append(lines, strings.TrimSpace(cur))
			cur = ""
		}
	}
	return lines
}

// parseLine parses one build whose only content is a trtexec line.
func parseLine(t *testing.T, dir, line string) (*File, error) {
	t.Helper()
	backend := "tensorrt"
	if first, _, _ := strings.Cut(line, " "); strings.Contains(first, "tensorrt_rtx") {
		backend = "tensorrt-rtx"
	}
	quoted, _ := json.Marshal(line) // a JSON string is a YAML double-quoted scalar
	src := fmt.Sprintf("version: 1\nbuilds:\n  - name: line\n    backend: %s\n    trtexec: %s\n", backend, quoted)
	return parseContent(filepath.Join(dir, "lines.yml"), []byte(src))
}

// TestTrtexecLines reads real-world style trtexec lines; the golden file
// holds each line's settings, engine and ignored flags.
func TestTrtexecLines(t *testing.T) {
	lines := trtexecLines(t)
	if len(lines) < 12 {
		t.Fatalf("only %d lines; keep a dozen or more", len(lines))
	}
	var got bytes.Buffer
	for _, line := range lines {
		f, err := parseLine(t, filepath.Join("testdata", "trtexec"), line)
		if err != nil {
			t.Errorf("%s\n%v", line, err)
			continue
		}
		b := f.Builds[0]
		settings, _ := json.Marshal(b.BuilderSettings())
		fmt.Fprintf(&got, "%s\n  engine: %s\n  settings: %s\n  ignored: %v\n", line, b.Engine, settings, b.TrtexecIgnored)
		for _, w := range b.TrtexecWarnings {
			fmt.Fprintf(&got, "  warning: %s\n", w)
		}
		fmt.Fprintln(&got)
	}
	golden.Check(t, filepath.Join("trtexec", "lines.golden"), got.String())
}

// TestTrtexecRoundTrip writes builds that use every key with a trtexec
// flag as trtexec lines and reads them back: same settings, model and
// engine.
func TestTrtexecRoundTrip(t *testing.T) {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	src := `version: 1
defaults: {backend: tensorrt, onnx: models/tiny.onnx}
builds:
  - name: weakly-typed
    precision: [fp16, int8, bf16, fp8]
    int8-calibration-cache: plugins/calib.cache
    precision-constraints: prefer
    layer-precisions: {"*": fp16, "/conv1/*": fp32, "fc": fp16, "a:b,c": int8}
    layer-output-types: {"/head/Softmax": fp32}
    tf32: false
    workspace: 1GiB
    memory-pools: {tactic-shared: 48KiB, dla-sram: 1MiB, dla-local: 2MiB, dla-global: 3MiB}
    dla: {core: 1, gpu-fallback: true}
    timing-cache: cache/t.cache
    refit: refit
  - name: strongly-typed
    engine: out/with space.engine
    strongly-typed: true
    opt-level: 4
    tiling-optimization-level: 2
    l2-limit-for-tiling: 4MiB
    plugins: [plugins/fake-plugin]
    plugins-serialize: plugins/fake-plugin
    hardware-compatibility: same-compute-capability
    version-compatible: true
    exclude-lean-runtime: true
    strip-weights: true
    weight-streaming: true
    runtime-platform: windows-amd64
    tactic-sources: [-cublas, +jit-convolutions, -edge-mask-convolutions, +cudnn, -cublas-lt]
    max-tactics: 9
    sparsity: enable
    max-aux-streams: 3
    builder-flags: [disable-compilation-cache, error-on-timing-cache-miss]
    profiling-verbosity: detailed
    preview-features: [-aliased-plugin-io-10-03, +runtime-activation-resize-10-10, +multidevice-runtime-10-16]
    shapes:
      input: {min: 1x3x224x224, opt: 4x3x224x224, max: 8x3x224x224}
      mask: {min: [1, 64], opt: [4, 64], max: [8, 64]}
  - name: rtx
    backend: tensorrt-rtx
    targets: [sm120, sm86, sm120]
    profiling-verbosity: none
  - name: profiles
    precision: fp16
    profiles:
      - {input: {min: 1x3, opt: 2x3, max: 4x3}, mask: {min: [1, 8], opt: [1, 8], max: [1, 8]}}
      - {input: {min: 4x3, opt: 8x3, max: 16x3}, mask: {min: [1, 8], opt: [1, 8], max: [1, 8]}}
      - {input: {min: 16x3, opt: 16x3, max: 32x3}, mask: {min: [1, 8], opt: [1, 8], max: [1, 8]}}
`
	f, err := parseContent(filepath.Join(dir, "roundtrip.yml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, b := range f.Builds {
		line, missing, _ := trtexecLine(b)
		if len(missing) > 0 {
			t.Errorf("%s: no flag for %v", b.Name, missing)
		}
		back, err := parseLine(t, dir, line)
		if err != nil {
			t.Errorf("%s: %s does not parse back:\n%v", b.Name, line, err)
			continue
		}
		got := back.Builds[0]
		if !reflect.DeepEqual(got.BuilderSettings(), b.BuilderSettings()) || got.ONNX != b.ONNX || got.Engine != b.Engine {
			t.Errorf("%s: round trip through\n  %s\ngave %v %s %s\nwant %v %s %s", b.Name, line,
				got.BuilderSettings(), got.ONNX, got.Engine, b.BuilderSettings(), b.ONNX, b.Engine)
		}
		for k := range b.BuilderSettings() {
			covered[k] = true
		}
	}
	// Every setting is in the round trip (workspace is memory-pools').
	for _, row := range settings.All() {
		if !covered[row.Key] && row.AliasOf == "" {
			t.Errorf("key %s is not covered by the round trip", row.Key)
		}
	}
}

func TestTrtexecLineSaysWhatHasNoFlag(t *testing.T) {
	b := Build{Name: "b", Backend: "tensorrt", ONNX: "m.onnx", Engine: "e", Settings: Settings{
		{Key: "refit", Value: "identical"}, {Key: "preview-features", Value: []string{"+profile-sharing-0806"}},
		{Key: "builder-flags", Value: []string{"debug", "disable-compilation-cache", "strict-nans"}}}}
	line, missing, _ := trtexecLine(b)
	if !reflect.DeepEqual(missing, []string{"refit: identical has no trtexec flag", "preview-features +profile-sharing-0806: no trtexec spelling",
		"builder-flags debug, strict-nans: no trtexec flag"}) ||
		strings.Contains(line, "refit") || !strings.HasSuffix(line, " --noCompilationCache") {
		t.Errorf("line %q, missing %v", line, missing)
	}
	if _, missing, _ := trtexecLine(Build{Backend: "sim"}); len(missing) != 1 {
		t.Errorf("a sim build has no trtexec line, got %v", missing)
	}
}

func TestShellWords(t *testing.T) {
	got, err := shellWords("trtexec --a='x y' --b=\"p q\" \\\n --c=d\\ e ''")
	want := []string{"trtexec", "--a=x y", "--b=p q", "--c=d e", ""}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
	if _, err := shellWords("--a='open"); err == nil {
		t.Error("an unterminated quote is an error")
	}
	for _, w := range []string{"plain", "with space", "it's", "", "--a=$HOME"} {
		back, err := shellWords(text.ShellQuote(w))
		if err != nil || len(back) != 1 || back[0] != w {
			t.Errorf("ShellQuote(%q) = %s reads back as %q", w, text.ShellQuote(w), back)
		}
	}
}

func TestPlanTrtexec(t *testing.T) {
	src := `version: 1
defaults: {backend: tensorrt, onnx: models/tiny.onnx}
builds:
  - name: a
    trtexec: "trtexec --fp16 --iterations=10 --minShapes=x:1x3 --optShapes=x:2x3 --maxShapes=x:4x3"
    refit: identical
  - name: s
    backend: sim
`
	f, err := parseContent("/m/trt-builds.yml", []byte(strings.ReplaceAll(src, "models/tiny.onnx", mustAbs(t, "testdata/models/tiny.onnx"))))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	PlanTrtexec(&got, f.Builds)
	want := "# a\n# not in the line: refit: identical has no trtexec flag\n" +
		"# from its trtexec line, ignored (they only matter when trtexec runs the engine): --iterations\n" +
		"trtexec --onnx=" + mustAbs(t, "testdata/models/tiny.onnx") + " --saveEngine=/m/a.engine --fp16 --minShapes=x:1x3 --optShapes=x:2x3 --maxShapes=x:4x3\n" +
		"# s\n# not in the line: backend sim has no trtexec equivalent\n"
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// FuzzShellQuote: any word quoted for the shell reads back as itself, so a
// printed trtexec line always means what the build means.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "with space", "it's", "a\"b", `back\slash`, "$HOME", "new\nline",
		"--profile=1 --minShapes=x:1 --profile=0 --optShapes=x:2,y:3 --maxShapes=x:4 --shapes=y:1",
		"--maxShapes=x:1 --profile=2 --profile=2 --minShapes=x:1 --minShapes=x:2 --fp16 --optShapes=x:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		back, err := shellWords(text.ShellQuote(w))
		if err != nil || len(back) != 1 || back[0] != w {
			t.Fatalf("ShellQuote(%q) = %s reads back as %q (%v)", w, text.ShellQuote(w), back, err)
		}
		// Any line parses without panicking.
		parseTrtexec(w, &yaml.Node{Line: 1, Column: 1})
	})
}

// trtexec builds with --shapes where no --minShapes/--optShapes/--maxShapes
// name an input: its dims become all three bounds, whatever the order of
// the flags, and an explicit bound wins.
func TestTrtexecShapesBuildTheProfile(t *testing.T) {
	onnx := mustAbs(t, "testdata/models/tiny.onnx")
	for _, c := range []struct {
		line string
		want map[string]Shape
	}{
		{"trtexec --shapes=x:2x3", map[string]Shape{"x": {Min: []int64{2, 3}, Opt: []int64{2, 3}, Max: []int64{2, 3}}}},
		{"trtexec --shapes=x:2x3 --maxShapes=x:8x3", map[string]Shape{"x": {Min: []int64{2, 3}, Opt: []int64{2, 3}, Max: []int64{8, 3}}}},
		{"trtexec --minShapes=x:1x3 --optShapes=x:4x3 --maxShapes=x:8x3 --shapes=x:2x3,y:5",
			map[string]Shape{"x": {Min: []int64{1, 3}, Opt: []int64{4, 3}, Max: []int64{8, 3}}, "y": {Min: []int64{5}, Opt: []int64{5}, Max: []int64{5}}}},
	} {
		src := "version: 1\nbuilds:\n  - {name: a, backend: tensorrt, onnx: " + onnx + ", trtexec: \"" + c.line + "\"}\n"
		f, err := parseContent("/m/trt-builds.yml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if got := f.Builds[0].Profiles; len(got) != 1 || !reflect.DeepEqual(got[0], c.want) {
			t.Errorf("%s: shapes %+v, want %+v", c.line, got, c.want)
		}
		if slices.Contains(f.Builds[0].TrtexecIgnored, "--shapes") {
			t.Errorf("%s: --shapes reported as ignored", c.line)
		}
	}
}

// FuzzTrtexecRoundTrip: a build's plan --trtexec line reads back as the
// same settings, whatever its input and layer names hold (":" and ",",
// quotes, spaces, backslashes); a name the line cannot carry is listed as
// missing, never written wrong.
func FuzzTrtexecRoundTrip(f *testing.F) {
	for _, seed := range []struct {
		input, layer string
		size         int64
		level        uint8
	}{
		{"input", "conv1", 1 << 30, 3}, {"a:b,c", "/x/*", 1234, 0}, {"in,put", "conv 1", 48 << 10, 5},
		{`C:\in`, "it's", 1_500_000_000, 1}, {"'", "a\\b", 1, 2},
	} {
		f.Add(seed.input, seed.layer, seed.size, seed.level)
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		f.Fatal(err)
	}
	onnx := filepath.Join(dir, "models", "tiny.onnx")
	f.Fuzz(func(t *testing.T, input, layer string, size int64, level uint8) {
		if !plainText(input) || !plainText(layer) || size < 1 || size > 1<<50 || layer == "*" || strings.TrimSpace(layer) == "" {
			return
		}
		b := Build{Name: "fz", Backend: "tensorrt", ONNX: onnx, Engine: filepath.Join(dir, "fz.engine"),
			Profiles: []map[string]Shape{{input: {Min: []int64{1, 3}, Opt: []int64{2, 3}, Max: []int64{4, 3}}}},
			Settings: Settings{
				{Key: "opt-level", Value: int(level % 6)},
				{Key: "layer-precisions", Value: []LayerType{{Layer: layer, Type: "fp16"}, {Layer: "*", Type: "fp32"}}},
				{Key: "memory-pools", Value: map[string]int64{"workspace": size}},
			}}
		line, missing, _ := trtexecLine(b)
		back, err := parseLine(t, dir, line)
		if err != nil {
			t.Fatalf("%s does not parse back:\n%v", line, err)
		}
		got, want := back.Builds[0].BuilderSettings(), b.BuilderSettings()
		for key, v := range want {
			if slices.ContainsFunc(missing, func(m string) bool { return strings.HasPrefix(m, key+" ") }) {
				continue // the line says it cannot carry this setting
			}
			if !reflect.DeepEqual(got[key], v) {
				t.Errorf("%s: %#v read back as %#v from\n%s", key, v, got[key], line)
			}
		}
	})
}

// plainText is text a matrix file can hold as written: printable UTF-8
// (YAML refuses control characters) without ${{ expressions.
func plainText(s string) bool {
	return s != "" && utf8.ValidString(s) && !strings.Contains(s, "${{") &&
		strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0
}

// TestShellLinesInEveryScalarStyle: a shell line with a backslash at the
// end of each line reads the same written as a plain, a folded (>) or a
// literal (|) YAML scalar: folding turns each line break into a space, so
// the backslash stands alone between blanks. A backslash inside a word is
// still an escaped space.
func TestShellLinesInEveryScalarStyle(t *testing.T) {
	onnx := mustAbs(t, "testdata/models/tiny.onnx")
	body := "trtexec --onnx=" + onnx + " \\\n      --saveEngine=out/c\\ d.engine \\\n      --fp16 \\\n      --builderOptimizationLevel=1 \\"
	for _, style := range []string{"", ">", ">-", "|", "|-"} {
		src := "version: 1\nbuilds:\n  - name: c\n    backend: tensorrt\n    trtexec: " + style
		if style != "" {
			src += "\n      "
		}
		src += body + "\n"
		f, err := parseContent("/m/trt-builds.yml", []byte(src))
		if err != nil {
			t.Errorf("style %q: %v\n%s", style, err, src)
			continue
		}
		b := f.Builds[0]
		if b.Engine != "/m/out/c d.engine" || !reflect.DeepEqual(b.Precision, []string{"fp16"}) || b.BuilderSettings()["opt-level"] != 1 {
			t.Errorf("style %q: engine %q, settings %v", style, b.Engine, b.BuilderSettings())
		}
	}
	got, err := shellWords(`a\ b \ c \`)
	if want := []string{"a b", "c"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
}

// TestTrtexecFlagsOnceEach follows trtexec, which reads each flag once
// (a second is an unknown option to it) but for the plugin libraries; and
// two flags of one line that set one place are an error, as two keys of
// one mapping are.
func TestTrtexecFlagsOnceEach(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"--onnx=models/tiny.onnx --onnx=models/tiny.onnx", "--onnx is given twice"},
		{"--builderOptimizationLevel=1 --builderOptimizationLevel=4", "--builderOptimizationLevel is given twice"},
		{"--fp16 --fp16", "--fp16 is given twice"},
		{"--iterations=1 --iterations=2", "--iterations is given twice"},
		{"--vc --versionCompatible", "--vc and --versionCompatible both set version-compatible; keep one"},
		{"--stripWeights --weightless --refit", "--stripWeights and --weightless both set strip-weights; keep one"},
		{"--memPoolSize=workspace:1G,workspace:2G", "--memPoolSize=workspace:1G,workspace:2G sets memory-pools.workspace twice; keep one"},
		{"--minShapes=x:1x3,x:2x3 --optShapes=x:2x3 --maxShapes=x:4x3", "sets shapes.x.min twice"},
		{"--staticPlugins=plugins/fake-plugin --staticPlugins=plugins/fake-plugin --setPluginsToSerialize=plugins/fake-plugin " +
			"--setPluginsToSerialize=plugins/fake-plugin --dynamicPlugins=plugins/fake-plugin --plugins=plugins/fake-plugin", ""},
		{"--shapes=x:2x3 --minShapes=x:1x3", ""}, // --shapes gives way, whatever the order
	} {
		src := "version: 1\nbuilds:\n  - {name: b, backend: tensorrt, onnx: models/tiny.onnx, trtexec: \"" + c.line + "\"}\n"
		_, err := parseContent(filepath.Join("testdata", "once.yml"), []byte(src))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.line, err, c.want)
		}
	}
}

// TestTrtexecProgramNamesTheBackend: a line that starts with a backend's
// tool names the build's backend when it has none; a line of another
// backend's tool is read for the build's backend, with a warning.
func TestTrtexecProgramNamesTheBackend(t *testing.T) {
	src := `version: 1
defaults: {onnx: models/tiny.onnx}
builds:
  - {name: rtx, trtexec: "tensorrt_rtx --computeCapabilities=86"}
  - {name: trt, trtexec: "/usr/src/tensorrt/bin/trtexec --fp16"}
  - {name: other, backend: tensorrt, trtexec: "tensorrt_rtx --fp16"}
  - {name: sim, backend: sim, trtexec: "trtexec --fp16"}
`
	f, err := parseContent(filepath.Join("testdata", "tools.yml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"tensorrt-rtx", "tensorrt", "tensorrt", "sim"} {
		if f.Builds[i].Backend != want {
			t.Errorf("%s: backend %s, want %s", f.Builds[i].Name, f.Builds[i].Backend, want)
		}
	}
	var warnings []string
	for _, w := range f.Warnings {
		warnings = append(warnings, w.Error())
	}
	want := []string{"testdata/tools.yml:6:47: trtexec: the line runs tensorrt_rtx, the tool of backend tensorrt-rtx, " +
		"but the build's backend is tensorrt: its flags are read as trtexec flags"}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
	// A build's own line wins over its defaults' backend, as any of its
	// flags wins over its defaults' keys.
	src = "version: 1\ndefaults: {backend: tensorrt, onnx: models/tiny.onnx}\nbuilds:\n  - {name: rtx, trtexec: \"tensorrt_rtx --fp16\"}\n"
	if _, err := parseContent(filepath.Join("testdata", "tools.yml"), []byte(src)); err == nil ||
		!strings.Contains(err.Error(), "precision: fp16: backend tensorrt-rtx has no such value") {
		t.Errorf("got %v, want the line's tensorrt-rtx to refuse fp16", err)
	}
}

// TestTrtexecMessagesSayWhatWasWritten: --verbose is trtexec's logging,
// not an inference flag; --device picks the build's GPU too, and says
// what does so here; a removed flag's deprecated value is said in the
// words written; a parser flag for the DLA says what it does; a path in a
// message is quoted as written, a Windows path's backslashes once.
func TestTrtexecMessagesSayWhatWasWritten(t *testing.T) {
	src := `version: 1
builds:
  - {name: a, backend: tensorrt, onnx: models/tiny.onnx, trtexec: "--verbose --nvtxMode=verbose --reportCapabilityDLA --device=1"}
  - {name: b, backend: tensorrt, onnx: 'models\mlp.onnx'}
`
	f, err := parsePartial(filepath.Join("testdata", "words.yml"), []byte(src), false)
	var all []string
	if f != nil {
		for _, w := range f.Warnings {
			all = append(all, w.Error())
		}
	}
	all = append(all, fmt.Sprint(err))
	text := strings.Join(all, "\n")
	for _, want := range []string{
		"--verbose: it turns on trtexec's verbose logging; trt-action logs TensorRT's messages itself; ignored",
		"--nvtxMode=verbose is read as --profilingVerbosity=detailed",
		"--device: it picks trtexec's GPU, for the build too; trt-action gives each build its GPU with --gpus (CUDA_VISIBLE_DEVICES); ignored",
		"--reportCapabilityDLA is not supported by trt-action: it makes the ONNX parser fail unless every node can run on the DLA",
		`onnx: file "testdata/models\mlp.onnx" not found`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	for _, unwanted := range []string{"only matter when trtexec runs the engine): --verbose", "runs the engine): --device", "--profilingVerbosity=verbose is deprecated",
		"ONNX parser flags", `\\mlp`} {
		if strings.Contains(text, unwanted) {
			t.Errorf("%q in\n%s", unwanted, text)
		}
	}
}
