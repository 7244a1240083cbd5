// builder_settings.h: applies a request's tam::Settings (settings_table.h) to
// the builder, network and builder config, for the flavour shim.cc is
// compiled for. Included by shim.cc after its flavour checks.
//
// What each value means in TensorRT comes from settings_enums.h, generated
// from the settings table (internal/settings) with the flavour and headers
// minor each value needs (TAM_HAS_<KEY> says whether the headers have a
// setting's call). Every setter whose TensorRT call returns bool is checked:
// a refusal throws naming the matrix key and TensorRT's last message. A call
// newer than the loaded library is never made (require_calls, version_gate.h).
#ifndef TAM_BACKENDS_BUILDER_SETTINGS_H
#define TAM_BACKENDS_BUILDER_SETTINGS_H

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
#include "layer_match.h"
#include "request.h"
#include "settings_enums.h"
#include "version_gate.h"

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

#if TAM_HAS_LAYER_PRECISIONS || TAM_HAS_LAYER_OUTPUT_TYPES
// Per-layer types are deprecated in 10.x (strong typing replaces them) but
// still what weakly typed TensorRT 10 builds ask for.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// A wildcard pattern gives its type only to the layers trtexec would give it
// to; a layer's exact name applies as written. The conditions are trtexec's
// (samples/common/sampleEngines.cpp in NVIDIA/TensorRT 10.x:
// isNonActivationType, setLayerPrecisions, setLayerOutputTypes): a layer
// computing on integers, booleans or shapes keeps the type TensorRT gives it.
inline bool is_non_activation(nvinfer1::DataType t) {
  using nvinfer1::DataType;
  return t == DataType::kINT32 || t == DataType::kINT64 || t == DataType::kBOOL || t == DataType::kUINT8;
}

inline bool is_constant_of(nvinfer1::ILayer& layer, bool (*typed)(nvinfer1::DataType)) {
  return layer.getType() == nvinfer1::LayerType::kCONSTANT &&
         typed(static_cast<nvinfer1::IConstantLayer&>(layer).getWeights().type);
}

// plausible_for_precision: trtexec skips, for layer-precisions, a layer whose
// precision is a non-activation type, a constant of non-activation weights, a
// layer whose first input is a shape tensor, and one whose first input and
// first output are both of non-activation types.
inline bool plausible_for_precision(nvinfer1::ILayer& layer) {
  nvinfer1::ITensor* in = layer.getNbInputs() >= 1 ? layer.getInput(0) : nullptr;  // an optional input may be null
  nvinfer1::ITensor* out = layer.getNbOutputs() >= 1 ? layer.getOutput(0) : nullptr;
  return !is_non_activation(layer.getPrecision()) && !is_constant_of(layer, is_non_activation) &&
         !(in && in->isShapeTensor()) &&
         !(in && out && is_non_activation(in->getType()) && is_non_activation(out->getType()));
}

// plausible_for_output_types: trtexec skips, for layer-output-types, a layer
// whose precision is int32 or bool and a constant of int32 weights; and an
// output that is a shape tensor (plausible_output). trtexec asks output 0
// whether it is one for every output of the layer; trt-action asks each output.
inline bool plausible_for_output_types(nvinfer1::ILayer& layer) {
  using nvinfer1::DataType;
  const DataType p = layer.getPrecision();
  return p != DataType::kINT32 && p != DataType::kBOOL &&
         !is_constant_of(layer, [](DataType t) { return t == DataType::kINT32; });
}

inline bool plausible_output(nvinfer1::ILayer& layer, int32_t k) {
  nvinfer1::ITensor* out = layer.getOutput(k);
  return out && !out->isShapeTensor();
}

// apply_layer_types sets layer-precisions and layer-output-types: for each
// layer, the pattern layer_match.h says wins decides its type; a wildcard's
// type reaches only the layers and outputs trtexec would give it to (above).
// A pattern that names no layer at all is an error, since it is almost always
// a misspelt name.
inline void apply_layer_types(nvinfer1::INetworkDefinition& network, const Settings& s) {
  auto each = [&](const std::string& key, const LayerPatterns& patterns, auto lookup, bool outputs) {
    std::vector<bool> named(patterns.size(), false);
    for (int32_t i = 0; i < network.getNbLayers(); ++i) {
      nvinfer1::ILayer& layer = *network.getLayer(i);
      const std::vector<bool> matched = matching_patterns(patterns, layer.getName());
      for (size_t k = 0; k < patterns.size(); ++k) named[k] = named[k] || matched[k];
      const Winner winner = winning_match(patterns, matched, layer.getName());
      if (winner.index < 0) continue;
      const nvinfer1::DataType type = lookup(patterns[winner.index].second);
      if (!outputs) {
        if (winner.exact || plausible_for_precision(layer)) layer.setPrecision(type);
        continue;
      }
      if (!winner.exact && !plausible_for_output_types(layer)) continue;
      for (int32_t k = 0; k < layer.getNbOutputs(); ++k)
        if (winner.exact || plausible_output(layer, k)) layer.setOutputType(k, type);
    }
    for (size_t k = 0; k < patterns.size(); ++k)
      if (!named[k]) throw std::runtime_error(key + ": \"" + patterns[k].first + "\" matches no layer of the model");
  };
  each("layer-precisions", s.layer_precisions, enums::layer_precisions, false);
  each("layer-output-types", s.layer_output_types, enums::layer_output_types, true);
}
#pragma GCC diagnostic pop
#endif

