package settings

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/trt-action/trt-action/internal/text"
)

// How trtexec (datacenter TensorRT) and tensorrt_rtx (TensorRT-RTX) flags
// map to builder settings, both ways. The facts: NVIDIA/TensorRT's
// samples/common/sampleOptions.cpp at the tags the backends target (v8.6.1
// for lines written for 8.x, v10.0.1, v10.16, v11.1) and NVIDIA's
// TensorRT-RTX documentation for tensorrt_rtx, whose source is not public;
// testdata/trtexec-flags lists each tool's flags and trtexec_test.go checks
// every one of them is classified here.

// Flag is one trtexec flag of a setting.
type Flag struct {
	Name string // without "--"
	// Set is, for a flag without a value, the value it writes: a Bool's
	// true or false, an Enum's value, an item added to a Set, or a Part's.
	Set string
	// Part is the part of the setting it writes: dla's core, a memory pool.
	Part string
	// Unit is appended to a value written as a bare number (--workspace=N
	// was MiB).
	Unit string
	// Codec reads and writes a value with a syntax of its own.
	Codec Codec
	// FoldCase: trtexec compares the value's spelling ignoring case.
	FoldCase bool
	// Ignored are value spellings trtexec reads and ignores, each with why:
	// a line with one gets a warning.
	Ignored map[string]string
	// Refused are values trtexec has and trt-action cannot honour, each
	// with why.
	Refused map[string]string
	// Successor is the flag that replaced a deprecated or removed one: a
	// line with it is read, with a warning naming the successor, and
	// plan --trtexec never writes it. Removed: trtexec 10.x no longer has
	// it (a line written for 8.x).
	Successor string
	Removed   bool
}

// Codec names a flag syntax of its own.
type Codec int

const (
	NoCodec         Codec = iota
	ShapesCodec           // NAME:1x3x224x224,... for the Part bound ("" = every bound not given otherwise)
	PoolsCodec            // POOL:SIZE,... with sizes in MiB unless they end in B, K, M or G
	LayerTypesCodec       // LAYER:TYPE,... in the order written
	ProfileCodec          // --profile=N: the shape flags right after it are profile N's (Writer.Profile)
)

// NoFlag is a Value's Trtexec when trtexec has no spelling for it.
const NoFlag = "-"

// Class is what trt-action does with a trtexec flag.
type Class int

const (
	Unknown       Class = iota // no tool has it (as far as the lists know)
	Mapped                     // it sets a builder setting
	InferenceOnly              // it only matters when trtexec runs the engine: ignored, listed as a warning
	NoOp                       // trtexec 10.x removed it and nothing replaces it in a build: ignored with a warning
	Ignored                    // it means nothing to a trt-action build (trtexec's own logging): ignored with a warning saying why
	Refused                    // a build flag trt-action cannot honour: an error saying why
)

// FlagInfo is what a flag is.
type FlagInfo struct {
	Class   Class
	Setting Setting // Mapped
	Flag    Flag    // Mapped
	Why     string  // NoOp, Ignored, Refused: why
}

// otherFlag is a flag no setting reads.
type otherFlag struct {
	class Class
	why   string
}

const (
	whyCaffeUFF     = "Caffe and UFF models are gone since TensorRT 10: convert the model to ONNX and give --onnx"
	whyImplicit     = "removed in TensorRT 10, which has no implicit batch (the batch is a dimension of shapes)"
	whySafety       = "the safety runtime is not supported"
	whyNotBuild     = "it is not a build setting trt-action passes"
	whyDLALayers    = "per-layer DLA placement is not a trt-action setting"
	whyParserFlag   = "ONNX parser flags are not trt-action settings"
	whyDLAParser    = "it sets an ONNX parser flag for the DLA, and trt-action sets no parser flags"
	whyDebugTensors = "debug tensors are not supported"
	whyTuning       = "a build-route tuning loop builds many engines; trt-action builds one per build (use a matrix axis)"
	whyCurrentGPU   = "it builds for the machine's GPU (kCURRENT); trt-action builds TensorRT-RTX engines ahead of time " +
		"without one: name them with targets (--computeCapabilities)"
)

