// settings_decode.h: how each kind of builder setting is read from the
// request's JSON and checked against the values the settings table allows;
// the generated settings_table.h calls these for every key. TensorRT-free.
#ifndef TAM_BACKENDS_SETTINGS_DECODE_H
#define TAM_BACKENDS_SETTINGS_DECODE_H

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend_table.h"
#include "join.h"
#include "json.h"

namespace tam {
namespace detail {

inline std::vector<std::string> strings(const tamjson::Value& v, const char* what) {
  if (v.kind != tamjson::Value::kArray) throw std::runtime_error(std::string(what) + ": want an array of strings");
  std::vector<std::string> out;
  for (const auto& item : v.items) out.push_back(item.as_string(what));
  return out;
}

inline bool contains(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// check_allowed refuses v, written at what ("settings.refit", "precision"),
// unless allowed has it.
inline void check_allowed(const std::string& what, const std::string& v, const std::vector<std::string>& allowed) {
  if (!contains(allowed, v)) throw std::runtime_error(what + ": \"" + v + "\" is unknown; allowed: " + join(allowed));
}

// allowed_list reads the list of strings written at what, each one allowed
// has: a setting's list, or a fixed setting's (precision, targets).
inline std::vector<std::string> allowed_list(const tamjson::Value& v, const std::string& what,
                                             const std::vector<std::string>& allowed) {
  std::vector<std::string> out = strings(v, what.c_str());
  for (const auto& s : out) check_allowed(what, s, allowed);
  return out;
}

inline void one_of(const std::string& key, const std::string& v, const std::vector<std::string>& allowed) {
  check_allowed("settings." + key, v, allowed);
}

inline std::string enum_field(const tamjson::Value& v, const std::string& key, const std::vector<std::string>& allowed) {
  std::string s = v.as_string(("settings." + key).c_str());
  one_of(key, s, allowed);
  return s;
}

inline std::vector<std::string> enum_list(const tamjson::Value& v, const std::string& key,
                                          const std::vector<std::string>& allowed) {
  return allowed_list(v, "settings." + key, allowed);
}

inline int64_t int_in(const tamjson::Value& v, const std::string& key, int64_t lo, int64_t hi) {
  int64_t n = v.as_int64(("settings." + key).c_str());
  if (n < lo || n > hi)
    throw std::runtime_error("settings." + key + " must be " + std::to_string(lo) + " to " + std::to_string(hi) +
                             ", got " + v.text);
  return n;
}

// toggles checks "+name"/"-name" entries against the allowed names.
inline std::vector<std::string> toggles(const tamjson::Value& v, const std::string& key,
                                        const std::vector<std::string>& names) {
  std::vector<std::string> out = strings(v, ("settings." + key).c_str());
  for (const auto& t : out) {
    if (t.size() < 2 || (t[0] != '+' && t[0] != '-'))
      throw std::runtime_error("settings." + key + ": \"" + t + "\" wants a sign, like +name or -name");
    one_of(key, t.substr(1), names);
  }
  return out;
}

// size_map reads {name: bytes} with names from allowed.
inline std::vector<std::pair<std::string, int64_t>> size_map(const tamjson::Value& v, const std::string& key,
                                                             const std::vector<std::string>& allowed) {
  if (v.kind != tamjson::Value::kObject) throw std::runtime_error("settings." + key + ": want an object");
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [name, size] : v.fields) {
    one_of(key, name, allowed);
    out.emplace_back(name, int_in(size, key + "." + name, 1, INT64_MAX));
  }
  return out;
}

// layer_types reads [{"layer": pattern, "type": type}, ...], keeping the
// order written: which pattern decides a layer depends on it (layer_match.h).
inline std::vector<std::pair<std::string, std::string>> layer_types(const tamjson::Value& v, const std::string& key,
                                                                    const std::vector<std::string>& types) {
  if (v.kind != tamjson::Value::kArray)
    throw std::runtime_error("settings." + key + ": want an array of {\"layer\", \"type\"} in the order written");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : v.items) {
    const tamjson::Value* layer = item.find("layer");
    const tamjson::Value* type = item.find("type");
    if (item.kind != tamjson::Value::kObject || layer == nullptr || type == nullptr || item.fields.size() != 2)
      throw std::runtime_error("settings." + key + ": each entry is {\"layer\": pattern, \"type\": type}");
    const std::string pattern = layer->as_string(("settings." + key).c_str());
    out.emplace_back(pattern, enum_field(*type, key + "." + pattern, types));
  }
  return out;
}

// object_fields refuses a field of an object setting the table does not
// name.
inline void object_fields(const tamjson::Value& v, const std::string& key, std::initializer_list<const char*> names) {
  if (v.kind != tamjson::Value::kObject) throw std::runtime_error("settings." + key + ": want an object");
  std::vector<std::string> allowed(names.begin(), names.end());
  for (const auto& field : v.fields) one_of(key, field.first, allowed);
}

// has_toggle reports whether "+name" or "-name" is in the list.
inline bool has_toggle(const std::vector<std::string>& toggles, const std::string& name) {
  return std::any_of(toggles.begin(), toggles.end(), [&](const std::string& t) { return t.substr(1) == name; });
}

template <typename V>
bool has_key(const std::vector<std::pair<std::string, V>>& map, const std::string& key) {
  return std::any_of(map.begin(), map.end(), [&](const auto& kv) { return kv.first == key; });
}

inline bool flavour_in(Flavour f, std::initializer_list<Flavour> flavours) {
  return std::find(flavours.begin(), flavours.end(), f) != flavours.end();
}

// refuse fails a build that asks flavour for what it lacks.
[[noreturn]] inline void refuse(Flavour flavour, const std::string& what, const std::string& where, const std::string& why) {
  throw std::runtime_error(what + ": " + flavour_name(flavour) + " has no such setting; " + where +
                           (why.empty() ? std::string() : " (" + why + ")"));
}

}  // namespace detail
}  // namespace tam

#endif
