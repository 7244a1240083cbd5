// settings_test.cc: drives builder_settings.h, profiles.h and the generated
// settings_enums.h, compiled against each flavour's real headers (TensorRT
// 10.0, 10.16, 11.1 and TensorRT-RTX; -DTAM_FLAVOR_*), and checks that each
// matrix setting reaches the right setter with the right value, that each
// optimization profile becomes one of the builder's, in order, and that every
// value's enumerator exists exactly where the settings table says. No
// TensorRT library is needed: IBuilderConfig's methods call through its
// implementation table (apiv::VBuilderConfig), and the test puts a recording
// stand-in there, whose other methods are generated from the same headers
// (gen_standin.sh). Built and run by `make backends-test` when TRT_HEADERS
// (and the TensorRT-RTX headers) are given (backends.mk).
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "builder_settings.h"
#include "precision.h"
#include "profiles.h"
#include "standin.h"
#include "test_check.h"

namespace {

using namespace nvinfer1;
using namespace nvinfer1::apiv;
using tamtest::ConfigOver;
using tamtest::VBuilderConfigDefaults;
using tamtest::VBuilderDefaults;
using tamtest::VConstantLayerDefaults;
using tamtest::VLayerDefaults;
using tamtest::VNetworkDefinitionDefaults;
using tamtest::VOptimizationProfileDefaults;
using tamtest::VTensorDefaults;

using tamtest::check;
using tamtest::throws_with;

constexpr TacticSources kAllTactics = 0xff;

// The gate of a library as new as the headers.
tam::Gate same_as_headers() { return tam::Gate(TAM_HEADERS_MINOR, TAM_HEADERS_MINOR); }

// RecordingConfig remembers every builder-config call builder_settings.h makes.
class RecordingConfig : public VBuilderConfigDefaults {
 public:
  std::set<int> flags_set, flags_cleared;
  std::map<int, std::size_t> pools;
  TacticSources tactics = kAllTactics;
  bool refuse_tactics = false;
  int aux = -1, verbosity = -1, hardware = -1, platform = -1, max_tactics = -1, dla_core = -1, device = -1;
  int opt_level = -1, tiling = -1;
  int64_t l2 = -1;
  std::map<int, bool> previews;
  std::vector<std::string> serialize;