// otherFlags are the flags no setting reads: every flag of every tool list
// in testdata/trtexec-flags is either a setting's or here.
var otherFlags = map[string]otherFlag{
	// Only when trtexec runs the engine.
	"iterations": {class: InferenceOnly}, "duration": {class: InferenceOnly}, "warmUp": {class: InferenceOnly},
	"avgRuns": {class: InferenceOnly}, "percentile": {class: InferenceOnly}, "useCudaGraph": {class: InferenceOnly},
	"noCudaGraph": {class: InferenceOnly}, "noDataTransfers": {class: InferenceOnly}, "includeDataTransfers": {class: InferenceOnly},
	"useSpinWait": {class: InferenceOnly}, "noSpinWait": {class: InferenceOnly}, "threads": {class: InferenceOnly},
	"streams": {class: InferenceOnly}, "infStreams": {class: InferenceOnly}, "exposeDMA": {class: InferenceOnly},
	"separateProfileRun": {class: InferenceOnly}, "dumpProfile": {class: InferenceOnly}, "dumpLayerInfo": {class: InferenceOnly},
	"exportProfile": {class: InferenceOnly}, "exportTimes": {class: InferenceOnly}, "exportLayerInfo": {class: InferenceOnly},
	"exportOutput": {class: InferenceOnly}, "dumpOutput": {class: InferenceOnly}, "dumpRawBindingsToFile": {class: InferenceOnly},
	"loadInputs": {class: InferenceOnly}, "useRuntime": {class: InferenceOnly}, "leanDLLPath": {class: InferenceOnly},
	"skipInference": {class: InferenceOnly}, "idleTime": {class: InferenceOnly}, "sleepTime": {class: InferenceOnly}, "useProfile": {class: InferenceOnly},
	"timeDeserialize": {class: InferenceOnly}, "timeRefit": {class: InferenceOnly}, "persistentCacheRatio": {class: InferenceOnly},
	"useManagedMemory": {class: InferenceOnly}, "allocationStrategy": {class: InferenceOnly}, "dumpRefit": {class: InferenceOnly},
	"getPlanVersionOnly": {class: InferenceOnly}, "weightStreamingBudget": {class: InferenceOnly},
	"saveDebugTensors": {class: InferenceOnly}, "saveAllDebugTensors": {class: InferenceOnly},
	"dumpOptimizationProfile": {class: InferenceOnly}, "asyncFileReader": {class: InferenceOnly},
	"refitFromOnnx": {class: InferenceOnly}, "accuracyAlgorithm": {class: InferenceOnly},
	"accuracyThreshold": {class: InferenceOnly}, "atol": {class: InferenceOnly}, "rtol": {class: InferenceOnly},
	"loadRefOutputs": {class: InferenceOnly}, "refPair": {class: InferenceOnly},
	"rtxCudaGraphStrategy": {class: InferenceOnly}, "runtimeCacheFile": {class: InferenceOnly},

	// trtexec's own logging: trt-action logs TensorRT's messages itself.
	"verbose": {class: Ignored, why: "it turns on trtexec's verbose logging; trt-action logs TensorRT's messages itself"},
	// trtexec builds on the device it names too (it selects it before
	// building), so it is no inference-only flag: say who picks the GPU.
	"device": {class: Ignored, why: "it picks trtexec's GPU, for the build too; trt-action gives each build its GPU with --gpus (CUDA_VISIBLE_DEVICES)"},

	// Build flags of trtexec 8.x that 10.x removed, with nothing to set in their place.
	"explicitBatch":     {class: NoOp, why: "removed in TensorRT 10, where explicit batch is always on"},
	"explicitPrecision": {class: NoOp, why: "removed in TensorRT 10; it had no effect since 8.x (Q/DQ nodes in the model set precision)"},
	"heuristic":         {class: NoOp, why: "removed in TensorRT 10; a lower --builderOptimizationLevel builds faster"},
	"maxBatch":          {class: NoOp, why: whyImplicit},
	"batch":             {class: NoOp, why: whyImplicit},
	"minTiming":         {class: NoOp, why: "removed in TensorRT 10, replaced by --avgTiming, which trt-action does not set"},
	"buildOnly":         {class: NoOp, why: "removed in TensorRT 10, replaced by --skipInference; trt-action only builds"},

	// Build flags trt-action cannot honour.
	"deploy": {class: Refused, why: whyCaffeUFF}, "model": {class: Refused, why: whyCaffeUFF},
	"output": {class: Refused, why: whyCaffeUFF}, "uff": {class: Refused, why: whyCaffeUFF},
	"uffInput": {class: Refused, why: whyCaffeUFF}, "uffNHWC": {class: Refused, why: whyCaffeUFF},
	"loadEngine":                       {class: Refused, why: "it loads an engine instead of building one"},
	"inputIOFormats":                   {class: Refused, why: "I/O formats are not a trt-action setting"},
	"outputIOFormats":                  {class: Refused, why: "I/O formats are not a trt-action setting"},
	"stripAllWeights":                  {class: Refused, why: "use strip-weights with refit: individual"},
	"calibProfile":                     {class: Refused, why: "calibration runs without data in trt-action (int8-calibration-cache)"},
	"minShapesCalib":                   {class: Refused, why: "calibration runs without data in trt-action (int8-calibration-cache)"},
	"optShapesCalib":                   {class: Refused, why: "calibration runs without data in trt-action (int8-calibration-cache)"},
	"maxShapesCalib":                   {class: Refused, why: "calibration runs without data in trt-action (int8-calibration-cache)"},
	"safe":                             {class: Refused, why: whySafety},
	"consistency":                      {class: Refused, why: whySafety},
	"restricted":                       {class: Refused, why: whySafety},
	"safetyPlugins":                    {class: Refused, why: whySafety},
	"dumpKernelText":                   {class: Refused, why: whySafety},
	"std":                              {class: Refused, why: whySafety},
	"serialized":                       {class: Refused, why: whySafety},
	"avgTiming":                        {class: Refused, why: "the timing iterations averaged per tactic are not a trt-action setting"},
	"int4":                             {class: Refused, why: "weight-only int4 precision is not a trt-action precision; quantize the model (Q/DQ) instead"},
	"cpuOnly":                          {class: Refused, why: whyNotBuild},
	"tempdir":                          {class: Refused, why: whyNotBuild},
	"tempfileControls":                 {class: Refused, why: whyNotBuild},
	"directIO":                         {class: Refused, why: "deprecated in TensorRT and not supported"},
	"remoteAutoTuningConfig":           {class: Refused, why: "remote auto-tuning is not supported"},
	"markDebug":                        {class: Refused, why: whyDebugTensors},
	"markUnfusedTensorsAsDebugTensors": {class: Refused, why: whyDebugTensors},
	"layerDeviceTypes":                 {class: Refused, why: whyDLALayers},
	"buildDLAStandalone":               {class: Refused, why: "standalone DLA loadables are not supported"},
	"uint8AsymmetricQuantizationDLA":   {class: Refused, why: whyDLAParser + " (uint8 and asymmetric quantization in Q/DQ nodes)"},
	"adjustForDLA":                     {class: Refused, why: whyDLAParser + " (it rewrites layers to suit the DLA)"},
	"reportCapabilityDLA": {class: Refused, why: "it makes the ONNX parser fail unless every node can run on the DLA, " +
		"a check trt-action does not make; a build with dla and without gpu-fallback fails on a layer the DLA cannot run"},
	"enablePluginOverride":   {class: Refused, why: whyParserFlag},
	"pluginInstanceNorm":     {class: Refused, why: whyParserFlag},
	"pi":                     {class: Refused, why: whyParserFlag},
	"ignoreParsedPluginLibs": {class: Refused, why: whyParserFlag},
	"decomposableAttentions": {class: Refused, why: "decomposable attentions are not a trt-action setting"},
	"useGpu":                 {class: Refused, why: whyCurrentGPU},
	"useGPU":                 {class: Refused, why: whyCurrentGPU}, // as TensorRT-RTX 1.6's release notes spell it
	"help":                   {class: Refused, why: "it prints the tool's help"},
	"helpBuildRoute":         {class: Refused, why: "it prints the tool's help"},
	"setBuildRoute":          {class: Refused, why: "build routes are not a trt-action setting"},
	"tuneBuildRoutes":        {class: Refused, why: whyTuning},
	"tuneBuildRouteFile":     {class: Refused, why: whyTuning},
	"tuningSearch":           {class: Refused, why: whyTuning},
	"tuningTimeOut":          {class: Refused, why: whyTuning},
	"tuningCacheFile":        {class: Refused, why: whyTuning},
	"tuningResultFile":       {class: Refused, why: whyTuning},
	"continue":               {class: Refused, why: whyTuning},
	"dryRun":                 {class: Refused, why: whyTuning},
	"saveAllEngines":         {class: Refused, why: whyTuning},
}