#if TAM_HAS_INT8_CALIBRATION_CACHE
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
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

// apply_config applies every config-level setting; it refuses, before any
// call, a setting the headers or the loaded library are too old for.
inline void apply_config(nvinfer1::IBuilderConfig& config, const Settings& s, const Gate& gate, const TrtErrors& errors) {
  require_calls(s, gate);
  for (const auto& f : enums::bool_flags())
    if (s.*f.has) (s.*f.value) ? config.setFlag(f.flag) : config.clearFlag(f.flag);
  if (!s.refit.empty())
    if (auto flag = enums::refit(s.refit)) config.setFlag(*flag);
  if (!s.sparsity.empty())
    if (auto flag = enums::sparsity(s.sparsity)) config.setFlag(*flag);
#if TAM_HAS_PRECISION_CONSTRAINTS
  if (!s.precision_constraints.empty())
    if (auto flag = enums::precision_constraints(s.precision_constraints)) config.setFlag(*flag);
#endif
  for (const auto& f : s.builder_flags) config.setFlag(enums::builder_flags(f));
  if (s.has_opt_level) config.setBuilderOptimizationLevel(static_cast<int32_t>(s.opt_level));
#if TAM_HAS_TILING_OPTIMIZATION_LEVEL
  if (s.has_tiling_optimization_level)
    checked(errors, "tiling-optimization-level", std::to_string(s.tiling_optimization_level), [&] {
      return config.setTilingOptimizationLevel(static_cast<nvinfer1::TilingOptimizationLevel>(s.tiling_optimization_level));
    });
#endif
  for (const auto& [pool, bytes] : s.memory_pools)
    config.setMemoryPoolLimit(enums::memory_pools(pool), static_cast<size_t>(bytes));
  if (!s.tactic_sources.empty()) {
    nvinfer1::TacticSources sources = config.getTacticSources();
    for (const auto& t : s.tactic_sources) {
      const nvinfer1::TacticSources bit = 1U << static_cast<uint32_t>(enums::tactic_sources(t.substr(1)));
      sources = t[0] == '+' ? (sources | bit) : (sources & ~bit);
    }
    checked(errors, "tactic-sources", "the tactic sources", [&] { return config.setTacticSources(sources); });
  }
  if (s.has_max_aux_streams) set_aux_streams(config, static_cast<int32_t>(s.max_aux_streams), errors);
  if (!s.profiling_verbosity.empty()) config.setProfilingVerbosity(enums::profiling_verbosity(s.profiling_verbosity));
  if (!s.hardware_compatibility.empty())
    config.setHardwareCompatibilityLevel(enums::hardware_compatibility(s.hardware_compatibility));
#if TAM_HAS_RUNTIME_PLATFORM
  if (!s.runtime_platform.empty()) config.setRuntimePlatform(enums::runtime_platform(s.runtime_platform));
#endif
#if TAM_HAS_MAX_TACTICS
  if (s.has_max_tactics) config.setMaxNbTactics(static_cast<int32_t>(s.max_tactics));
#endif
#if TAM_HAS_L2_LIMIT_FOR_TILING
  if (s.has_l2_limit_for_tiling)
    checked(errors, "l2-limit-for-tiling", std::to_string(s.l2_limit_for_tiling) + " bytes",
            [&] { return config.setL2LimitForTiling(s.l2_limit_for_tiling); });
#endif
  for (const auto& p : s.preview_features) config.setPreviewFeature(enums::preview_features(p.substr(1)), p[0] == '+');
  if (!s.plugins_serialize.empty()) {
    std::vector<const char*> paths;
    for (const auto& p : s.plugins_serialize) paths.push_back(p.c_str());
    config.setPluginsToSerialize(paths.data(), static_cast<int32_t>(paths.size()));
  }
#if TAM_HAS_DLA
  if (s.has_dla) {
    config.setDefaultDeviceType(nvinfer1::DeviceType::kDLA);
    config.setDLACore(static_cast<int32_t>(s.dla.core));
    if (s.dla.gpu_fallback) config.setFlag(enums::dla_gpu_fallback_flag);
  }
#endif
}

}  // namespace tam

#endif