  void setFlag(BuilderFlag f) noexcept override { flags_set.insert(static_cast<int>(f)); }
  void clearFlag(BuilderFlag f) noexcept override { flags_cleared.insert(static_cast<int>(f)); }
  void setMemoryPoolLimit(MemoryPoolType pool, std::size_t size) noexcept override { pools[static_cast<int>(pool)] = size; }
  TacticSources getTacticSources() const noexcept override { return kAllTactics; }
  bool setTacticSources(TacticSources t) noexcept override {
    tactics = t;
    return !refuse_tactics;
  }
#if defined(TAM_FLAVOR_TRT10)
  void setMaxAuxStreams(int32_t n) noexcept override { aux = n; }
#else
  bool setMaxAuxStreams(int32_t n) noexcept override {
    aux = n;
    return true;
  }
#endif
  void setProfilingVerbosity(ProfilingVerbosity v) noexcept override { verbosity = static_cast<int>(v); }
  void setHardwareCompatibilityLevel(HardwareCompatibilityLevel h) noexcept override { hardware = static_cast<int>(h); }
  void setBuilderOptimizationLevel(int32_t level) noexcept override { opt_level = level; }
#if TAM_HAS_TILING_OPTIMIZATION_LEVEL
  bool setTilingOptimizationLevel(TilingOptimizationLevel level) noexcept override {
    tiling = static_cast<int>(level);
    return true;
  }
#endif
#if TAM_HAS_RUNTIME_PLATFORM
  void setRuntimePlatform(RuntimePlatform p) noexcept override { platform = static_cast<int>(p); }
#endif
#if TAM_HAS_MAX_TACTICS
  void setMaxNbTactics(int32_t n) noexcept override { max_tactics = n; }
#endif
#if TAM_HAS_L2_LIMIT_FOR_TILING
  bool setL2LimitForTiling(int64_t size) noexcept override {
    l2 = size;
    return true;
  }
#endif
  void setPreviewFeature(PreviewFeature f, bool on) noexcept override { previews[static_cast<int>(f)] = on; }
  void setPluginsToSerialize(char const* const* paths, int32_t n) noexcept override {
    for (int32_t i = 0; i < n; ++i) serialize.push_back(paths[i]);
  }
  std::vector<IOptimizationProfile const*> profiles;  // as added, in order
  bool refuse_profile = false;
  int32_t addOptimizationProfile(IOptimizationProfile const* p) noexcept override {
    if (refuse_profile) return -1;
    profiles.push_back(p);
    return static_cast<int32_t>(profiles.size()) - 1;
  }
  void setDLACore(int32_t core) noexcept override { dla_core = core; }
  void setDefaultDeviceType(DeviceType d) noexcept override { device = static_cast<int>(d); }
};

const tam::TrtErrors& said(const std::string& message) {
  static std::string text;
  static const tam::TrtErrors errors{[] { return uint64_t{0}; }, [](uint64_t) { return text; }};
  text = message;
  return errors;
}

int flag(BuilderFlag f) { return static_cast<int>(f); }

// every_setting is every setting these headers and this flavour have.
tam::Settings every_setting() {
  tam::Settings s;
  s.has_tf32 = true;
  s.tf32 = false;
  s.sparsity = "enable";
  s.has_version_compatible = s.version_compatible = true;
  s.has_exclude_lean_runtime = s.exclude_lean_runtime = true;
  s.has_strip_weights = s.strip_weights = true;
  s.has_weight_streaming = s.weight_streaming = true;
  s.refit = "identical";
  s.memory_pools = {{"workspace", 1 << 30}, {"tactic-shared", 48 << 10}};
  s.tactic_sources = {"-jit-convolutions", "+edge-mask-convolutions"};
  s.has_max_aux_streams = true;
  s.max_aux_streams = 3;
  s.has_opt_level = true;
  s.opt_level = 4;
  s.profiling_verbosity = "detailed";
  s.hardware_compatibility = "ampere-plus";
  s.plugins_serialize = {"/p/a.so", "/p/b.so"};
  s.builder_flags = {"debug", "disable-timing-cache", "error-on-timing-cache-miss", "disable-compilation-cache"};
#if TAM_HEADERS_MINOR >= 16
  s.hardware_compatibility = "same-compute-capability";
  s.runtime_platform = "windows-amd64";
  s.has_max_tactics = true;
  s.max_tactics = 7;
  s.has_l2_limit_for_tiling = true;
  s.l2_limit_for_tiling = 4 << 20;
  s.has_tiling_optimization_level = true;
  s.tiling_optimization_level = 2;
  s.preview_features = {"+runtime-activation-resize-10-10", "-aliased-plugin-io-10-03"};
  for (const char* f : {"strict-nans", "monitor-memory", "editable-timing-cache", "distributive-independence"})
    s.builder_flags.push_back(f);
#endif
#if TAM_HAS_DLA
  s.memory_pools.insert(s.memory_pools.end(), {{"dla-sram", 1 << 20}, {"dla-local", 2 << 20}, {"dla-global", 3 << 20}});
  s.has_dla = s.dla.gpu_fallback = true;
  s.dla.core = 1;
#endif
#if defined(TAM_FLAVOR_RTX)
  s.builder_flags.push_back("require-user-allocation");
#endif
  return s;
}

void test_every_setting_reaches_its_setter() {
  RecordingConfig rec;
  ConfigOver config(&rec);
  const tam::Settings s = every_setting();
  check(!throws_with([&] { tam::check_settings_fit_flavour(tam::kFlavour, s); }, ""), "this flavour has every setting of every_setting");
  tam::apply_config(config, s, same_as_headers(), said(""));

  check(rec.flags_cleared.count(flag(BuilderFlag::kTF32)) == 1, "tf32: false clears kTF32");
  check(rec.flags_set.count(flag(BuilderFlag::kTF32)) == 0, "tf32: false does not set it");
  check(rec.flags_set.count(flag(BuilderFlag::kSPARSE_WEIGHTS)) == 1, "sparsity: enable sets kSPARSE_WEIGHTS");
  check(rec.flags_set.count(flag(BuilderFlag::kVERSION_COMPATIBLE)) == 1, "version-compatible");
  check(rec.flags_set.count(flag(BuilderFlag::kEXCLUDE_LEAN_RUNTIME)) == 1, "exclude-lean-runtime");
  check(rec.flags_set.count(flag(BuilderFlag::kSTRIP_PLAN)) == 1, "strip-weights sets kSTRIP_PLAN");
  check(rec.flags_set.count(flag(BuilderFlag::kWEIGHT_STREAMING)) == 1, "weight-streaming");
  check(rec.flags_set.count(flag(BuilderFlag::kREFIT_IDENTICAL)) == 1 && rec.flags_set.count(flag(BuilderFlag::kREFIT)) == 0,
        "refit: identical sets kREFIT_IDENTICAL only");
  check(rec.pools[static_cast<int>(MemoryPoolType::kWORKSPACE)] == (1u << 30), "memory-pools.workspace");
  check(rec.pools[static_cast<int>(MemoryPoolType::kTACTIC_SHARED_MEMORY)] == (48u << 10), "memory-pools.tactic-shared");
  const TacticSources jit = 1U << static_cast<uint32_t>(TacticSource::kJIT_CONVOLUTIONS);
  check(rec.tactics == (kAllTactics & ~jit), "tactic-sources: -jit-convolutions clears its bit, the rest stay");
  check(rec.aux == 3, "max-aux-streams");
  check(rec.opt_level == 4, "opt-level");
  check(rec.verbosity == static_cast<int>(ProfilingVerbosity::kDETAILED), "profiling-verbosity: detailed");
  check(rec.serialize == std::vector<std::string>{"/p/a.so", "/p/b.so"}, "plugins-serialize");
  for (BuilderFlag f : {BuilderFlag::kDEBUG, BuilderFlag::kDISABLE_TIMING_CACHE, BuilderFlag::kERROR_ON_TIMING_CACHE_MISS,
                        BuilderFlag::kDISABLE_COMPILATION_CACHE})
    check(rec.flags_set.count(flag(f)) == 1, ("builder-flags sets flag " + std::to_string(flag(f))).c_str());
#if TAM_HEADERS_MINOR >= 16
  check(rec.hardware == static_cast<int>(HardwareCompatibilityLevel::kSAME_COMPUTE_CAPABILITY), "hardware-compatibility");
  check(rec.platform == static_cast<int>(RuntimePlatform::kWINDOWS_AMD64), "runtime-platform: windows-amd64");
  check(rec.max_tactics == 7, "max-tactics");
  check(rec.l2 == (4 << 20), "l2-limit-for-tiling");
  check(rec.tiling == 2, "tiling-optimization-level");
  check(rec.previews.size() == 2 && rec.previews[static_cast<int>(PreviewFeature::kRUNTIME_ACTIVATION_RESIZE_10_10)] &&
            !rec.previews[static_cast<int>(PreviewFeature::kALIASED_PLUGIN_IO_10_03)],
        "preview-features: + turns on, - turns off");
  for (BuilderFlag f : {BuilderFlag::kSTRICT_NANS, BuilderFlag::kMONITOR_MEMORY, BuilderFlag::kEDITABLE_TIMING_CACHE,
                        BuilderFlag::kDISTRIBUTIVE_INDEPENDENCE})
    check(rec.flags_set.count(flag(f)) == 1, ("builder-flags sets flag " + std::to_string(flag(f))).c_str());
#else
  check(rec.hardware == static_cast<int>(HardwareCompatibilityLevel::kAMPERE_PLUS), "hardware-compatibility");
#endif
#if TAM_HAS_DLA
  check(rec.pools[static_cast<int>(MemoryPoolType::kDLA_MANAGED_SRAM)] == (1u << 20), "memory-pools.dla-sram");
  check(rec.pools[static_cast<int>(MemoryPoolType::kDLA_LOCAL_DRAM)] == (2u << 20), "memory-pools.dla-local");
  check(rec.pools[static_cast<int>(MemoryPoolType::kDLA_GLOBAL_DRAM)] == (3u << 20), "memory-pools.dla-global");
  check(rec.flags_set.count(flag(BuilderFlag::kGPU_FALLBACK)) == 1, "dla.gpu-fallback sets kGPU_FALLBACK");
  check(rec.dla_core == 1 && rec.device == static_cast<int>(DeviceType::kDLA), "dla: core and the DLA as default device");
#endif
#if defined(TAM_FLAVOR_RTX)
  check(rec.flags_set.count(flag(BuilderFlag::kREQUIRE_USER_ALLOCATION)) == 1, "builder-flags require-user-allocation");
#else
  check(throws_with([] { tam::check_settings_fit_flavour(tam::kFlavour, [] {
                      tam::Settings s;
                      s.builder_flags = {"require-user-allocation"};
                      return s;
                    }()); },
                    "builder-flags require-user-allocation: TensorRT"),
        "require-user-allocation is TensorRT-RTX's alone");
#endif
}

// Every value of the settings table that stands for an enumerator resolves
// exactly where the table says it exists: in these headers' flavour and from
// their 10.x minor on; elsewhere the lookup throws and yields no value.
void test_every_value_resolves_exactly_where_the_table_says() {
  int resolved = 0;
  for (const auto& spec : tam::value_specs()) {
    const bool flavour = spec.flavours.empty() ||
                         std::find(spec.flavours.begin(), spec.flavours.end(), tam::kFlavour) != spec.flavours.end();
    const bool here = flavour && spec.since <= TAM_HEADERS_MINOR;
    const bool resolves = !throws_with([&] { tam::enums::lookup(spec.key, spec.value); }, "");
    resolved += resolves;
    check(here == resolves, (std::string(spec.key) + " " + spec.value + (here ? " should resolve here" : " should not resolve here")).c_str());
  }
  check(resolved > 10, "most values resolve");
  check(throws_with([] { tam::enums::lookup("memory-pools", "l2"); }, "memory-pools: \"l2\" is unknown here"),
        "an unknown value throws; it never becomes another value");
}

// Each precision value this flavour takes (precision.h) sets the BuilderFlag
// the settings table names: none falls through to setting nothing.
void test_every_precision_value_sets_its_flag() {
  int set = 0;
  for (const auto& p : tam::allowed::precision) {
    std::vector<std::string> values;
    if (throws_with([&] { values = tam::precision_flags(tam::kFlavour, {p}, false); }, "")) continue;
    for (const auto& v : values) {
      const bool resolves = !throws_with([&] { check(tam::enums::precision(v).has_value(), ("precision " + v + " names a BuilderFlag").c_str()); }, "");
      check(resolves, ("precision " + p + ": " + v + " has a BuilderFlag in these headers").c_str());
      set += resolves;
    }
  }
#if defined(TAM_FLAVOR_TRT10)
  check(set >= 6, "fp16, bf16, int8, fp8, tf32 and best's three set flags on TensorRT 10");
#else
  check(set == 1, "only tf32 sets a flag on a strongly typed flavour");
#endif
}

void test_a_refused_setter_names_the_key_and_tensorrt() {
  RecordingConfig rec;
  rec.refuse_tactics = true;
  ConfigOver config(&rec);
  tam::Settings s;
  s.tactic_sources = {"-edge-mask-convolutions"};
  check(throws_with([&] { tam::apply_config(config, s, same_as_headers(), said("Error Code 3: no such source")); },
                    "tactic-sources: TensorRT refused the tactic sources: Error Code 3: no such source"),
        "setTacticSources returning false fails with the key and TensorRT's message");
}

// ------------------------------------------------------------ optimization profiles (profiles.h)

class TensorOver : public ITensor {
 public:
  explicit TensorOver(VTensor* impl) { mImpl = impl; }
};

// InputTensor is a network input of a name and dimensions (-1: dynamic).
class InputTensor : public VTensorDefaults {
 public:
  InputTensor(const char* name, std::vector<int64_t> dims) : name_(name), dims_(tam::to_dims(dims)) {}
  char const* getName() const noexcept override { return name_; }
  Dims getDimensions() const noexcept override { return dims_; }