// lineKeys are the build keys besides builder settings that a line sets:
// its model and its engine.
var lineKeys = []Setting{
	{Key: "onnx", Kind: File, Trtexec: []Flag{{Name: "onnx"}}},
	{Key: "engine", Kind: OutputFile, Trtexec: []Flag{{Name: "saveEngine"}}},
}

// flagIndex finds the setting of each mapped flag.
var flagIndex = func() map[string]FlagInfo {
	m := map[string]FlagInfo{}
	for _, s := range slices.Concat(lineKeys, table) {
		for _, f := range s.Trtexec {
			if _, dup := m[f.Name]; dup {
				panic("settings: flag --" + f.Name + " maps twice")
			}
			m[f.Name] = FlagInfo{Class: Mapped, Setting: s, Flag: f}
		}
	}
	for name, o := range otherFlags {
		if _, dup := m[name]; dup {
			panic("settings: flag --" + name + " is both a setting's and not")
		}
		m[name] = FlagInfo{Class: o.class, Why: o.why}
	}
	return m
}()

// Classify says what trt-action does with flag name (without "--").
func Classify(name string) FlagInfo { return flagIndex[name] }

// Repeatable reports whether a line may give the flag more than once:
// trtexec reads the flags of plugin libraries in a loop, one file each
// (while (getAndDelOption(...)) in samples/common/sampleOptions.cpp,
// NVIDIA/TensorRT 8.6 to 10.x), and every other flag once, reporting a
// repeat as an unknown option.
func (f FlagInfo) Repeatable() bool { return f.Class == Mapped && f.Setting.Kind == Files }

