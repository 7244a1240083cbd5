// version_gate.h: which of a build's settings a TensorRT 10.x library is too
// old for. Pure logic, tested without TensorRT (version_gate_test.cc).
//
// Within 10.x TensorRT's classes only grow: a method added in 10.8 lies past
// the end of a 10.3 library's method table, so calling it through headers
// from 10.16 jumps to whatever follows the table. The 10.x shim is compiled
// against recent headers and loaded by any 10.x library (JetPack 6 ships
// 10.3), so every call newer than 10.0 is made only when both the headers
// the shim was compiled with and the loaded library have it. Compiling the
// shim against the 10.0 headers proves that every call outside such a gate
// exists in all of 10.x.
#ifndef TAM_BACKENDS_VERSION_GATE_H
#define TAM_BACKENDS_VERSION_GATE_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "join.h"

namespace tam {

// A build setting (named by its matrix key) whose TensorRT call arrived after
// 10.0, with the 10.x minor version that added it. The settings table says
// which (settings_table.h, namespace since).
struct VersionedSetting {
  const char* key;
  int32_t since_minor;
};

// Gate decides which of the requested versioned settings can be applied,
// given the 10.x minor of the headers the shim was compiled with and of the
// library it loaded.
class Gate {
 public:
  Gate(int32_t compiled_minor, int32_t library_minor) : compiled_(compiled_minor), library_(library_minor) {}

  // allows reports whether s's call exists in both the headers and the library.
  bool allows(const VersionedSetting& s) const { return s.since_minor <= compiled_ && s.since_minor <= library_; }

  // require throws unless s's call exists in both: a call past the end of
  // a library's method table is never made.
  void require(const VersionedSetting& s) const {
    if (!allows(s))
      throw std::runtime_error(std::string(s.key) + " needs TensorRT 10." + std::to_string(s.since_minor) +
                               " in both the library (10." + std::to_string(library_) + ") and the headers (10." +
                               std::to_string(compiled_) + ")");
  }

  // refused returns the requested settings the build cannot apply, in
  // request order.
  std::vector<VersionedSetting> refused(const std::vector<VersionedSetting>& requested) const {
    std::vector<VersionedSetting> out;
    for (const auto& s : requested)
      if (!allows(s)) out.push_back(s);
    return out;
  }

  // refusal is the build's error naming what cannot be applied and why, or
  // "" when everything can: a setting is never silently dropped. library
  // names the loaded library ("path is TensorRT 10.3.0.26"); compiled is the
  // headers' full version.
  std::string refusal(const std::vector<VersionedSetting>& requested, const std::string& library,
                      const std::string& compiled) const {
    std::vector<std::string> too_old_library, too_old_headers;
    for (const auto& s : refused(requested)) {
      std::string item = std::string(s.key) + " (needs 10." + std::to_string(s.since_minor) + ")";
      (s.since_minor > library_ ? too_old_library : too_old_headers).push_back(item);
    }
    auto them = [](const std::vector<std::string>& list) { return list.size() == 1 ? "it" : "them"; };
    std::string out;
    if (!too_old_library.empty())
      out = library + ", too old for " + detail::join(too_old_library) + ": use a newer library or remove " +
            them(too_old_library);
    if (!too_old_headers.empty())
      out += std::string(out.empty() ? "" : "; ") + "this backend was compiled against TensorRT " + compiled +
             " headers, which lack " + detail::join(too_old_headers) +
             ": rebuild the backend against the headers of the TensorRT you run, or remove " + them(too_old_headers);
    return out;
  }

 private:
  int32_t compiled_;
  int32_t library_;
};

}  // namespace tam

#endif