 private:
  const char* name_;
  Dims dims_;
};

struct Input {
  Input(const char* name, std::vector<int64_t> dims) : fake(name, std::move(dims)), over(&fake) {}
  InputTensor fake;
  TensorOver over;
};

// InputNetwork is a network of inputs only: what add_profiles asks about.
class InputNetwork : public VNetworkDefinitionDefaults {
 public:
  explicit InputNetwork(std::vector<Input*> inputs) : inputs_(std::move(inputs)) {}
  int32_t getNbInputs() const noexcept override { return static_cast<int32_t>(inputs_.size()); }
  ITensor* getInput(int32_t i) const noexcept override { return &inputs_[i]->over; }

 private:
  std::vector<Input*> inputs_;
};

class NetworkOver : public INetworkDefinition {
 public:
  explicit NetworkOver(VNetworkDefinition* impl) { mImpl = impl; }
};

// RecordingProfile remembers the dimensions set for each input: min, opt, max.
class RecordingProfile : public VOptimizationProfileDefaults {
 public:
  std::map<std::string, std::array<std::vector<int64_t>, 3>> dims;
  bool refuse = false;
  bool setDimensions(char const* name, OptProfileSelector select, Dims const& d) noexcept override {
    if (refuse) return false;
    dims[name][static_cast<int>(select)] = std::vector<int64_t>(d.d, d.d + d.nbDims);
    return true;
  }
};

class ProfileOver : public IOptimizationProfile {
 public:
  explicit ProfileOver(VOptimizationProfile* impl) { mImpl = impl; }
};

// RecordingBuilder makes recording profiles and keeps them, in order made.
class RecordingBuilder : public VBuilderDefaults {
 public:
  std::vector<std::unique_ptr<RecordingProfile>> made;
  std::vector<std::unique_ptr<ProfileOver>> over;
  bool refuse_shapes = false;
  IOptimizationProfile* createOptimizationProfile() noexcept override {
    made.push_back(std::make_unique<RecordingProfile>());
    made.back()->refuse = refuse_shapes;
    over.push_back(std::make_unique<ProfileOver>(made.back().get()));
    return over.back().get();
  }
};

class BuilderOver : public IBuilder {
 public:
  explicit BuilderOver(VBuilder* impl) { mImpl = impl; }
};

tam::ShapeRange range(int64_t min, int64_t opt, int64_t max, int64_t width = 64) {
  return tam::ShapeRange{{min, width}, {opt, width}, {max, width}};
}

// A network of one dynamic input x [-1,64] and one static input s [1,4].
struct ProfileRig {
  Input x{"x", {-1, 64}}, s{"s", {1, 4}};
  InputNetwork net{{&x, &s}};
  NetworkOver network{&net};
  RecordingBuilder made;
  BuilderOver builder{&made};
  RecordingConfig rec;
  ConfigOver config{&rec};