// FlagNames lists every flag trt-action knows, sorted: for suggestions.
func FlagNames() []string { return slices.Sorted(maps.Keys(flagIndex)) }

// Writer receives what a trtexec flag says, in the form the setting's key
// would be written in a matrix file: the matrix then checks it exactly as
// if it had been written as a key.
type Writer interface {
	Set(key, value string)                       // key: value
	Append(key, item string)                     // key: [..., item]
	Put(key string, path []string, value string) // key: {path...: value}
	// Fill writes key: {path...: value} where no Put gives it, before or
	// after: --shapes fills the bounds the other shape flags leave out.
	Fill(key string, path []string, value string)
	// Profile starts optimization profile index (--profile=N): the
	// shape flags right after it are that profile's. Which flags belong to
	// it is the line's order, which only the line's reader sees.
	Profile(index int)
}

// Read applies one flag of a line to w. Warnings are what the line's
// author should hear (a deprecated spelling, a value trtexec ignores).
func (f FlagInfo) Read(w Writer, value string, hasValue bool) (warnings []string, err error) {
	flag, s := f.Flag, f.Setting
	if flag.Successor != "" {
		state := "deprecated"
		if flag.Removed {
			state = "removed in TensorRT 10"
		}
		as := s.Key
		if flag.Part != "" {
			as += "." + flag.Part
		}
		warnings = append(warnings, fmt.Sprintf("--%s is %s, replaced by %s; read as %s", flag.Name, state, flag.Successor, as))
	}
	if flag.Set != "" {
		if hasValue {
			return nil, fmt.Errorf("--%s takes no value, got %q", flag.Name, value)
		}
		switch {
		case flag.Part != "":
			w.Put(s.Key, []string{flag.Part}, flag.Set)
		case s.Kind == Set:
			w.Append(s.Key, flag.Set)
		default:
			w.Set(s.Key, flag.Set)
		}
		return warnings, nil
	}
	if !hasValue || value == "" {
		return nil, fmt.Errorf("--%s needs a value: --%s=VALUE", flag.Name, flag.Name)
	}
	if why, refused := flag.Refused[value]; refused {
		return nil, fmt.Errorf("--%s=%s is not supported by trt-action: %s", flag.Name, value, why)
	}
	more, err := f.readValue(w, value)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag.Name, err)
	}
	return append(warnings, more...), nil
}

