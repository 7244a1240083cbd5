// layer_match.h: the layer-precisions (and layer-output-types) pattern
// syntax, and which pattern decides a layer's type. Pure, tested without
// TensorRT (request_test.cc).
//
// The syntax is trtexec's (samples/common/sampleUtils.cpp,
// matchStringWithOneWildcard, in NVIDIA/TensorRT 10.x): a pattern without *
// is a layer's exact name; * matches any run of characters, / included; ?
// and [ are characters of a name like any other. trtexec reads only the first
// * of a pattern as a wildcard (a second is a character to it); trt-action
// reads each * as one, so "*attn*" names every layer with attn in its name.
// Go reads the same syntax (internal/settings, IsLayerGlob).
//
// Which pattern decides: a pattern equal to the layer's name wins over any
// wildcard match, whatever the order written, as in trtexec
// (samples/common/sampleEngines.cpp, setLayerPrecisions and
// setLayerOutputTypes, with sampleUtils.h's findPlausible). Among wildcard
// matches trtexec takes whichever its hash map yields first; trt-action: "*"
// loses to every other pattern, and among the others the first written wins.
// A wildcard match is then applied only where trtexec would apply it
// (builder_settings.h, plausible_for_precision and plausible_for_output_types).
#ifndef TAM_BACKENDS_LAYER_MATCH_H
#define TAM_BACKENDS_LAYER_MATCH_H

#include <string>
#include <utility>
#include <vector>

namespace tam {

// glob_matches reports whether pattern, in which each * matches any run of
// characters and every other character only itself, matches all of name.
inline bool glob_matches(const std::string& pattern, const std::string& name) {
  size_t p = 0, s = 0;
  size_t star = std::string::npos, resume = 0;  // the last * seen, and where its run ends so far
  while (s < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = s;
    } else if (p < pattern.size() && pattern[p] == name[s]) {
      ++p;
      ++s;
    } else if (star != std::string::npos) {
      p = star + 1;  // let the last * take one more character
      s = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// layer_matches reports whether pattern names layer: it is its exact name,
// or a glob that matches it.
inline bool layer_matches(const std::string& pattern, const char* layer) {
  return pattern == layer || (pattern.find('*') != std::string::npos && glob_matches(pattern, layer));
}

// Winner is the pattern that decides a layer's type: its index in the
// patterns as written (-1: no pattern names the layer), and whether it is
// the layer's exact name rather than a wildcard match.
struct Winner {
  int index = -1;
  bool exact = false;
};

using LayerPatterns = std::vector<std::pair<std::string, std::string>>;  // pattern -> type, as written

// matching_patterns says which of patterns name layer (layer_matches).
inline std::vector<bool> matching_patterns(const LayerPatterns& patterns, const char* layer) {
  std::vector<bool> matched(patterns.size());
  for (size_t i = 0; i < patterns.size(); ++i) matched[i] = layer_matches(patterns[i].first, layer);
  return matched;
}

// winning_match says which of patterns (in the order written) decides
// layer's type, given which of them name it (matching_patterns).
inline Winner winning_match(const LayerPatterns& patterns, const std::vector<bool>& matched, const char* layer) {
  int glob = -1, star = -1;
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (!matched[i]) continue;
    const std::string& p = patterns[i].first;
    if (p == layer) return {static_cast<int>(i), true};
    if (p == "*") {
      if (star < 0) star = static_cast<int>(i);
    } else if (glob < 0) {
      glob = static_cast<int>(i);
    }
  }
  return {glob >= 0 ? glob : star, false};
}

// winning_pattern says which of patterns (in the order written) decides
// layer's type.
inline Winner winning_pattern(const LayerPatterns& patterns, const char* layer) {
  return winning_match(patterns, matching_patterns(patterns, layer), layer);
}

}  // namespace tam

#endif