  void add(const std::vector<tam::Profile>& profiles, const std::string& trt_error = "") {
    tam::add_profiles(builder, network, config, profiles, "TensorRT", said(trt_error));
  }
};

void test_each_profile_is_added_in_order() {
  ProfileRig rig;
  rig.add({{{"x", range(1, 2, 4)}}, {{"x", range(4, 8, 16)}}, {{"x", range(16, 16, 32)}}});
  check(rig.made.made.size() == 3 && rig.rec.profiles.size() == 3, "three profiles made and added");
  bool in_order = rig.rec.profiles.size() == 3;
  for (size_t i = 0; in_order && i < 3; ++i) in_order = rig.rec.profiles[i] == rig.made.over[i].get();
  check(in_order, "added in the order written: profile i is the builder's index i");
  if (rig.made.made.size() != 3) return;
  auto& first = rig.made.made[0]->dims;
  auto& third = rig.made.made[2]->dims;
  check(first.size() == 1 && first["x"][0] == std::vector<int64_t>{1, 64} && first["x"][1] == std::vector<int64_t>{2, 64} &&
            first["x"][2] == std::vector<int64_t>{4, 64},
        "profile 0 has x's min, opt and max, and nothing for the static input");
  check(rig.made.made[1]->dims["x"][1] == std::vector<int64_t>{8, 64}, "profile 1 has its own opt");
  check(third["x"][0] == std::vector<int64_t>{16, 64} && third["x"][2] == std::vector<int64_t>{32, 64}, "profile 2 has its own bounds");

  ProfileRig one;
  one.add({{{"x", range(1, 2, 4)}}});
  check(one.rec.profiles.size() == 1, "one profile (shapes) is one builder profile");
}

void test_profile_errors_name_the_profile() {
  auto fails = [](const std::vector<tam::Profile>& profiles, const std::string& want) {
    ProfileRig rig;
    return throws_with([&] { rig.add(profiles); }, want);
  };
  check(fails({}, "input \"x\" has a dynamic shape [-1,64] (-1 = dynamic); give shapes.x with min, opt and max"),
        "a dynamic input without a profile asks for shapes");
  check(fails({{{"x", range(1, 2, 4)}}, {}}, "give profiles[1].x with min, opt and max"),
        "a dynamic input one of several profiles lacks names that profile");
  check(fails({{{"x", range(1, 2, 4)}}, {{"x", range(4, 8, 16)}}, {{"x", range(4, 8, 16)}, {"z", range(1, 1, 1)}}},
              "profiles[2].z: the model has no input of that name; its inputs: x, s"),
        "a name the model lacks, in a later profile");
  check(fails({{{"x", range(1, 2, 4)}, {"s", tam::ShapeRange{{1, 4}, {1, 4}, {1, 4}}}}}, "shapes.s: input \"s\" is not dynamic"),
        "shapes for a static input");
  check(fails({{{"x", range(1, 2, 4)}}, {{"x", range(4, 8, 16, 32)}}}, "profiles[1].x: dimension 1 of \"x\" is fixed at 64"),
        "a fixed dimension, in a later profile");
  check(fails({{{"x", range(4, 2, 8)}}}, "shapes.x: need 0 <= min <= opt <= max"), "min above opt");

  ProfileRig refused;
  refused.made.refuse_shapes = true;
  check(throws_with([&] { refused.add({{{"x", range(1, 2, 4)}}}, "Error Code 3: bad dims"); },
                    "shapes.x: TensorRT refused the shape: Error Code 3: bad dims"),
        "a refused shape names the profile's input and TensorRT's message");
  ProfileRig not_added;
  not_added.rec.refuse_profile = true;
  check(throws_with([&] { not_added.add({{{"x", range(1, 2, 4)}}, {{"x", range(4, 8, 16)}}}, "Error Code 4: too many"); },
                    "profiles[0]: the optimization profile was refused: Error Code 4: too many"),
        "a refused profile names it and TensorRT's message");
}

void test_a_static_network_gets_no_profile() {
  Input s{"s", {1, 4}};
  InputNetwork net{{&s}};
  NetworkOver network{&net};
  RecordingBuilder made;
  BuilderOver builder{&made};
  RecordingConfig rec;
  ConfigOver config{&rec};
  tam::add_profiles(builder, network, config, {}, "TensorRT", said(""));
  check(rec.profiles.empty(), "no dynamic input, no profile");
}

#if defined(TAM_FLAVOR_TRT10)
void test_tensorrt10_only_settings() {
  RecordingConfig rec;
  ConfigOver config(&rec);
  tam::Settings s;
  s.precision_constraints = "obey";
  s.tactic_sources = {"+cublas", "-cudnn"};
  s.preview_features = {"+profile-sharing-0806"};
#if TAM_HEADERS_MINOR >= 16
  s.preview_features.push_back("+multidevice-runtime-10-16");
#endif
  tam::apply_config(config, s, same_as_headers(), said(""));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  check(rec.flags_set.count(flag(BuilderFlag::kOBEY_PRECISION_CONSTRAINTS)) == 1, "precision-constraints: obey");
  const TacticSources cudnn = 1U << static_cast<uint32_t>(TacticSource::kCUDNN);
  const TacticSources cublas = 1U << static_cast<uint32_t>(TacticSource::kCUBLAS);
  check((rec.tactics & cublas) != 0 && (rec.tactics & cudnn) == 0, "tactic-sources: +cublas,-cudnn");
  check(rec.previews[static_cast<int>(PreviewFeature::kPROFILE_SHARING_0806)], "the 10.x-only preview feature");
#if TAM_HEADERS_MINOR >= 16
  check(rec.previews[static_cast<int>(PreviewFeature::kMULTIDEVICE_RUNTIME_10_16)], "multidevice-runtime-10-16");
#endif
#pragma GCC diagnostic pop

  rec = RecordingConfig();
  s = tam::Settings();
  s.precision_constraints = "prefer";
  tam::apply_config(config, s, same_as_headers(), said(""));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  check(rec.flags_set.count(flag(BuilderFlag::kPREFER_PRECISION_CONSTRAINTS)) == 1, "precision-constraints: prefer");
#pragma GCC diagnostic pop
  rec = RecordingConfig();
  s.precision_constraints = "none";
  tam::apply_config(config, s, same_as_headers(), said(""));
  check(rec.flags_set.empty(), "precision-constraints: none sets nothing");
}

#if TAM_HEADERS_MINOR >= 16
// A 10.3 library (JetPack 6) lacks the calls of 10.8: the build is refused
// before any of them is made, and apply_config makes no call at all.
void test_a_library_too_old_for_a_setting() {
  const tam::Settings s = every_setting();
  const tam::Gate gate(16, 3);
  const std::string why = gate.refusal(tam::versioned_settings(s), "libnvinfer.so.10 is TensorRT 10.3.0.26", "10.16.0.72");
  check(why.find("l2-limit-for-tiling (needs 10.8)") != std::string::npos &&
            why.find("max-tactics (needs 10.8)") != std::string::npos &&
            why.find("builder-flags strict-nans (needs 10.8)") != std::string::npos &&
            why.find("runtime-platform") == std::string::npos,
        ("the refusal names what 10.3 lacks, and only that: " + why).c_str());
  RecordingConfig rec;
  ConfigOver config(&rec);
  check(throws_with([&] { tam::apply_config(config, s, gate, said("")); }, "needs TensorRT 10.8"),
        "apply_config refuses too, should it ever be reached");
  check(rec.l2 == -1 && rec.max_tactics == -1 && rec.flags_set.empty() && rec.flags_cleared.empty() && rec.pools.empty(),
        "no call at all was made");
}
#endif

// FakeTensor is a tensor of a type, a shape tensor or not.
class FakeTensor : public VTensorDefaults {
 public:
  FakeTensor(DataType type, bool shape) : type_(type), shape_(shape) {}
  DataType getType() const noexcept override { return type_; }
  bool isShapeTensor() const noexcept override { return shape_; }