func (f FlagInfo) readValue(w Writer, value string) ([]string, error) {
	flag, s := f.Flag, f.Setting
	switch {
	case flag.Codec == ShapesCodec:
		return nil, readShapes(w, s.Key, flag.Part, value)
	case flag.Codec == PoolsCodec:
		return nil, readPools(w, s, value)
	case flag.Codec == LayerTypesCodec:
		return nil, readLayerTypes(w, s.Key, value)
	case flag.Codec == ProfileCodec:
		index, err := strconv.Atoi(value)
		if !isDigits(value) || err != nil {
			return nil, fmt.Errorf("%q is not a profile index: profiles are numbered from 0", value)
		}
		w.Profile(index)
	case flag.Part != "":
		if flag.Unit != "" && isDigits(value) {
			value += flag.Unit
		}
		w.Put(s.Key, []string{flag.Part}, value)
	case s.Kind == Enum:
		name, warning, err := s.fromTrtexec(flag, value)
		if err != nil {
			return nil, err
		}
		w.Set(s.Key, name)
		return nonEmpty(warning), nil
	case s.Kind == Set:
		var warnings []string
		for _, item := range strings.Split(value, ",") {
			name, warning, err := s.fromTrtexec(flag, strings.TrimSpace(item))
			if err != nil {
				return nil, err
			}
			w.Append(s.Key, name)
			warnings = append(warnings, nonEmpty(warning)...)
		}
		return warnings, nil
	case s.Kind == Toggles:
		return readToggles(w, s, flag, value)
	case s.Kind == Files:
		w.Append(s.Key, value)
	default:
		w.Set(s.Key, value)
	}
	return nil, nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// fromTrtexec turns trtexec's spelling of one of s's values into ours.
func (s Setting) fromTrtexec(flag Flag, spelled string) (name, warning string, err error) {
	same := func(a, b string) bool { return a == b || flag.FoldCase && strings.EqualFold(a, b) }
	for _, v := range s.Values {
		if t := v.trtexec(); t != NoFlag && same(t, spelled) {
			return v.Name, "", nil
		}
		for _, a := range v.Aliases {
			if same(a.Spelling, spelled) {
				return v.Name, flag.aliasWarning(a, v), nil
			}
		}
	}
	return "", "", fmt.Errorf("value %q; trtexec's values: %s", spelled, strings.Join(s.trtexecSpellings(), ", "))
}

// aliasWarning is what a line that spells v as a is told, about the flag
// it wrote: a removed flag's own warning names its successor, so its
// value is said in the successor's words.
func (f Flag) aliasWarning(a Alias, v Value) string {
	switch {
	case !a.Deprecated:
		return ""
	case f.Successor != "":
		return fmt.Sprintf("--%s=%s is read as %s=%s", f.Name, a.Spelling, f.Successor, v.trtexec())
	}
	return fmt.Sprintf("--%s=%s is deprecated, replaced by --%s=%s", f.Name, a.Spelling, f.Name, v.trtexec())
}

func (v Value) trtexec() string {
	if v.Trtexec == "" {
		return v.Name
	}
	return v.Trtexec
}

func (s Setting) trtexecSpellings() []string {
	var out []string
	for _, v := range s.Values {
		if t := v.trtexec(); t != NoFlag {
			out = append(out, t)
		}
	}
	return out
}

// readToggles reads "+CUBLAS,-CUDNN".
func readToggles(w Writer, s Setting, flag Flag, value string) ([]string, error) {
	var warnings []string
	for _, t := range strings.Split(value, ",") {
		t = strings.TrimSpace(t)
		if len(t) < 2 || (t[0] != '+' && t[0] != '-') {
			return nil, fmt.Errorf("%q wants a sign, like +%s", t, s.trtexecSpellings()[0])
		}
		if why, ignored := flag.Ignored[t[1:]]; ignored {
			warnings = append(warnings, fmt.Sprintf("--%s %s ignored: %s", flag.Name, t, why))
			continue
		}
		name, warning, err := s.fromTrtexec(flag, t[1:])
		if err != nil {
			known := slices.Concat(s.trtexecSpellings(), slices.Sorted(maps.Keys(flag.Ignored)))
			return nil, fmt.Errorf("unknown name %q; trtexec's names: %s", t[1:], strings.Join(known, ", "))
		}
		w.Append(s.Key, t[:1]+name)
		warnings = append(warnings, nonEmpty(warning)...)
	}
	return warnings, nil
}

// splitList splits trtexec's comma-separated NAME:VALUE list. trtexec
// splits at every comma first, so it cannot read a name holding one;
// trt-action also keeps a comma inside 'quotes', which is how plan
// --trtexec writes such a name (every line trtexec reads, trt-action reads
// the same way).
func splitList(v string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\'':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, v[start:i])
				start = i + 1
			}
		}
	}
	return append(out, v[start:])
}

