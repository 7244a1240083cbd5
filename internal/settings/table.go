package settings

import "github.com/trt-action/trt-action/internal/backend"

// Flavour sets the rows use.
var (
	datacenter = []string{backend.FlavourTRT10, backend.FlavourTRT11}
	trt10      = []string{backend.FlavourTRT10}
	rtx        = []string{backend.FlavourRTX}
)

// Why the flavours without a setting lack it.
const (
	whyStronglyTyped = "TensorRT 11.x and TensorRT-RTX networks are always strongly typed: " +
		"set types in the ONNX model with casts and QuantizeLinear/DequantizeLinear"
	whyWeaklyTyped = "it applies to weakly typed networks, which only TensorRT 10.x builds"
	whyNoDLA       = "TensorRT-RTX has no DLA"
)

// layerTypeValues are the types layer-precisions and layer-output-types
// take, spelled as trtexec spells them.
var layerTypeValues = []Value{
	{Name: "fp32", Enum: "kFLOAT"}, {Name: "fp16", Enum: "kHALF"}, {Name: "bf16", Enum: "kBF16"},
	{Name: "int8", Enum: "kINT8"}, {Name: "int32", Enum: "kINT32"}, {Name: "int64", Enum: "kINT64"},
	{Name: "fp8", Enum: "kFP8"}, {Name: "int4", Enum: "kINT4"}, {Name: "uint8", Enum: "kUINT8"},
	{Name: "bool", Enum: "kBOOL"},
}