 private:
  DataType type_;
  bool shape_;
};

// Tensor is a FakeTensor with the ITensor over it.
struct Tensor {
  Tensor(DataType type, bool shape) : fake(type, shape), over(&fake) {}
  FakeTensor fake;
  TensorOver over;
};

// RecordingLayer is a layer of a type, precision, inputs and outputs, that
// remembers the types set on it.
class RecordingLayer : public VLayerDefaults {
 public:
  RecordingLayer(const char* name, LayerType type, DataType precision, std::vector<Tensor*> in, std::vector<Tensor*> out)
      : name_(name), type_(type), precision_(precision), in_(std::move(in)), out_(std::move(out)) {}
  char const* getName() const noexcept override { return name_; }
  LayerType getType() const noexcept override { return type_; }
  DataType getPrecision() const noexcept override { return precision_; }
  int32_t getNbInputs() const noexcept override { return static_cast<int32_t>(in_.size()); }
  ITensor* getInput(int32_t i) const noexcept override { return in_[i] ? &in_[i]->over : nullptr; }
  int32_t getNbOutputs() const noexcept override { return static_cast<int32_t>(out_.size()); }
  ITensor* getOutput(int32_t i) const noexcept override { return &out_[i]->over; }
  void setPrecision(DataType t) noexcept override { precision = static_cast<int>(t); }
  void setOutputType(int32_t i, DataType t) noexcept override { outputs[i] = static_cast<int>(t); }
  int precision = -1;
  std::map<int32_t, int> outputs;