// nameAndValue splits NAME:VALUE as sampleOptions.cpp's splitNameAndValue
// does: a name may be 'quoted' (then it may hold ':'), else the value is
// what follows the last ':'.
func nameAndValue(item, example string) (string, string, error) {
	switch strings.Count(item, "'") {
	case 0:
		i := strings.LastIndex(item, ":")
		if i <= 0 {
			return "", "", fmt.Errorf("%q is not %s", item, example)
		}
		return item[:i], item[i+1:], nil
	case 2:
		second := strings.LastIndex(item, "'")
		rest := item[second+1:]
		if !strings.HasPrefix(rest, ":") {
			return "", "", fmt.Errorf("%q is not %s: a quoted name is followed by ':'", item, example)
		}
		return strings.ReplaceAll(item[:second], "'", ""), rest[1:], nil
	}
	return "", "", fmt.Errorf("%q is not %s: quote a name with two ', as 'name'", item, example)
}

// quoteName writes a name for nameAndValue; a name holding ' cannot be
// written at all.
func quoteName(name string) (string, error) {
	switch {
	case strings.Contains(name, "'"):
		return "", fmt.Errorf("%q holds ', which trtexec's flags cannot carry", name)
	case name == "" || strings.ContainsAny(name, ":,"):
		return "'" + name + "'", nil
	}
	return name, nil
}

const shapeExample = "NAME:DIMS like input:1x3x224x224"

// readShapes reads "input:1x3x224x224,mask:1x64" into shapes.NAME.part;
// --shapes (part "") fills each bound that --minShapes, --optShapes or
// --maxShapes leave out, whatever the order of the flags, as trtexec
// builds with it.
func readShapes(w Writer, key, part, value string) error {
	for _, item := range splitList(value) {
		name, dims, err := nameAndValue(item, shapeExample)
		if err != nil {
			return err
		}
		if part != "" {
			w.Put(key, []string{name, part}, dims)
			continue
		}
		for _, bound := range []string{"min", "opt", "max"} {
			w.Fill(key, []string{name, bound}, dims)
		}
	}
	return nil
}

// readPools reads "workspace:1024,tacticSharedMem:48K": sizes are MiB
// unless they end in B, K, M or G (binary units).
func readPools(w Writer, s Setting, value string) error {
	units := map[byte]string{'B': "B", 'K': "KiB", 'M': "MiB", 'G': "GiB"}
	for _, item := range splitList(value) {
		pool, size, ok := strings.Cut(item, ":")
		name, _, err := s.fromTrtexec(Flag{}, pool)
		if !ok || err != nil {
			return fmt.Errorf("%q is not POOL:SIZE with a pool of %s", item, strings.Join(slices.Sorted(slices.Values(s.trtexecSpellings())), ", "))
		}
		unit := "MiB"
		if n := len(size); n > 0 && units[size[n-1]] != "" {
			unit, size = units[size[n-1]], size[:n-1]
		}
		w.Put(s.Key, []string{name}, size+unit)
	}
	return nil
}

