// builder_settings.h: applies a request's tam::Settings (request.h) to the
// builder, network and builder config, for the flavour shim.cc is compiled
// for. Included by shim.cc after its flavour checks.
//
// Every setter whose TensorRT call returns bool is checked: a refusal throws
// naming the matrix key and TensorRT's last message. Calls and enum values
// newer than 10.0 are compiled only where the headers have them
// (TAM_HEADERS_MINOR) and made only where the loaded library has them
// (tam::Gate, version_gate.h; versioned_settings lists them).
#ifndef TAM_BACKENDS_BUILDER_SETTINGS_H
#define TAM_BACKENDS_BUILDER_SETTINGS_H

#include <fnmatch.h>
#include <sys/stat.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <NvInfer.h>

#include "files.h"
#include "precision.h"
#include "request.h"
#include "version_gate.h"

// The 10.x minor of the headers: every call exists in 11.x and TensorRT-RTX.
#if defined(TAM_FLAVOR_TRT10)
#define TAM_HEADERS_MINOR NV_TENSORRT_MINOR
#else
#define TAM_HEADERS_MINOR 1000
#endif

namespace tam {

// TrtErrors reads the errors TensorRT logs; the shim backs it with its
// logger (host_log.h's error_mark and errors_since).
struct TrtErrors {
  std::function<uint64_t()> mark;
  std::function<std::string(uint64_t)> since;
};

[[noreturn]] inline void refused(const std::string& key, const std::string& what, const std::string& said) {
  throw std::runtime_error(key + ": TensorRT refused " + what + (said.empty() ? std::string() : ": " + said));
}

// checked makes a setter call that returns false on refusal, and throws
// naming the key and what TensorRT logged during the call.
template <typename Call>
void checked(const TrtErrors& errors, const std::string& key, const std::string& what, Call call) {
  const uint64_t mark = errors.mark();
  if (!call()) refused(key, what, errors.since(mark));
}

// check_settings_fit_flavour refuses keys the flavour lacks, naming which
// flavour has them. The matrix already refuses most of them for
// tensorrt-rtx; the TensorRT 10/11 split is only known here.
inline void check_settings_fit_flavour(Flavour flavour, const Settings& s) {
  const bool ten = flavour == Flavour::kTensorRT10;
  auto only10 = [&](bool used, const std::string& key) {
    if (used && !ten)
      throw std::runtime_error(key + ": " + flavour_name(flavour) +
                               " has no such setting; only TensorRT 10.x (backend tensorrt) has it");
  };
  only10(s.has_strongly_typed && !s.strongly_typed, "strongly-typed: false");
  only10(!s.precision_constraints.empty(), "precision-constraints");
  only10(!s.layer_precisions.empty(), "layer-precisions");
  only10(!s.layer_output_types.empty(), "layer-output-types");
  only10(!s.int8_calibration_cache.empty(), "int8-calibration-cache");
  for (const auto& t : s.tactic_sources) {
    const std::string name = t.substr(1);
    only10(name == "cublas" || name == "cublas-lt" || name == "cudnn", "tactic-sources " + name);
  }
  for (const auto& p : s.preview_features) {
    const std::string name = p.substr(1);
    only10(name == "profile-sharing-0806" || name == "multidevice-runtime-10-16", "preview-features " + name);
  }
  for (const auto& f : s.builder_flags)
    if (f == "require-user-allocation" && flavour != Flavour::kTensorRTRTX)
      throw std::runtime_error("builder-flags require-user-allocation: " + std::string(flavour_name(flavour)) +
                               " has no such flag; only TensorRT-RTX has it");
  if (flavour == Flavour::kTensorRTRTX) {
    if (s.has_dla) throw std::runtime_error("dla: TensorRT-RTX has no DLA; only backend tensorrt (on Jetson) has it");
    for (const auto& [pool, size] : s.memory_pools)
      if (pool.rfind("dla-", 0) == 0)
        throw std::runtime_error("memory-pools." + pool + ": TensorRT-RTX has no DLA pools; only backend tensorrt has them");
  }
}

// The 10.x minor versions that added calls or values this file uses. They
// are conservative where the release notes were not at hand: a too-high
// number refuses a setting an older library might have had, never the
// reverse, which would call past the end of its method table.
constexpr VersionedSetting kL2Limit{"l2-limit-for-tiling", 8};
constexpr VersionedSetting kRuntimePlatform{"runtime-platform", 3};
constexpr VersionedSetting kMaxTactics{"max-tactics", 8};
constexpr VersionedSetting kSameComputeCapability{"hardware-compatibility: same-compute-capability", 8};
constexpr VersionedSetting kRefitIndividual{"refit: individual", 8};
constexpr VersionedSetting kAliasedPluginIO{"preview-features aliased-plugin-io-10-03", 3};
constexpr VersionedSetting kActivationResize{"preview-features runtime-activation-resize-10-10", 10};
constexpr VersionedSetting kMultiDevice{"preview-features multidevice-runtime-10-16", 16};
constexpr VersionedSetting kStrictNans{"builder-flags strict-nans", 8};
constexpr VersionedSetting kMonitorMemory{"builder-flags monitor-memory", 8};
constexpr VersionedSetting kEditableTimingCache{"builder-flags editable-timing-cache", 8};
constexpr VersionedSetting kDistributiveIndependence{"builder-flags distributive-independence", 16};

// versioned_settings lists the settings of s whose calls arrived after 10.0.
inline std::vector<VersionedSetting> versioned_settings(const BuildRequest& r) {
  const Settings& s = r.settings;
  std::vector<VersionedSetting> out;
  if (r.has_tiling_level) out.push_back(kTilingLevel);
  if (s.has_l2_limit_for_tiling) out.push_back(kL2Limit);
  if (!s.runtime_platform.empty()) out.push_back(kRuntimePlatform);
  if (s.has_max_tactics) out.push_back(kMaxTactics);
  if (s.hardware_compatibility == "same-compute-capability") out.push_back(kSameComputeCapability);
  if (s.refit == "individual") out.push_back(kRefitIndividual);
  for (const auto& p : s.preview_features) {
    const std::string name = p.substr(1);
    if (name == "aliased-plugin-io-10-03") out.push_back(kAliasedPluginIO);
    if (name == "runtime-activation-resize-10-10") out.push_back(kActivationResize);
    if (name == "multidevice-runtime-10-16") out.push_back(kMultiDevice);
  }
  for (const auto& f : s.builder_flags) {
    if (f == "strict-nans") out.push_back(kStrictNans);
    if (f == "monitor-memory") out.push_back(kMonitorMemory);
    if (f == "editable-timing-cache") out.push_back(kEditableTimingCache);
    if (f == "distributive-independence") out.push_back(kDistributiveIndependence);
  }
  return out;
}

inline bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// load_plugins loads plugins and plugins-serialize into the builder's
// registry; it runs before the model is parsed so the parser finds them.
inline void load_plugins(nvinfer1::IBuilder& builder, const Settings& s, const TrtErrors& errors) {
  auto load = [&](const std::string& key, const std::string& path) {
    if (!file_exists(path)) throw std::runtime_error(key + ": plugin library " + path + " does not exist");
    checked(errors, key, "plugin library " + path,
            [&] { return builder.getPluginRegistry().loadLibrary(path.c_str()) != nullptr; });
  };
  for (const auto& p : s.plugins) load("plugins", p);
  for (const auto& p : s.plugins_serialize) load("plugins-serialize", p);
}

#if defined(TAM_FLAVOR_TRT10)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
inline nvinfer1::DataType layer_type(const std::string& t) {
  using D = nvinfer1::DataType;
  if (t == "fp32") return D::kFLOAT;
  if (t == "fp16") return D::kHALF;
  if (t == "bf16") return D::kBF16;
  if (t == "int8") return D::kINT8;
  if (t == "int32") return D::kINT32;
  if (t == "int64") return D::kINT64;
  if (t == "fp8") return D::kFP8;
  if (t == "int4") return D::kINT4;
  if (t == "uint8") return D::kUINT8;
  return D::kBOOL;  // request.h allows nothing else
}

// apply_layer_types sets layer-precisions and layer-output-types on every
// layer whose name matches; a glob matching no layer is an error, since it
// is almost always a misspelt name.
inline void apply_layer_types(nvinfer1::INetworkDefinition& network, const Settings& s) {
  auto each = [&](const std::string& key, const std::vector<std::pair<std::string, std::string>>& globs, bool outputs) {
    for (const auto& [glob, type] : globs) {
      int32_t matched = 0;
      for (int32_t i = 0; i < network.getNbLayers(); ++i) {
        nvinfer1::ILayer* layer = network.getLayer(i);
        if (fnmatch(glob.c_str(), layer->getName(), 0) != 0) continue;
        ++matched;
        if (!outputs) {
          layer->setPrecision(layer_type(type));
          continue;
        }
        for (int32_t k = 0; k < layer->getNbOutputs(); ++k) layer->setOutputType(k, layer_type(type));
      }
      if (matched == 0) throw std::runtime_error(key + ": \"" + glob + "\" matches no layer of the model");
    }
  };
  each("layer-precisions", s.layer_precisions, false);
  each("layer-output-types", s.layer_output_types, true);
}

// CacheOnlyCalibrator serves a calibration cache and has no data: TensorRT
// reads the scales from the cache and never asks for a batch.
class CacheOnlyCalibrator : public nvinfer1::IInt8EntropyCalibrator2 {
 public:
  explicit CacheOnlyCalibrator(const std::string& path) : cache_(read_file(path)) {
    if (!file_exists(path) || cache_.empty())
      throw std::runtime_error("int8-calibration-cache: " + path + " is missing or empty");
  }
  int32_t getBatchSize() const noexcept override { return 1; }
  bool getBatch(void*[], char const*[], int32_t) noexcept override { return false; }
  void const* readCalibrationCache(std::size_t& length) noexcept override {
    length = cache_.size();
    return cache_.data();
  }
  void writeCalibrationCache(void const*, std::size_t) noexcept override {}