 private:
  const char* name_;
  LayerType type_;
  DataType precision_;
  std::vector<Tensor*> in_, out_;
};

class LayerOver : public ILayer {
 public:
  explicit LayerOver(VLayer* impl) { mLayer = impl; }
};

// A constant layer: an IConstantLayer, whose weights are of a type.
class FakeConstant : public VConstantLayerDefaults {
 public:
  explicit FakeConstant(DataType type) : type_(type) {}
  Weights getWeights() const noexcept override { return Weights{type_, nullptr, 0}; }

 private:
  DataType type_;
};

class ConstantOver : public IConstantLayer {
 public:
  ConstantOver(VLayer* layer, VConstantLayer* impl) {
    mLayer = layer;
    mImpl = impl;
  }
};

// RecordingNetwork is a network of layers added to it, in order.
class RecordingNetwork : public VNetworkDefinitionDefaults {
 public:
  RecordingLayer& add(const char* name, std::vector<Tensor*> in = {}, std::vector<Tensor*> out = {},
                      DataType precision = DataType::kFLOAT, LayerType type = LayerType::kCONVOLUTION) {
    if (out.empty()) out = {&float_};
    layers_.push_back(std::make_unique<RecordingLayer>(name, type, precision, std::move(in), std::move(out)));
    plain_.push_back(std::make_unique<LayerOver>(layers_.back().get()));
    order_.push_back(plain_.back().get());
    return *layers_.back();
  }
  RecordingLayer& add_constant(const char* name, DataType weights, DataType output) {
    Tensor* out = output == DataType::kFLOAT ? &float_ : output == DataType::kINT32 ? &int32_ : &int64_;
    layers_.push_back(std::make_unique<RecordingLayer>(name, LayerType::kCONSTANT, DataType::kFLOAT, std::vector<Tensor*>{},
                                                       std::vector<Tensor*>{out}));
    constants_.push_back(std::make_unique<FakeConstant>(weights));
    constant_.push_back(std::make_unique<ConstantOver>(layers_.back().get(), constants_.back().get()));
    order_.push_back(constant_.back().get());
    return *layers_.back();
  }
  int32_t getNbLayers() const noexcept override { return static_cast<int32_t>(order_.size()); }
  ILayer* getLayer(int32_t i) const noexcept override { return order_[i]; }