// readLayerTypes reads "layer1:fp16,/conv*/Conv:fp32" in the order written.
func readLayerTypes(w Writer, key, value string) error {
	for _, item := range splitList(value) {
		layer, typ, err := nameAndValue(item, "LAYER:TYPE")
		if err != nil {
			return err
		}
		if strings.Contains(typ, "+") {
			return fmt.Errorf("%q: one type per layer for every output; per-output types are not supported", item)
		}
		w.Put(key, []string{layer}, typ)
	}
	return nil
}

// Line is what plan --trtexec writes for one setting: its flags, and what
// the line cannot say.
type Line struct {
	Flags   []string // --name or --name=value, unquoted
	Missing []string // values left out of the line: they have no flag
	Notes   []string // what a reader of the line must know
}

// WriteTrtexec writes setting s's value v as flags of s's tool. v is in
// the form a build holds it (Kind's Go type).
func (s Setting) WriteTrtexec(v any) Line {
	var l Line
	value := s.valueFlag()
	if value == nil && !slices.Contains([]Kind{Bool, Enum, Set, Object, Shapes}, s.Kind) {
		l.missing("%s has no trtexec flag", s.Key)
		return l
	}
	switch s.Kind {
	case Bool:
		b, _ := v.(bool)
		if f := s.writingFlag(strconv.FormatBool(b)); f != nil {
			l.flag(f.Name)
		} else if s.writingFlag(strconv.FormatBool(!b)) == nil {
			l.missing("%s: %v has no trtexec flag", s.Key, b)
		} // else trtexec does this without a flag
	case Enum:
		name, _ := v.(string)
		val, _ := s.Value(name)
		switch f := s.writingFlag(name); {
		case value != nil && val.trtexec() != NoFlag:
			l.flag(value.Name, val.trtexec())
		case f != nil:
			l.flag(f.Name)
		case s.Default != name:
			l.missing("%s: %s has no trtexec flag", s.Key, name)
		}
	case Int, Size, File, OutputFile:
		l.flag(value.Name, fmt.Sprint(v))
	case Files:
		list, _ := v.([]string)
		for _, p := range list {
			l.flag(value.Name, p)
		}
	case Set:
		list, _ := v.([]string)
		s.writeSet(&l, value, list)
	case Toggles:
		list, _ := v.([]string)
		var items, none []string
		for _, t := range list {
			val, _ := s.Value(t[1:])
			if val.trtexec() == NoFlag {
				none = append(none, t)
				continue
			}
			items = append(items, t[:1]+val.trtexec())
		}
		if len(items) > 0 {
			l.flag(value.Name, strings.Join(items, ","))
		}
		if len(none) > 0 {
			l.missing("%s %s: no trtexec spelling", s.Key, strings.Join(none, ", "))
		}
	case Pools:
		pools, _ := v.(map[string]int64)
		var items []string
		for _, val := range s.Values {
			if size, ok := pools[val.Name]; ok {
				items = append(items, val.trtexec()+":"+trtexecSize(size))
			}
		}
		l.flag(value.Name, strings.Join(items, ","))
	case LayerTypes:
		list, _ := v.([]LayerType)
		var items []string
		for _, lt := range list {
			if name := l.name(s.Key, lt.Layer); name != "" {
				items = append(items, name+":"+lt.Type)
			}
			if strings.Count(lt.Layer, "*") > 1 {
				l.Notes = append(l.Notes, fmt.Sprintf("%s %q has more than one *: trt-action reads each as a wildcard, trtexec only the first", s.Key, lt.Layer))
			}
		}
		if len(items) > 0 {
			l.flag(value.Name, strings.Join(items, ","))
		}
	case Object:
		d, _ := v.(DLA)
		for _, f := range s.Trtexec {
			switch {
			case f.Part == "core":
				l.flag(f.Name, strconv.Itoa(d.Core))
			case f.Part == "gpu-fallback" && d.GPUFallback:
				l.flag(f.Name)
			}
		}
	case Shapes:
		shapes, _ := v.(map[string]Shape)
		s.writeShapes(&l, shapes)
	case Profiles:
		// Each --profile=N, then its shape flags right after it: how
		// trtexec groups them.
		list, _ := v.([]map[string]Shape)
		shapes, _ := Lookup(s.ItemKey())
		for i, p := range list {
			l.flag(value.Name, strconv.Itoa(i))
			shapes.writeShapes(&l, p)
		}
	}
	return l
}

