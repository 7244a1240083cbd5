// request.h: the build request a backend receives, decoded from the JSON that
// native/request.go (type Request) writes. Field names are that file's json
// tags; change both together. Independent of TensorRT so it can be tested
// without it.
#ifndef TAM_BACKENDS_REQUEST_H
#define TAM_BACKENDS_REQUEST_H

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "json.h"
#include "settings_table.h"

namespace tam {

struct ShapeRange {
  std::vector<int64_t> min, opt, max;
};

// Profile is one optimization profile: each dynamic input's shapes, by name.
using Profile = std::map<std::string, ShapeRange>;

// BuildRequest is the whole request. The builder settings with a field of
// their own (precision, the optimization profiles, targets, timing cache) are
// here; every other one is in settings (settings_table.h, generated from the
// settings table).
struct BuildRequest {
  std::string name;
  std::string onnx;
  std::string engine_tmp;
  std::string lib_path;    // the library's file or folder; "": the loader's search path
  std::string lib_origin;  // where lib_path came from, for messages: "from --trt-lib"
  std::string lib_fix;     // how to get the library, for the message when it cannot be loaded
  std::vector<std::string> precision;  // allowed::precision; precision.h decides per flavour
  bool strongly_typed = false;
  // The optimization profiles, in order: profile i is the builder's profile
  // index i. A matrix's shapes is one profile, profiles one each.
  std::vector<Profile> profiles;
  std::vector<std::string> targets;  // allowed::targets
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

inline std::string string_field(const tamjson::Value& doc, const char* key) {
  const tamjson::Value* v = doc.find(key);
  return v ? v->as_string(key) : std::string();
}

inline Profile profile(const tamjson::Value& v, const std::string& key) {
  if (v.kind != tamjson::Value::kObject) throw std::runtime_error(key + ": want an object keyed by input name");
  Profile out;
  for (const auto& [input, shape] : v.fields) {
    const std::string where = key + "." + input;
    const tamjson::Value* min = shape.find("min");
    const tamjson::Value* opt = shape.find("opt");
    const tamjson::Value* max = shape.find("max");
    if (!min || !opt || !max) throw std::runtime_error(where + ": needs min, opt and max");
    ShapeRange range;
    range.min = dims(*min, where + ".min");
    range.opt = dims(*opt, where + ".opt");
    range.max = dims(*max, where + ".max");
    if (range.min.size() != range.opt.size() || range.opt.size() != range.max.size())
      throw std::runtime_error(where + ": min, opt and max must have the same rank");
    out[input] = range;
  }
  return out;
}

}  // namespace detail

// profile_key is how messages name profile i of count, as the matrix key the
// user wrote: one profile is shapes (a one-item profiles is written and shown
// as shapes), several are profiles[i].
inline std::string profile_key(size_t count, size_t i) {
  return count <= 1 ? std::string("shapes") : "profiles[" + std::to_string(i) + "]";
}

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
  r.lib_origin = detail::string_field(doc, "lib_origin");
  r.lib_fix = detail::string_field(doc, "lib_fix");
  r.timing_cache = detail::string_field(doc, "timing_cache");
  if (r.onnx.empty()) throw std::runtime_error("request: onnx (the model path) is required");
  if (r.engine_tmp.empty()) throw std::runtime_error("request: engine_tmp is required");

  if (const auto* v = doc.find("precision")) r.precision = detail::allowed_list(*v, "precision", allowed::precision);
  if (const auto* v = doc.find("strongly_typed")) r.strongly_typed = v->as_bool("strongly_typed");
  if (const auto* v = doc.find("no_monitor")) r.no_monitor = v->as_bool("no_monitor");
  if (const auto* v = doc.find("targets")) r.targets = detail::allowed_list(*v, "targets", allowed::targets);
  if (const auto* v = doc.find("setting_keys")) r.setting_keys = detail::strings(*v, "setting_keys");
  if (const auto* v = doc.find("settings")) {
    r.settings = detail::decode_settings(*v);
    if (r.settings.has_strongly_typed) r.strongly_typed = r.settings.strongly_typed;
  }
  if (const auto* v = doc.find("profiles")) {
    if (v->kind != tamjson::Value::kArray) throw std::runtime_error("profiles: want an array of profiles");
    for (size_t i = 0; i < v->items.size(); ++i)
      r.profiles.push_back(detail::profile(v->items[i], profile_key(v->items.size(), i)));
  }
  return r;
}

}  // namespace tam

#endif
