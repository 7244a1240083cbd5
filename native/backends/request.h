// request.h: the build request a backend receives, decoded from the JSON that
// native/request.go (type Request) writes. Field names are that file's json
// tags; change both together. Independent of TensorRT so it can be tested
// without it.
#ifndef TAM_BACKENDS_REQUEST_H
#define TAM_BACKENDS_REQUEST_H

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "json.h"

namespace tam {

struct ShapeRange {
  std::vector<int64_t> min, opt, max;
};

// Settings are the builder settings beyond the fixed fields, decoded from the
// request's "settings" object, whose keys are the matrix's own key names
// (internal/matrix/settings.go). Empty/absent means "leave TensorRT's default".
struct Settings {
  bool has_strongly_typed = false, strongly_typed = false;
  std::vector<std::string> plugins, plugins_serialize;
  std::string precision_constraints;  // none, prefer, obey
  std::vector<std::pair<std::string, std::string>> layer_precisions, layer_output_types;  // glob -> type
  std::string int8_calibration_cache;
  bool has_tf32 = false, tf32 = false;
  std::string hardware_compatibility;  // none, ampere-plus, same-compute-capability
  bool version_compatible = false, exclude_lean_runtime = false, strip_weights = false, weight_streaming = false;
  std::string refit;             // none, refit, identical, individual
  std::string runtime_platform;  // same-as-build, windows-amd64
  std::vector<std::string> tactic_sources;  // "+name" / "-name"
  bool has_max_tactics = false;
  int32_t max_tactics = 0;
  std::string sparsity;  // disable, enable
  bool has_max_aux_streams = false;
  int32_t max_aux_streams = 0;
  bool has_l2_limit_for_tiling = false;
  int64_t l2_limit_for_tiling = 0;
  std::vector<std::pair<std::string, int64_t>> memory_pools;  // pool name -> bytes
  std::string profiling_verbosity;                            // none, layer-names-only, detailed
  std::vector<std::string> preview_features;                  // "+name" / "-name"
  std::vector<std::string> builder_flags;                     // debug, strict-nans, ... (builder-flags)
  bool has_dla = false, dla_gpu_fallback = false;
  int32_t dla_core = 0;
};

struct BuildRequest {
  std::string name;
  std::string onnx;
  std::string engine_tmp;
  std::string lib_path;
  int64_t workspace_bytes = 0;  // 0: TensorRT's default
  bool has_opt_level = false;
  int32_t opt_level = 0;
  bool has_tiling_level = false;  // TensorRT 10.8+, 11.x, TensorRT-RTX (version_gate.h)
  int32_t tiling_level = 0;
  std::vector<std::string> precision;
  bool strongly_typed = false;
  std::map<std::string, ShapeRange> shapes;
  std::vector<std::string> targets;
  std::string timing_cache;
  bool no_monitor = false;  // benchmarks only: build without the progress monitor
  Settings settings;
  std::vector<std::string> setting_keys;  // every builder setting's matrix key: named when the build fails
};

namespace detail {

inline std::vector<int64_t> dims(const tamjson::Value& v, const std::string& what) {
  if (v.kind != tamjson::Value::kArray) throw std::runtime_error(what + ": want an array of integers");
  std::vector<int64_t> out;
  for (const auto& item : v.items) out.push_back(item.as_int64(what.c_str()));
  return out;
}

inline std::vector<std::string> strings(const tamjson::Value& v, const char* what) {
  if (v.kind != tamjson::Value::kArray) throw std::runtime_error(std::string(what) + ": want an array of strings");
  std::vector<std::string> out;
  for (const auto& item : v.items) out.push_back(item.as_string(what));
  return out;
}

inline std::string string_field(const tamjson::Value& doc, const char* key) {
  const tamjson::Value* v = doc.find(key);
  return v ? v->as_string(key) : std::string();
}

inline void one_of(const std::string& key, const std::string& v, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw std::runtime_error("settings." + key + ": \"" + v + "\" is unknown; allowed: " + list);
}

inline std::string enum_field(const tamjson::Value& v, const std::string& key,
                              std::initializer_list<const char*> allowed) {
  std::string s = v.as_string(("settings." + key).c_str());
  one_of(key, s, allowed);
  return s;
}

inline int64_t int_in(const tamjson::Value& v, const std::string& key, int64_t lo, int64_t hi) {
  int64_t n = v.as_int64(("settings." + key).c_str());
  if (n < lo || n > hi)
    throw std::runtime_error("settings." + key + " must be " + std::to_string(lo) + " to " + std::to_string(hi) +
                             ", got " + v.text);
  return n;
}

inline std::vector<std::pair<std::string, std::string>> type_map(const tamjson::Value& v, const std::string& key) {
  if (v.kind != tamjson::Value::kObject) throw std::runtime_error("settings." + key + ": want an object");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [glob, type] : v.fields)
    out.emplace_back(glob, enum_field(type, key + "." + glob,
                                      {"fp32", "fp16", "bf16", "int8", "int32", "int64", "fp8", "int4", "uint8", "bool"}));
  return out;
}

// toggles checks "+name"/"-name" entries against the allowed names.
inline std::vector<std::string> toggles(const tamjson::Value& v, const std::string& key,
                                        std::initializer_list<const char*> names) {
  std::vector<std::string> out = strings(v, ("settings." + key).c_str());
  for (const auto& t : out) {
    if (t.size() < 2 || (t[0] != '+' && t[0] != '-'))
      throw std::runtime_error("settings." + key + ": \"" + t + "\" wants a sign, like +name or -name");
    one_of(key, t.substr(1), names);
  }
  return out;
}

// decode_settings reads the "settings" object; an unknown key is an error,
// so a setting can never be dropped on the way.
inline Settings decode_settings(const tamjson::Value& v) {
  if (v.kind != tamjson::Value::kObject) throw std::runtime_error("settings: want an object");
  Settings s;
  for (const auto& [key, val] : v.fields) {
    const std::string what = "settings." + key;
    const char* w = what.c_str();
    if (key == "strongly-typed") {
      s.has_strongly_typed = true;
      s.strongly_typed = val.as_bool(w);
    } else if (key == "plugins") {
      s.plugins = strings(val, w);
    } else if (key == "plugins-serialize") {
      s.plugins_serialize = strings(val, w);
    } else if (key == "precision-constraints") {
      s.precision_constraints = enum_field(val, key, {"none", "prefer", "obey"});
    } else if (key == "layer-precisions") {
      s.layer_precisions = type_map(val, key);
    } else if (key == "layer-output-types") {
      s.layer_output_types = type_map(val, key);
    } else if (key == "int8-calibration-cache") {
      s.int8_calibration_cache = val.as_string(w);
    } else if (key == "tf32") {
      s.has_tf32 = true;
      s.tf32 = val.as_bool(w);
    } else if (key == "hardware-compatibility") {
      s.hardware_compatibility = enum_field(val, key, {"none", "ampere-plus", "same-compute-capability"});
    } else if (key == "version-compatible") {
      s.version_compatible = val.as_bool(w);
    } else if (key == "exclude-lean-runtime") {
      s.exclude_lean_runtime = val.as_bool(w);
    } else if (key == "refit") {
      s.refit = enum_field(val, key, {"none", "refit", "identical", "individual"});
    } else if (key == "strip-weights") {
      s.strip_weights = val.as_bool(w);
    } else if (key == "weight-streaming") {
      s.weight_streaming = val.as_bool(w);
    } else if (key == "runtime-platform") {
      s.runtime_platform = enum_field(val, key, {"same-as-build", "windows-amd64"});
    } else if (key == "tactic-sources") {
      s.tactic_sources = toggles(val, key, {"cublas", "cublas-lt", "cudnn", "edge-mask-convolutions", "jit-convolutions"});
    } else if (key == "max-tactics") {
      s.has_max_tactics = true;
      s.max_tactics = static_cast<int32_t>(int_in(val, key, 1, 1 << 30));
    } else if (key == "sparsity") {
      s.sparsity = enum_field(val, key, {"disable", "enable"});
    } else if (key == "max-aux-streams") {
      s.has_max_aux_streams = true;
      s.max_aux_streams = static_cast<int32_t>(int_in(val, key, 0, 64));
    } else if (key == "l2-limit-for-tiling") {
      s.has_l2_limit_for_tiling = true;
      s.l2_limit_for_tiling = int_in(val, key, 1, INT64_MAX);
    } else if (key == "memory-pools") {
      if (val.kind != tamjson::Value::kObject) throw std::runtime_error(what + ": want an object");
      for (const auto& [pool, size] : val.fields) {
        one_of(key, pool, {"workspace", "tactic-shared", "dla-sram", "dla-local", "dla-global"});
        s.memory_pools.emplace_back(pool, int_in(size, key + "." + pool, 1, INT64_MAX));
      }
    } else if (key == "profiling-verbosity") {
      s.profiling_verbosity = enum_field(val, key, {"none", "layer-names-only", "detailed"});
    } else if (key == "preview-features") {
      s.preview_features = toggles(val, key, {"profile-sharing-0806", "aliased-plugin-io-10-03",
                                              "runtime-activation-resize-10-10", "multidevice-runtime-10-16"});
    } else if (key == "builder-flags") {
      s.builder_flags = strings(val, w);
      for (const auto& f : s.builder_flags)
        one_of(key, f, {"debug", "disable-timing-cache", "error-on-timing-cache-miss", "disable-compilation-cache",
                        "strict-nans", "monitor-memory", "editable-timing-cache", "distributive-independence",
                        "require-user-allocation"});
    } else if (key == "dla") {
      const tamjson::Value* core = val.find("core");
      if (core == nullptr) throw std::runtime_error("settings.dla: core is required");
      s.has_dla = true;
      s.dla_core = static_cast<int32_t>(int_in(*core, "dla.core", 0, 15));
      if (const auto* fb = val.find("gpu-fallback")) s.dla_gpu_fallback = fb->as_bool("settings.dla.gpu-fallback");
    } else {
      throw std::runtime_error(what + ": unknown setting (this backend is older than the matrix it was given?)");
    }
  }
  return s;
}

}  // namespace detail