func (l *Line) flag(name string, value ...string) {
	w := "--" + name
	if len(value) > 0 {
		w += "=" + value[0]
	}
	l.Flags = append(l.Flags, w)
}

func (l *Line) missing(format string, args ...any) {
	l.Missing = append(l.Missing, fmt.Sprintf(format, args...))
}

// name quotes a name for a NAME:VALUE list, noting what trtexec itself
// cannot read; "" when the name cannot be written.
func (l *Line) name(key, name string) string {
	q, err := quoteName(name)
	if err != nil {
		l.missing("%s %s", key, err)
		return ""
	}
	if strings.Contains(name, ",") {
		l.Notes = append(l.Notes, fmt.Sprintf("%s %q holds a comma: trt-action reads it quoted, trtexec splits its lists at every comma", key, name))
	}
	return q
}

// valueFlag is the flag plan --trtexec writes a value with (nil: none).
func (s Setting) valueFlag() *Flag { return s.writingFlag("") }

// writingFlag is the first of s's flags that plan --trtexec may write for
// set: with set "", one that takes a value; else one without a value that
// writes set. Never a part's flag, nor a deprecated or removed one. Nil:
// none.
func (s Setting) writingFlag(set string) *Flag {
	for i, f := range s.Trtexec {
		if f.Set == set && f.Part == "" && f.Successor == "" {
			return &s.Trtexec[i]
		}
	}
	return nil
}

func (s Setting) writeSet(l *Line, value *Flag, list []string) {
	if value != nil {
		items := make([]string, len(list))
		for i, name := range list {
			val, _ := s.Value(name)
			items[i] = val.trtexec()
		}
		l.flag(value.Name, strings.Join(items, ","))
		return
	}
	var none []string
	for _, name := range list {
		val, _ := s.Value(name)
		if f := s.writingFlag(name); f != nil {
			l.flag(f.Name)
		} else if !val.Implied {
			none = append(none, name)
		}
	}
	if len(none) > 0 {
		l.missing("%s %s: no trtexec flag", s.Key, strings.Join(none, ", "))
	}
}

func (s Setting) writeShapes(l *Line, shapes map[string]Shape) {
	names := slices.Sorted(maps.Keys(shapes))
	for _, f := range s.Trtexec {
		if f.Part == "" {
			continue // --shapes: the three bounds say it all
		}
		var items []string
		for _, input := range names {
			name := l.name(s.Key, input)
			if name == "" {
				continue
			}
			sh := shapes[input]
			dims := map[string][]int64{"min": sh.Min, "opt": sh.Opt, "max": sh.Max}[f.Part]
			items = append(items, name+":"+DimsX(dims))
		}
		if len(items) > 0 {
			l.flag(f.Name, strings.Join(items, ","))
		}
	}
	// A name that cannot be written is missing once, not once per bound.
	l.Missing, l.Notes = firsts(l.Missing), firsts(l.Notes)
}

// firsts is list with each string's first occurrence only.
func firsts(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// DimsX writes dimensions as trtexec does: 1x3x224x224.
func DimsX(dims []int64) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, "x")
}

// trtexecSize writes a size in trtexec's binary units, exactly: GiB, MiB
// and KiB are trtexec's G, M and K, and B is B (the suffixes readPools
// reads).
func trtexecSize(n int64) string {
	count, unit := text.ExactBinary(n)
	return strconv.FormatInt(count, 10) + strings.TrimSuffix(unit, "iB")
}