// table is every builder setting. The order is the order of a build's
// keys in messages, plans and the schema.
var table = withValueNames([]Setting{
	{Key: "workspace", Kind: Size, AliasOf: "memory-pools.workspace",
		Doc: "The workspace memory pool limit: another way to write memory-pools: {workspace: SIZE}."},
	{Key: "opt-level", Python: "builder_optimization_level", Kind: Int, Min: 0, Max: 5, Default: 3,
		Doc:     "Builder optimization level, 0 to 5 (default 3).",
		Trtexec: []Flag{{Name: "builderOptimizationLevel"}}},
	{Key: "tiling-optimization-level", Python: "tiling_optimization_level", Kind: Int, Min: 0, Max: 3, Default: 0, Since: 8,
		Doc:     "Tiling optimization level, 0 (none, the default) to 3.",
		Trtexec: []Flag{{Name: "tilingOptimizationLevel"}}},
	// Each value is the BuilderFlag it sets; fp32 sets none (FP32 is
	// always allowed), and best stands for what trtexec's --best sets
	// (fp16, int8 and bf16: samples/common/sampleOptions.cpp, NVIDIA/TensorRT 10.x).
	{Key: "precision", Kind: Set, Fixed: true, EnumType: "BuilderFlag",
		Doc: "Precision flags: one or a list; best is fp16, int8 and bf16. TensorRT 10 only, but for tf32.",
		Values: []Value{
			{Name: "fp32", Flavours: trt10, Why: whyStronglyTyped, Implied: true},
			{Name: "fp16", Enum: "kFP16", Flavours: trt10, Why: whyStronglyTyped},
			{Name: "bf16", Enum: "kBF16", Flavours: trt10, Why: whyStronglyTyped},
			{Name: "int8", Enum: "kINT8", Flavours: trt10, Why: whyStronglyTyped},
			{Name: "fp8", Enum: "kFP8", Flavours: trt10, Why: whyStronglyTyped},
			{Name: "tf32", Enum: "kTF32", Implied: true},
			{Name: "best", Implies: []string{"fp16", "int8", "bf16"}, Flavours: trt10, Why: whyStronglyTyped},
		},
		Trtexec: []Flag{{Name: "fp16", Set: "fp16"}, {Name: "bf16", Set: "bf16"}, {Name: "int8", Set: "int8"},
			{Name: "fp8", Set: "fp8"}, {Name: "best", Set: "best"}}},
	{Key: "shapes", Kind: Shapes, Fixed: true, ItemOf: "profiles",
		Doc: "Optimization profile: ONNX input name -> {min, opt, max}, each a list or trtexec's 1x3x224x224.",
		Trtexec: []Flag{{Name: "minShapes", Codec: ShapesCodec, Part: "min"}, {Name: "optShapes", Codec: ShapesCodec, Part: "opt"},
			{Name: "maxShapes", Codec: ShapesCodec, Part: "max"}, {Name: "shapes", Codec: ShapesCodec}}},
	// Several profiles, each added to the builder config in the order
	// written (IBuilderConfig::addOptimizationProfile returns its index);
	// trtexec's --profile=N groups the shape flags that follow it
	// (samples/common/sampleOptions.cpp, getOptimizationProfiles, in
	// NVIDIA/TensorRT 10.x and 11.x).
	{Key: "profiles", Kind: Profiles, Fixed: true,
		Doc: "Optimization profiles, in order (item i is the engine's profile i): a list, each item like shapes and giving " +
			"the same inputs. Not with shapes, which is one profile.",
		Trtexec: []Flag{{Name: "profile", Codec: ProfileCodec}}},
	{Key: "targets", Kind: Set, Fixed: true, Flavours: rtx, Why: "TensorRT builds for the GPU it runs on",
		Doc: "Compute capabilities to build for, one or a list.", EnumType: "ComputeCapability",
		Values: []Value{
			{Name: "sm75", Trtexec: "75", Aliases: []Alias{{Spelling: "7.5"}}, Enum: "kSM75"},
			{Name: "sm80", Trtexec: "80", Aliases: []Alias{{Spelling: "8.0"}}, Enum: "kSM80"},
			{Name: "sm86", Trtexec: "86", Aliases: []Alias{{Spelling: "8.6"}}, Enum: "kSM86"},
			{Name: "sm89", Trtexec: "89", Aliases: []Alias{{Spelling: "8.9"}}, Enum: "kSM89"},
			{Name: "sm120", Trtexec: "120", Aliases: []Alias{{Spelling: "12.0"}}, Enum: "kSM120"},
			{Name: "sm121", Trtexec: "121", Aliases: []Alias{{Spelling: "12.1"}}, Enum: "kSM121"},
		},
		Trtexec: []Flag{{Name: "computeCapabilities"}}},
	// A timing cache makes TensorRT-RTX's ahead-of-time build query for a
	// GPU, and has no effect on its engines (NVIDIA, "Timing Cache
	// Migration", https://docs.nvidia.com/deeplearning/tensorrt-rtx/latest/inference-library/timing-cache-migration.html;
	// TensorRT-RTX 1.6 release notes, Limitations).
	{Key: "timing-cache", Kind: OutputFile, Fixed: true, Accelerator: true, Flavours: datacenter,
		Why:     "a timing cache makes TensorRT-RTX look for a GPU at build time",
		Doc:     "Timing cache file: loaded, combined with the build's timings under a file lock, and saved.",
		Trtexec: []Flag{{Name: "timingCacheFile"}}},
	{Key: "strongly-typed", Kind: Bool,
		Doc:     "Build a strongly typed network: types come from the model. TensorRT 11 and TensorRT-RTX always are.",
		Values:  []Value{{Name: "true"}, {Name: "false", Flavours: trt10, Why: whyStronglyTyped}},
		Trtexec: []Flag{{Name: "stronglyTyped", Set: "true"}}},
	{Key: "plugins", Kind: Files,
		Doc: "Plugin libraries loaded into the builder's plugin registry before the model is parsed.",
		Trtexec: []Flag{{Name: "staticPlugins"}, {Name: "dynamicPlugins"},
			{Name: "plugins", Successor: "--staticPlugins"}}},
	{Key: "plugins-serialize", Kind: Files,
		Doc:     "Plugin libraries to load and embed in the plan.",
		Trtexec: []Flag{{Name: "setPluginsToSerialize"}}},
	{Key: "precision-constraints", Kind: Enum, Flavours: trt10, Why: whyWeaklyTyped, Default: "none",
		Doc: "How layer-precisions and layer-output-types bind: none, prefer, obey.", EnumType: "BuilderFlag",
		Values: []Value{{Name: "none"}, {Name: "prefer", Enum: "kPREFER_PRECISION_CONSTRAINTS"},
			{Name: "obey", Enum: "kOBEY_PRECISION_CONSTRAINTS"}},
		Trtexec: []Flag{{Name: "precisionConstraints"}}},
	{Key: "layer-precisions", Kind: LayerTypes, Flavours: trt10, Why: whyWeaklyTyped, EnumType: "DataType",
		Doc: "Layer name or glob -> compute precision. An exact name wins over a glob, * loses to every " +
			"other pattern, and among globs the first written wins.",
		Values: layerTypeValues, Trtexec: []Flag{{Name: "layerPrecisions", Codec: LayerTypesCodec}}},
	{Key: "layer-output-types", Kind: LayerTypes, Flavours: trt10, Why: whyWeaklyTyped, EnumType: "DataType",
		Doc:    "Layer name or glob -> output type, with the precedence of layer-precisions.",
		Values: layerTypeValues, Trtexec: []Flag{{Name: "layerOutputTypes", Codec: LayerTypesCodec}}},
	{Key: "int8-calibration-cache", Kind: File, Flavours: trt10, Why: whyWeaklyTyped,
		Doc:     "INT8 calibration cache, served by a calibrator that has no data (needs precision int8).",
		Trtexec: []Flag{{Name: "calib"}}},
	{Key: "tf32", Kind: Bool, Default: true, Flag: "kTF32",
		Doc:     "TF32 math for fp32 layers; on by default, false turns it off.",
		Trtexec: []Flag{{Name: "noTF32", Set: "false"}}},
	{Key: "hardware-compatibility", Python: "hardware_compatibility_level", Kind: Enum, Default: "none", EnumType: "HardwareCompatibilityLevel",
		Doc: "Which GPUs the engine runs on: none (the builder's), ampere-plus, same-compute-capability.",
		Values: []Value{{Name: "none", Enum: "kNONE"}, {Name: "ampere-plus", Trtexec: "ampere+", Enum: "kAMPERE_PLUS"},
			{Name: "same-compute-capability", Trtexec: "sameComputeCapability", Enum: "kSAME_COMPUTE_CAPABILITY", Since: 8}},
		Trtexec: []Flag{{Name: "hardwareCompatibilityLevel", FoldCase: true}}},
	{Key: "version-compatible", Kind: Bool, Default: false, Flag: "kVERSION_COMPATIBLE",
		Doc:     "Build a plan later TensorRT versions can run (with the lean runtime).",
		Trtexec: []Flag{{Name: "versionCompatible", Set: "true"}, {Name: "vc", Set: "true"}}},
	{Key: "exclude-lean-runtime", Kind: Bool, Default: false, Flag: "kEXCLUDE_LEAN_RUNTIME",
		Doc:     "Leave the lean runtime out of a version-compatible plan (needs version-compatible: true).",
		Trtexec: []Flag{{Name: "excludeLeanRuntime", Set: "true"}}},
	{Key: "refit", Kind: Enum, Default: "none", EnumType: "BuilderFlag",
		Doc: "Refittable weights: none, refit, identical (refit with the same weights), individual (weights marked in the model).",
		Values: []Value{{Name: "none"}, {Name: "refit", Enum: "kREFIT"}, {Name: "identical", Enum: "kREFIT_IDENTICAL"},
			{Name: "individual", Enum: "kREFIT_INDIVIDUAL", Since: 8}},
		Trtexec: []Flag{{Name: "refit", Set: "refit"}}},
	{Key: "strip-weights", Kind: Bool, Default: false, Flag: "kSTRIP_PLAN",
		Doc:     "Leave refittable weights out of the plan (refit them at run time); not with refit: none.",
		Trtexec: []Flag{{Name: "stripWeights", Set: "true"}, {Name: "weightless", Set: "true", Successor: "--stripWeights"}}},
	{Key: "weight-streaming", Kind: Bool, Default: false, Flag: "kWEIGHT_STREAMING",
		Doc:     "Allow streaming weights from host memory at run time.",
		Trtexec: []Flag{{Name: "allowWeightStreaming", Set: "true"}}},
	{Key: "runtime-platform", Python: "runtime_platform", Kind: Enum, Default: "same-as-build", Since: 3, EnumType: "RuntimePlatform",
		Doc: "Platform the engine runs on: same-as-build, windows-amd64.",
		Values: []Value{{Name: "same-as-build", Trtexec: "SameAsBuild", Enum: "kSAME_AS_BUILD"},
			{Name: "windows-amd64", Trtexec: "WindowsAMD64", Enum: "kWINDOWS_AMD64"}},
		Trtexec: []Flag{{Name: "runtimePlatform"}}},
	{Key: "tactic-sources", Kind: Toggles, EnumType: "TacticSource",
		Doc: "Tactic sources to turn on (+name) or off (-name): \"+cublas,-cudnn\" or a list.",
		Values: []Value{
			{Name: "cublas", Trtexec: "CUBLAS", Enum: "kCUBLAS", Flavours: trt10},
			{Name: "cublas-lt", Trtexec: "CUBLAS_LT", Aliases: []Alias{{Spelling: "CUBLASLT"}}, Enum: "kCUBLAS_LT", Flavours: trt10},
			{Name: "cudnn", Trtexec: "CUDNN", Enum: "kCUDNN", Flavours: trt10},
			{Name: "edge-mask-convolutions", Trtexec: "EDGE_MASK_CONVOLUTIONS", Enum: "kEDGE_MASK_CONVOLUTIONS"},
			{Name: "jit-convolutions", Trtexec: "JIT_CONVOLUTIONS", Enum: "kJIT_CONVOLUTIONS"},
		},
		Trtexec: []Flag{{Name: "tacticSources"}}},
	{Key: "max-tactics", Python: "max_num_tactics", Kind: Int, Min: 1, Max: 1 << 30, Since: 8,
		Doc:     "Most tactics timed per layer.",
		Trtexec: []Flag{{Name: "maxTactics"}}},
	{Key: "sparsity", Kind: Enum, Default: "disable", EnumType: "BuilderFlag",
		Doc:    "Use sparse weights where the model has them: disable, enable.",
		Values: []Value{{Name: "disable"}, {Name: "enable", Enum: "kSPARSE_WEIGHTS"}},
		Trtexec: []Flag{{Name: "sparsity", Refused: map[string]string{
			"force": "it rewrites the model's weights, which trt-action does not do; prune the model and use enable"}}}},
	{Key: "max-aux-streams", Python: "max_aux_streams", Kind: Int, Min: 0, Max: 64,
		Doc:     "Most auxiliary streams a layer may use, 0 to 64.",
		Trtexec: []Flag{{Name: "maxAuxStreams"}}},
	{Key: "l2-limit-for-tiling", Python: "l2_limit_for_tiling", Kind: Size, Since: 8,
		Doc:     "L2 cache usage limit for tiling optimization.",
		Trtexec: []Flag{{Name: "l2LimitForTiling"}}},
	{Key: "memory-pools", Kind: Pools, EnumType: "MemoryPoolType",
		Doc: "Memory pool limits: pool -> size (dla-* on TensorRT only).",
		Values: []Value{
			{Name: "workspace", Enum: "kWORKSPACE"},
			{Name: "tactic-shared", Trtexec: "tacticSharedMem", Enum: "kTACTIC_SHARED_MEMORY"},
			{Name: "dla-sram", Trtexec: "dlaSRAM", Enum: "kDLA_MANAGED_SRAM", Flavours: datacenter, Why: whyNoDLA},
			{Name: "dla-local", Trtexec: "dlaLocalDRAM", Enum: "kDLA_LOCAL_DRAM", Flavours: datacenter, Why: whyNoDLA},
			{Name: "dla-global", Trtexec: "dlaGlobalDRAM", Enum: "kDLA_GLOBAL_DRAM", Flavours: datacenter, Why: whyNoDLA},
		},
		Trtexec: []Flag{{Name: "memPoolSize", Codec: PoolsCodec},
			{Name: "workspace", Part: "workspace", Unit: "MiB", Successor: "--memPoolSize=workspace:N", Removed: true}}},
	{Key: "profiling-verbosity", Python: "profiling_verbosity", Kind: Enum, Default: "layer-names-only", EnumType: "ProfilingVerbosity",
		Doc: "How much the engine says about its layers: none, layer-names-only (the default), detailed.",
		Values: []Value{{Name: "none", Enum: "kNONE"},
			{Name: "layer-names-only", Trtexec: "layer_names_only", Enum: "kLAYER_NAMES_ONLY",
				Aliases: []Alias{{Spelling: "default", Deprecated: true}}},
			{Name: "detailed", Enum: "kDETAILED", Aliases: []Alias{{Spelling: "verbose", Deprecated: true}}}},
		Trtexec: []Flag{{Name: "profilingVerbosity"}, {Name: "nvtxMode", Successor: "--profilingVerbosity", Removed: true}}},
	{Key: "preview-features", Kind: Toggles, EnumType: "PreviewFeature",
		Doc: "Preview features to turn on (+name) or off (-name).",
		Values: []Value{
			// trtexec reads +profileSharing0806 and ignores it: on by default since 10.0.
			{Name: "profile-sharing-0806", Trtexec: NoFlag, Enum: "kPROFILE_SHARING_0806", Flavours: trt10},
			{Name: "aliased-plugin-io-10-03", Trtexec: "aliasedPluginIO1003", Enum: "kALIASED_PLUGIN_IO_10_03", Since: 3},
			{Name: "runtime-activation-resize-10-10", Trtexec: "runtimeActivationResize", Enum: "kRUNTIME_ACTIVATION_RESIZE_10_10", Since: 10},
			{Name: "multidevice-runtime-10-16", Trtexec: "multiDeviceRuntime", Enum: "kMULTIDEVICE_RUNTIME_10_16", Since: 16,
				Flavours: trt10},
		},
		// The names trtexec 8.6 to 10.x read and later versions dropped
		// (sampleOptions.cpp at v8.6.1, v10.0.1 and v10.16; NvInfer.h's
		// PreviewFeature at v8.6.1 and v10.0.1): a line with one still builds.
		Trtexec: []Flag{{Name: "preview", Ignored: map[string]string{
			"profileSharing0806":      "it has no effect since TensorRT 10.0, where profile sharing is always on",
			"fasterDynamicShapes0805": "removed in TensorRT 10.0; it was on by default, and turning it off was deprecated in 8.6",
			"disableExternalTacticSourcesForCore0805": "removed in TensorRT 10.0, where the core uses no cuBLAS or cuDNN tactics " +
				"unless tactic-sources (--tacticSources) turns them on"}}}},
	{Key: "dla", Kind: Object, Flavours: datacenter, Why: whyNoDLA,
		Doc: "Build for a Jetson DLA core: {core: N, gpu-fallback: true}.",
		Fields: []Setting{
			{Key: "core", Kind: Int, Min: 0, Max: 15, Required: true, Doc: "The DLA core to build for."},
			{Key: "gpu-fallback", Kind: Bool, Flag: "kGPU_FALLBACK", Doc: "Run on the GPU the layers the DLA cannot."},
		},
		Trtexec: []Flag{{Name: "useDLACore", Part: "core"}, {Name: "allowGPUFallback", Part: "gpu-fallback", Set: "true"}}},
	{Key: "builder-flags", Kind: Set, EnumType: "BuilderFlag",
		Doc: "The builder flags no other key sets: one or a list.",
		Values: []Value{
			{Name: "debug", Enum: "kDEBUG"},
			{Name: "disable-timing-cache", Enum: "kDISABLE_TIMING_CACHE"},
			{Name: "error-on-timing-cache-miss", Enum: "kERROR_ON_TIMING_CACHE_MISS"},
			{Name: "disable-compilation-cache", Enum: "kDISABLE_COMPILATION_CACHE"},
			{Name: "strict-nans", Enum: "kSTRICT_NANS", Since: 8},
			{Name: "monitor-memory", Enum: "kMONITOR_MEMORY", Since: 8},
			{Name: "editable-timing-cache", Enum: "kEDITABLE_TIMING_CACHE", Since: 8},
			{Name: "distributive-independence", Enum: "kDISTRIBUTIVE_INDEPENDENCE", Since: 16},
			{Name: "require-user-allocation", Enum: "kREQUIRE_USER_ALLOCATION", Flavours: rtx,
				Why: "it is TensorRT-RTX's flag"},
		},
		Trtexec: []Flag{{Name: "noBuilderCache", Set: "disable-timing-cache"}, {Name: "errorOnTimingCacheMiss", Set: "error-on-timing-cache-miss"},
			{Name: "noCompilationCache", Set: "disable-compilation-cache"}, {Name: "monitorMemory", Set: "monitor-memory"},
			{Name: "distributiveIndependence", Set: "distributive-independence"}}},
})