// decode_request reads and checks the request; it throws std::runtime_error
// naming the offending field.
inline BuildRequest decode_request(const std::string& json) {
  tamjson::Value doc = tamjson::parse(json);
  if (doc.kind != tamjson::Value::kObject) throw std::runtime_error("request JSON: want an object");

  BuildRequest r;
  r.name = detail::string_field(doc, "name");
  r.onnx = detail::string_field(doc, "onnx");
  r.engine_tmp = detail::string_field(doc, "engine_tmp");
  r.lib_path = detail::string_field(doc, "lib_path");
  r.timing_cache = detail::string_field(doc, "timing_cache");
  if (r.onnx.empty()) throw std::runtime_error("request: onnx (the model path) is required");
  if (r.engine_tmp.empty()) throw std::runtime_error("request: engine_tmp is required");

  if (const auto* v = doc.find("workspace_bytes")) {
    r.workspace_bytes = v->as_int64("workspace_bytes");
    if (r.workspace_bytes < 0) throw std::runtime_error("request: workspace_bytes must not be negative");
  }
  if (const auto* v = doc.find("opt_level")) {
    int64_t level = v->as_int64("opt_level");
    if (level < 0 || level > 5) throw std::runtime_error("request: opt_level must be 0 to 5, got " + v->text);
    r.has_opt_level = true;
    r.opt_level = static_cast<int32_t>(level);
  }
  if (const auto* v = doc.find("tiling_level")) {
    int64_t level = v->as_int64("tiling_level");
    if (level < 0 || level > 3) throw std::runtime_error("request: tiling_level must be 0 to 3, got " + v->text);
    r.has_tiling_level = true;
    r.tiling_level = static_cast<int32_t>(level);
  }
  if (const auto* v = doc.find("precision")) r.precision = detail::strings(*v, "precision");
  if (const auto* v = doc.find("strongly_typed")) r.strongly_typed = v->as_bool("strongly_typed");
  if (const auto* v = doc.find("no_monitor")) r.no_monitor = v->as_bool("no_monitor");
  if (const auto* v = doc.find("targets")) r.targets = detail::strings(*v, "targets");
  if (const auto* v = doc.find("setting_keys")) r.setting_keys = detail::strings(*v, "setting_keys");
  if (const auto* v = doc.find("settings")) {
    r.settings = detail::decode_settings(*v);
    if (r.settings.has_strongly_typed) r.strongly_typed = r.settings.strongly_typed;
  }
  if (const auto* v = doc.find("shapes")) {
    if (v->kind != tamjson::Value::kObject) throw std::runtime_error("shapes: want an object keyed by input name");
    for (const auto& [input, shape] : v->fields) {
      const std::string where = "shapes." + input;
      ShapeRange range;
      const tamjson::Value* min = shape.find("min");
      const tamjson::Value* opt = shape.find("opt");
      const tamjson::Value* max = shape.find("max");
      if (!min || !opt || !max) throw std::runtime_error(where + ": needs min, opt and max");
      range.min = detail::dims(*min, where + ".min");
      range.opt = detail::dims(*opt, where + ".opt");
      range.max = detail::dims(*max, where + ".max");
      if (range.min.size() != range.opt.size() || range.opt.size() != range.max.size())
        throw std::runtime_error(where + ": min, opt and max must have the same rank");
      r.shapes[input] = range;
    }
  }
  return r;
}

}  // namespace tam

#endif