 private:
  std::vector<char> cache_;
};
#pragma GCC diagnostic pop
#endif

// set_aux_streams calls setMaxAuxStreams, which returns void in 10.x and
// bool in 11.x and TensorRT-RTX.
template <typename Config>
void set_aux_streams(Config& config, int32_t n, const TrtErrors& errors) {
  if constexpr (std::is_void_v<decltype(config.setMaxAuxStreams(n))>) {
    config.setMaxAuxStreams(n);
  } else {
    checked(errors, "max-aux-streams", std::to_string(n), [&] { return config.setMaxAuxStreams(n); });
  }
}

inline nvinfer1::MemoryPoolType pool_type(const std::string& name) {
  using M = nvinfer1::MemoryPoolType;
  if (name == "workspace") return M::kWORKSPACE;
  if (name == "tactic-shared") return M::kTACTIC_SHARED_MEMORY;
  if (name == "dla-sram") return M::kDLA_MANAGED_SRAM;
  if (name == "dla-local") return M::kDLA_LOCAL_DRAM;
  return M::kDLA_GLOBAL_DRAM;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
inline nvinfer1::TacticSources tactic_bit(const std::string& name) {
  using T = nvinfer1::TacticSource;
  T t = T::kJIT_CONVOLUTIONS;
  if (name == "edge-mask-convolutions") t = T::kEDGE_MASK_CONVOLUTIONS;
#if defined(TAM_FLAVOR_TRT10)
  if (name == "cublas") t = T::kCUBLAS;
  if (name == "cublas-lt") t = T::kCUBLAS_LT;
  if (name == "cudnn") t = T::kCUDNN;
#endif
  return 1U << static_cast<uint32_t>(t);
}

inline void apply_preview_feature(nvinfer1::IBuilderConfig& config, const std::string& toggle, const Gate& gate) {
  using P = nvinfer1::PreviewFeature;
  const bool on = toggle[0] == '+';
  const std::string name = toggle.substr(1);
  (void)gate;
  (void)on;
#if TAM_HEADERS_MINOR >= 3
  if (name == "aliased-plugin-io-10-03" && gate.allows(kAliasedPluginIO)) config.setPreviewFeature(P::kALIASED_PLUGIN_IO_10_03, on);
#endif
#if TAM_HEADERS_MINOR >= 10
  if (name == "runtime-activation-resize-10-10" && gate.allows(kActivationResize))
    config.setPreviewFeature(P::kRUNTIME_ACTIVATION_RESIZE_10_10, on);
#endif
#if defined(TAM_FLAVOR_TRT10)
  if (name == "profile-sharing-0806") config.setPreviewFeature(P::kPROFILE_SHARING_0806, on);
#if TAM_HEADERS_MINOR >= 16
  if (name == "multidevice-runtime-10-16" && gate.allows(kMultiDevice)) config.setPreviewFeature(P::kMULTIDEVICE_RUNTIME_10_16, on);
#endif
#endif
}

// apply_builder_flags sets the builder-flags key's flags.
inline void apply_builder_flags(nvinfer1::IBuilderConfig& config, const std::vector<std::string>& flags, const Gate& gate) {
  using F = nvinfer1::BuilderFlag;
  (void)gate;
  for (const auto& f : flags) {
    if (f == "debug") config.setFlag(F::kDEBUG);
    if (f == "disable-timing-cache") config.setFlag(F::kDISABLE_TIMING_CACHE);
    if (f == "error-on-timing-cache-miss") config.setFlag(F::kERROR_ON_TIMING_CACHE_MISS);
    if (f == "disable-compilation-cache") config.setFlag(F::kDISABLE_COMPILATION_CACHE);
#if TAM_HEADERS_MINOR >= 8
    if (f == "strict-nans" && gate.allows(kStrictNans)) config.setFlag(F::kSTRICT_NANS);
    if (f == "monitor-memory" && gate.allows(kMonitorMemory)) config.setFlag(F::kMONITOR_MEMORY);
    if (f == "editable-timing-cache" && gate.allows(kEditableTimingCache)) config.setFlag(F::kEDITABLE_TIMING_CACHE);
#endif
#if TAM_HEADERS_MINOR >= 16
    if (f == "distributive-independence" && gate.allows(kDistributiveIndependence))
      config.setFlag(F::kDISTRIBUTIVE_INDEPENDENCE);
#endif
#if defined(TAM_FLAVOR_RTX)
    if (f == "require-user-allocation") config.setFlag(F::kREQUIRE_USER_ALLOCATION);
#endif
  }
}

// apply_flags sets the BuilderFlags the settings ask for.
inline void apply_flags(nvinfer1::IBuilderConfig& config, const Settings& s, const Gate& gate) {
  using F = nvinfer1::BuilderFlag;
  (void)gate;
  if (s.has_tf32) s.tf32 ? config.setFlag(F::kTF32) : config.clearFlag(F::kTF32);
  if (s.sparsity == "enable") config.setFlag(F::kSPARSE_WEIGHTS);
  if (s.sparsity == "disable") config.clearFlag(F::kSPARSE_WEIGHTS);
  if (s.version_compatible) config.setFlag(F::kVERSION_COMPATIBLE);
  if (s.exclude_lean_runtime) config.setFlag(F::kEXCLUDE_LEAN_RUNTIME);
  if (s.strip_weights) config.setFlag(F::kSTRIP_PLAN);
  if (s.weight_streaming) config.setFlag(F::kWEIGHT_STREAMING);
  if (s.refit == "refit") config.setFlag(F::kREFIT);
  if (s.refit == "identical") config.setFlag(F::kREFIT_IDENTICAL);
#if TAM_HEADERS_MINOR >= 8
  if (s.refit == "individual" && gate.allows(kRefitIndividual)) config.setFlag(F::kREFIT_INDIVIDUAL);
#endif
#if defined(TAM_FLAVOR_TRT10)
  if (s.precision_constraints == "obey") config.setFlag(F::kOBEY_PRECISION_CONSTRAINTS);
  if (s.precision_constraints == "prefer") config.setFlag(F::kPREFER_PRECISION_CONSTRAINTS);
#endif
  if (s.has_dla && s.dla_gpu_fallback) config.setFlag(F::kGPU_FALLBACK);
  apply_builder_flags(config, s.builder_flags, gate);
}

// apply_config applies every config-level setting; gated ones only when
// gate allows (the build is refused beforehand when it does not).
inline void apply_config(nvinfer1::IBuilderConfig& config, const Settings& s, const Gate& gate, const TrtErrors& errors) {
  apply_flags(config, s, gate);
  for (const auto& [pool, bytes] : s.memory_pools) config.setMemoryPoolLimit(pool_type(pool), static_cast<size_t>(bytes));
  if (!s.tactic_sources.empty()) {
    nvinfer1::TacticSources sources = config.getTacticSources();
    for (const auto& t : s.tactic_sources)
      sources = t[0] == '+' ? (sources | tactic_bit(t.substr(1))) : (sources & ~tactic_bit(t.substr(1)));
    checked(errors, "tactic-sources", "the tactic sources", [&] { return config.setTacticSources(sources); });
  }
  if (s.has_max_aux_streams) set_aux_streams(config, s.max_aux_streams, errors);
  if (!s.profiling_verbosity.empty()) {
    using V = nvinfer1::ProfilingVerbosity;
    config.setProfilingVerbosity(s.profiling_verbosity == "none"       ? V::kNONE
                                 : s.profiling_verbosity == "detailed" ? V::kDETAILED
                                                                       : V::kLAYER_NAMES_ONLY);
  }
  if (!s.hardware_compatibility.empty()) {
    using H = nvinfer1::HardwareCompatibilityLevel;
    if (s.hardware_compatibility == "none") config.setHardwareCompatibilityLevel(H::kNONE);
    if (s.hardware_compatibility == "ampere-plus") config.setHardwareCompatibilityLevel(H::kAMPERE_PLUS);
#if TAM_HEADERS_MINOR >= 8
    if (s.hardware_compatibility == "same-compute-capability" && gate.allows(kSameComputeCapability))
      config.setHardwareCompatibilityLevel(H::kSAME_COMPUTE_CAPABILITY);
#endif
  }
#if TAM_HEADERS_MINOR >= 3
  if (!s.runtime_platform.empty() && gate.allows(kRuntimePlatform))
    config.setRuntimePlatform(s.runtime_platform == "windows-amd64" ? nvinfer1::RuntimePlatform::kWINDOWS_AMD64
                                                                    : nvinfer1::RuntimePlatform::kSAME_AS_BUILD);
#endif
#if TAM_HEADERS_MINOR >= 8
  if (s.has_max_tactics && gate.allows(kMaxTactics)) config.setMaxNbTactics(s.max_tactics);
  if (s.has_l2_limit_for_tiling && gate.allows(kL2Limit))
    checked(errors, "l2-limit-for-tiling", std::to_string(s.l2_limit_for_tiling) + " bytes",
            [&] { return config.setL2LimitForTiling(s.l2_limit_for_tiling); });
#endif
  for (const auto& p : s.preview_features) apply_preview_feature(config, p, gate);
  if (!s.plugins_serialize.empty()) {
    std::vector<const char*> paths;
    for (const auto& p : s.plugins_serialize) paths.push_back(p.c_str());
    config.setPluginsToSerialize(paths.data(), static_cast<int32_t>(paths.size()));
  }
  if (s.has_dla) {
    config.setDefaultDeviceType(nvinfer1::DeviceType::kDLA);
    config.setDLACore(s.dla_core);
  }
}
#pragma GCC diagnostic pop

}  // namespace tam

#endif