  Tensor float_{DataType::kFLOAT, false}, int32_{DataType::kINT32, false}, int64_{DataType::kINT64, false},
      shape_{DataType::kINT64, true};

 private:
  std::vector<std::unique_ptr<RecordingLayer>> layers_;
  std::vector<std::unique_ptr<FakeConstant>> constants_;
  std::vector<std::unique_ptr<LayerOver>> plain_;
  std::vector<std::unique_ptr<ConstantOver>> constant_;
  std::vector<ILayer*> order_;  // the layers in the order added
};

const int kFloat = static_cast<int>(DataType::kFLOAT), kHalf = static_cast<int>(DataType::kHALF),
          kInt8 = static_cast<int>(DataType::kINT8), kBF16 = static_cast<int>(DataType::kBF16);

void test_layer_types() {
  RecordingNetwork rec;
  RecordingLayer& conv = rec.add("/conv1/Conv", {&rec.float_}, {&rec.float_, &rec.float_});
  RecordingLayer& fc = rec.add("/fc/Gemm", {&rec.float_}, {&rec.float_, &rec.float_});
  NetworkOver network(&rec);
  tam::Settings s;
  s.layer_precisions = {{"/conv1/*", "fp32"}};
  s.layer_output_types = {{"*", "fp16"}};
  tam::apply_layer_types(network, s);
  check(conv.precision == kFloat && fc.precision == -1, "layer-precisions: the glob picks /conv1/Conv only (\"*\" crosses \"/\")");
  check(conv.outputs.size() == 2 && fc.outputs[1] == kHalf, "layer-output-types: every output of every matching layer");
  s.layer_precisions = {{"/conv2/*", "int8"}};
  check(throws_with([&] { tam::apply_layer_types(network, s); }, "layer-precisions: \"/conv2/*\" matches no layer"),
        "a glob that matches nothing is an error");
  s.layer_precisions = {{"/conv?/Conv", "int8"}};
  check(throws_with([&] { tam::apply_layer_types(network, s); }, "layer-precisions: \"/conv?/Conv\" matches no layer"),
        "? is a character of a name, as in trtexec: it matches no layer here");
}

// The precedence reaches the network: the exact name wins over * written
// first (trtexec's conv1:fp32,*:fp16 in either order), and the first of two
// globs wins.
void test_layer_precedence_on_a_network() {
  RecordingNetwork rec;
  RecordingLayer& conv = rec.add("/conv1/Conv", {&rec.float_});
  RecordingLayer& fc = rec.add("/fc/Gemm", {&rec.float_});
  NetworkOver network(&rec);
  tam::Settings s;
  s.layer_precisions = {{"*", "fp16"}, {"/conv1/Conv", "fp32"}};
  s.layer_output_types = {{"/conv1/*", "int8"}, {"*Conv", "fp32"}, {"*", "bf16"}};
  tam::apply_layer_types(network, s);
  check(conv.precision == kFloat, "the exact name wins over * written before it");
  check(fc.precision == kHalf, "* covers the other layer");
  check(conv.outputs[0] == kInt8, "the first written of two globs wins");
  check(fc.outputs[0] == kBF16, "* where no other pattern names the layer");
}

// A wildcard gives its type only to the layers trtexec would give it to
// (sampleEngines.cpp, setLayerPrecisions and setLayerOutputTypes): not to a
// layer computing on integers, booleans or shapes. An exact name applies as
// written.
void test_wildcards_skip_what_trtexec_skips() {
  RecordingNetwork rec;
  RecordingLayer& conv = rec.add("conv", {&rec.float_});
  RecordingLayer& gather = rec.add("gather_i32", {&rec.float_}, {&rec.int32_}, DataType::kINT32, LayerType::kGATHER);
  RecordingLayer& index = rec.add("where_bool", {&rec.float_}, {&rec.float_}, DataType::kBOOL, LayerType::kSELECT);
  RecordingLayer& casts = rec.add("cast_ints", {&rec.int32_}, {&rec.int64_}, DataType::kFLOAT, LayerType::kCAST);
  RecordingLayer& on_shape = rec.add("reshape_on_shape", {&rec.shape_}, {&rec.float_}, DataType::kFLOAT, LayerType::kSHUFFLE);
  RecordingLayer& shape_out = rec.add("shape_out", {&rec.float_}, {&rec.float_, &rec.shape_}, DataType::kFLOAT, LayerType::kSHAPE);
  RecordingLayer& i64_const = rec.add_constant("const_i64", DataType::kINT64, DataType::kINT64);
  RecordingLayer& i32_const = rec.add_constant("const_i32", DataType::kINT32, DataType::kINT32);
  RecordingLayer& f_const = rec.add_constant("const_f", DataType::kFLOAT, DataType::kFLOAT);
  RecordingLayer& exact = rec.add("exact_i32", {&rec.int32_}, {&rec.int32_}, DataType::kINT32, LayerType::kGATHER);
  NetworkOver network(&rec);
  tam::Settings s;
  s.layer_precisions = {{"*", "fp16"}, {"exact_i32", "fp16"}};
  s.layer_output_types = {{"*", "fp16"}, {"exact_i32", "fp16"}};
  tam::apply_layer_types(network, s);

  check(conv.precision == kHalf && conv.outputs[0] == kHalf, "a float layer takes the wildcard's type");
  check(gather.precision == -1 && gather.outputs.empty(), "a layer of int32 precision keeps its type");
  check(index.precision == -1 && index.outputs.empty(), "nor one of bool precision");
  check(casts.precision == -1, "layer-precisions skips a layer from integers to integers");
  check(casts.outputs[0] == kHalf, "layer-output-types does not: trtexec asks only the layer's precision and constants");
  check(on_shape.precision == -1, "layer-precisions skips a layer whose first input is a shape tensor");
  check(on_shape.outputs[0] == kHalf, "its output is no shape tensor: layer-output-types sets it");
  check(shape_out.precision == kHalf, "a layer of float inputs takes the precision");
  check(shape_out.outputs.size() == 1 && shape_out.outputs[0] == kHalf, "but its shape-tensor output keeps its type");
  check(i64_const.precision == -1, "a constant of int64 weights keeps its precision");
  check(i64_const.outputs[0] == kHalf, "layer-output-types skips only int32 constants, as trtexec");
  check(i32_const.precision == -1 && i32_const.outputs.empty(), "a constant of int32 weights keeps both");
  check(f_const.precision == kHalf && f_const.outputs[0] == kHalf, "a float constant takes both");
  check(exact.precision == kHalf && exact.outputs[0] == kHalf, "an exact name applies as written, whatever the layer");
}
#elif defined(TAM_FLAVOR_TRT11)
void test_tensorrt11_refuses_tensorrt10_settings() {
  auto refused = [](void (*set)(tam::Settings&), const std::string& want) {
    tam::Settings s;
    set(s);
    return throws_with([&] { tam::check_settings_fit_flavour(tam::Flavour::kTRT11, s); }, want);
  };
  check(refused([](tam::Settings& s) { s.precision_constraints = "obey"; },
                "precision-constraints: TensorRT 11.x has no such setting; only TensorRT 10.x"),
        "precision-constraints is 10.x only");
  check(refused([](tam::Settings& s) { s.has_strongly_typed = true; }, "strongly-typed: false: TensorRT 11.x"),
        "11.x cannot turn strong typing off");
  check(refused([](tam::Settings& s) { s.int8_calibration_cache = "c"; }, "int8-calibration-cache: TensorRT 11.x"),
        "calibration is 10.x only");
  check(refused([](tam::Settings& s) { s.tactic_sources = {"+cudnn"}; }, "tactic-sources cudnn: TensorRT 11.x"),
        "cudnn is 10.x only");
  tam::Settings typed;
  typed.has_strongly_typed = typed.strongly_typed = true;
  check(!throws_with([&] { tam::check_settings_fit_flavour(tam::Flavour::kTRT11, typed); }, ""),
        "strongly-typed: true is fine on 11.x");
}
#elif defined(TAM_FLAVOR_RTX)
void test_tensorrt_rtx_refuses_what_it_lacks() {
  tam::Settings dla;
  dla.has_dla = true;
  check(throws_with([&] { tam::check_settings_fit_flavour(tam::Flavour::kRTX, dla); },
                    "dla: TensorRT-RTX 1.x has no such setting; only backend tensorrt has it (TensorRT-RTX has no DLA)"),
        "no DLA");
  tam::Settings pool;
  pool.memory_pools = {{"dla-sram", 1}};
  check(throws_with([&] { tam::check_settings_fit_flavour(tam::Flavour::kRTX, pool); }, "memory-pools.dla-sram: TensorRT-RTX"),
        "no DLA pools");
}
#endif

}  // namespace

int main() {
  test_every_setting_reaches_its_setter();
  test_every_value_resolves_exactly_where_the_table_says();
  test_a_refused_setter_names_the_key_and_tensorrt();
  test_every_precision_value_sets_its_flag();
  test_each_profile_is_added_in_order();
  test_profile_errors_name_the_profile();
  test_a_static_network_gets_no_profile();
#if defined(TAM_FLAVOR_TRT10)
  test_tensorrt10_only_settings();
#if TAM_HEADERS_MINOR >= 16
  test_a_library_too_old_for_a_setting();
#endif
  test_layer_types();
  test_layer_precedence_on_a_network();
  test_wildcards_skip_what_trtexec_skips();
#elif defined(TAM_FLAVOR_TRT11)
  test_tensorrt11_refuses_tensorrt10_settings();
#elif defined(TAM_FLAVOR_RTX)
  test_tensorrt_rtx_refuses_what_it_lacks();
#endif
  return tamtest::summary();
}
