// layer_match.h: which layer-precisions (or layer-output-types) pattern
// decides a layer's type. Pure, tested without TensorRT (request_test.cc).
//
// trtexec's rule (samples/common/sampleEngines.cpp, setLayerPrecisions, and
// sampleUtils.h, findPlausible, in NVIDIA/TensorRT 10.16): a pattern equal to
// the layer's name wins over a wildcard pattern, whatever the order written.
// trtexec knows no other globs; for them trt-action adds: "*" loses to every
// other pattern, and among the other globs the first written wins.
#ifndef TAM_BACKENDS_LAYER_MATCH_H
#define TAM_BACKENDS_LAYER_MATCH_H

#include <fnmatch.h>

#include <string>
#include <utility>
#include <vector>

namespace tam {

// layer_matches reports whether pattern (a name, or a glob whose * also
// matches /) names layer.
inline bool layer_matches(const std::string& pattern, const char* layer) {
  return pattern == layer || fnmatch(pattern.c_str(), layer, 0) == 0;
}

// winning_pattern is the index of the pattern that decides layer's type, or
// -1 when no pattern names it. patterns are in the order written.
inline int winning_pattern(const std::vector<std::pair<std::string, std::string>>& patterns, const char* layer) {
  int glob = -1, star = -1;
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string& p = patterns[i].first;
    if (p == layer) return static_cast<int>(i);  // the exact name
    if (p == "*") {
      if (star < 0) star = static_cast<int>(i);
    } else if (glob < 0 && fnmatch(p.c_str(), layer, 0) == 0) {
      glob = static_cast<int>(i);
    }
  }
  return glob >= 0 ? glob : star;
}

}  // namespace tam

#endif
