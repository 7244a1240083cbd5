// request_test.cc: tests for json.h and request.h, which need no TensorRT.
// Built and run by `make backends-test` (native/backends/backends.mk).
#include <string>

#include "layer_match.h"
#include "request.h"
#include "test_check.h"

namespace {

using tamtest::check;
using tamtest::throws_with;

void test_full_request() {
  // What encoding/json writes for a native.Request, including its escapes
  // (\u003c for '<', non-ASCII kept as UTF-8).
  const std::string json =
      R"({"name":"cnn \u003cfp16\u003e","onnx":"/m/cnn.onnx","engine_tmp":"/o/e.tmp","lib_path":"/l","lib_origin":"from TRT_ACTION_RTX_LIB",)"
      R"("precision":["fp16","int8"],"strongly_typed":true,)"
      R"("profiles":[{"input":{"min":[1,64],"opt":[4,64],"max":[8,64]}}],"targets":["sm86","sm120"],)"
      R"("timing_cache":"/c/t\u00e9.cache","setting_keys":["memory-pools","opt-level","precision","shapes","targets",)"
      R"("tiling-optimization-level","timing-cache"],"sim":{"step_ns":0,"threads":1,"fault":"none","fault_ns":0,"fault_at":0.5},)"
      R"("settings":{"opt-level":0,"tiling-optimization-level":0,"memory-pools":{"workspace":1073741824}}})";
  tam::BuildRequest r = tam::decode_request(json);
  check(r.name == "cnn <fp16>", "name unescaped");
  check(r.onnx == "/m/cnn.onnx" && r.engine_tmp == "/o/e.tmp" && r.lib_path == "/l" && r.lib_origin == "from TRT_ACTION_RTX_LIB",
        "paths, and where the library came from");
  check(r.settings.memory_pools.size() == 1 && r.settings.memory_pools[0].second == 1073741824,
        "workspace is memory-pools.workspace");
  check(r.settings.has_opt_level && r.settings.opt_level == 0, "opt-level 0 is kept, not taken for absent");
  check(r.settings.has_tiling_optimization_level && r.settings.tiling_optimization_level == 0,
        "tiling-optimization-level 0 is kept, not taken for absent");
  check(r.precision.size() == 2 && r.precision[1] == "int8", "precision");
  check(r.strongly_typed, "strongly_typed");
  check(r.profiles.size() == 1 && r.profiles[0].count("input") == 1 && r.profiles[0]["input"].opt[0] == 4 &&
            r.profiles[0]["input"].max[1] == 64,
        "one profile");
  check(r.targets.size() == 2 && r.targets[0] == "sm86", "targets");
  check(r.timing_cache == "/c/t\xc3\xa9.cache", "\\u00e9 becomes UTF-8");
  check(r.setting_keys.size() == 7 && r.setting_keys[0] == "memory-pools" && r.setting_keys[6] == "timing-cache",
        "setting_keys: every setting's matrix key, for a failed build's reason");
}

void test_minimal_request() {
  tam::BuildRequest r = tam::decode_request(R"( {"name":"m","onnx":"a.onnx","engine_tmp":"e"} )");
  check(!r.settings.has_opt_level && !r.settings.has_tiling_optimization_level && r.settings.memory_pools.empty() &&
            r.profiles.empty() && !r.strongly_typed,
        "defaults");
  check(!r.no_monitor, "the monitor is installed unless asked otherwise");
}

// Profiles keep their order: profile i is the engine's profile index i.
void test_profiles_in_order() {
  tam::BuildRequest r = tam::decode_request(
      R"({"onnx":"a","engine_tmp":"e","profiles":[{"x":{"min":[1],"opt":[2],"max":[4]}},{"x":{"min":[4],"opt":[8],"max":[16]}},)"
      R"({"x":{"min":[16],"opt":[16],"max":[32]},"y":{"min":[1],"opt":[1],"max":[1]}}]})");
  check(r.profiles.size() == 3, "three profiles");
  check(r.profiles.size() == 3 && r.profiles[0]["x"].max[0] == 4 && r.profiles[1]["x"].opt[0] == 8 &&
            r.profiles[2]["x"].max[0] == 32 && r.profiles[2].count("y") == 1,
        "each in the place written");
}

void test_no_monitor() {
  tam::BuildRequest r = tam::decode_request(R"({"onnx":"a.onnx","engine_tmp":"e","no_monitor":true})");
  check(r.no_monitor, "no_monitor true");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","no_monitor":1})"); }, "no_monitor"),
        "no_monitor must be a boolean");
}

void test_strings() {
  tamjson::Value v = tamjson::parse(R"(["a\"b\\c\/\n\t", "\ud83d\ude00", "\u20ac"])");
  check(v.items[0].text == "a\"b\\c/\n\t", "simple escapes");
  check(v.items[1].text == "\xf0\x9f\x98\x80", "surrogate pair becomes one 4-byte UTF-8 sequence");
  check(v.items[2].text == "\xe2\x82\xac", "3-byte UTF-8");
  check(tamjson::quote("a\"b\\\n") == R"("a\"b\\\u000a")", "quote escapes");
}

void test_errors() {
  check(throws_with([] { tamjson::parse("{\"a\":1,}"); }, "byte 7: expected a member name"), "trailing comma names offset");
  check(throws_with([] { tamjson::parse("[1 2]"); }, "expected ']'"), "missing comma");
  check(throws_with([] { tamjson::parse("\"abc"); }, "unterminated string"), "unterminated string");
  check(throws_with([] { tamjson::parse("\"\\ud800x\""); }, "surrogate"), "lone high surrogate");
  check(throws_with([] { tamjson::parse("{} x"); }, "after the value"), "trailing text");
  check(throws_with([] { tamjson::parse(std::string(100, '[')); }, "nested too deeply"), "depth limit");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","settings":{"opt-level":7}})"); },
                    "settings.opt-level must be 0 to 5"),
        "opt level range, from the settings table");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","settings":{"tiling-optimization-level":4}})"); },
                    "settings.tiling-optimization-level must be 0 to 3"),
        "tiling level range, from the settings table");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","settings":{"opt-level":1.5}})"); },
                    "want an integer"),
        "fractional integer refused");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","precision":["fp4"]})"); },
                    "precision: \"fp4\" is unknown; allowed: fp32, fp16"),
        "precision values come from the settings table");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","targets":["sm90"]})"); },
                    "targets: \"sm90\" is unknown; allowed: sm75"),
        "target values come from the settings table");
  check(throws_with([] { tam::decode_request(R"({"engine_tmp":"e"})"); }, "onnx"), "onnx required");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","profiles":[{"x":{"min":[1],"opt":[1]}}]})"); },
                    "shapes.x: needs min, opt and max"),
        "shape needs all three; one profile is named shapes, as the matrix writes it");
  check(throws_with([] {
          tam::decode_request(R"({"onnx":"a","engine_tmp":"e","profiles":[{"x":{"min":[1],"opt":[1],"max":[1]}},{"x":{"min":[1],"max":[2]}}]})");
        },
                    "profiles[1].x: needs min, opt and max"),
        "of several profiles, each is named by its index");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","profiles":[{"x":{"min":[1],"opt":[1,2],"max":[1]}}]})"); },
                    "same rank"),
        "shape ranks agree");
  check(throws_with([] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","profiles":{"x":{"min":[1],"opt":[1],"max":[1]}}})"); },
                    "profiles: want an array"),
        "profiles is a list");
  check(throws_with([] {
          tam::decode_request(R"({"onnx":"a","engine_tmp":"e","settings":{"memory-pools":{"workspace":99999999999999999999}}})");
        },
                    "want an integer"),
        "int64 overflow refused");
}

void test_settings() {
  // What encoding/json writes for matrix.Settings.Map(): keys are the matrix's key names.
  const std::string json =
      R"({"onnx":"a","engine_tmp":"e","settings":{"strongly-typed":true,"plugins":["/p/a.so"],"plugins-serialize":["/p/b.so"],)"
      R"("precision-constraints":"obey","layer-precisions":[{"layer":"/conv/*","type":"fp32"},{"layer":"*","type":"fp16"}],)"
      R"("layer-output-types":[{"layer":"fc","type":"fp16"}],)"
      R"("int8-calibration-cache":"/c.cache","tf32":false,"hardware-compatibility":"same-compute-capability",)"
      R"("version-compatible":true,"exclude-lean-runtime":true,"refit":"individual","strip-weights":true,)"
      R"("weight-streaming":true,"runtime-platform":"windows-amd64","tactic-sources":["+cublas","-cudnn"],)"
      R"("max-tactics":4,"sparsity":"enable","max-aux-streams":0,"l2-limit-for-tiling":4194304,)"
      R"("memory-pools":{"tactic-shared":49152},"profiling-verbosity":"detailed",)"
      R"("preview-features":["-aliased-plugin-io-10-03"],"dla":{"core":1,"gpu-fallback":true},)"
      R"("builder-flags":["debug","require-user-allocation"]}})";
  tam::BuildRequest r = tam::decode_request(json);
  const tam::Settings& s = r.settings;
  check(s.has_strongly_typed && s.strongly_typed && r.strongly_typed, "strongly-typed reaches strongly_typed");
  check(s.plugins.size() == 1 && s.plugins[0] == "/p/a.so" && s.plugins_serialize[0] == "/p/b.so", "plugins");
  check(s.precision_constraints == "obey", "precision-constraints");
  check(s.layer_precisions.size() == 2 && s.layer_precisions[0].first == "/conv/*" && s.layer_precisions[0].second == "fp32" &&
            s.layer_precisions[1].first == "*",
        "layer-precisions, in the order written");
  check(s.layer_output_types[0].second == "fp16", "layer-output-types");
  check(s.int8_calibration_cache == "/c.cache", "int8-calibration-cache");
  check(s.has_tf32 && !s.tf32, "tf32 false is kept, not taken for absent");
  check(s.hardware_compatibility == "same-compute-capability" && s.refit == "individual", "enums");
  check(s.has_version_compatible && s.version_compatible && s.exclude_lean_runtime && s.strip_weights && s.weight_streaming,
        "flags");
  check(s.runtime_platform == "windows-amd64" && s.sparsity == "enable" && s.profiling_verbosity == "detailed", "more enums");
  check(s.tactic_sources.size() == 2 && s.tactic_sources[1] == "-cudnn", "tactic-sources");
  check(s.has_max_tactics && s.max_tactics == 4, "max-tactics");
  check(s.has_max_aux_streams && s.max_aux_streams == 0, "max-aux-streams 0 is kept");
  check(s.has_l2_limit_for_tiling && s.l2_limit_for_tiling == 4194304, "l2-limit-for-tiling");
  check(s.memory_pools.size() == 1 && s.memory_pools[0].first == "tactic-shared" && s.memory_pools[0].second == 49152,
        "memory-pools");
  check(s.preview_features.size() == 1 && s.preview_features[0] == "-aliased-plugin-io-10-03", "preview-features");
  check(s.has_dla && s.dla.core == 1 && s.dla.gpu_fallback, "dla");
  check(s.builder_flags.size() == 2 && s.builder_flags[1] == "require-user-allocation", "builder-flags");
}

void test_settings_errors() {
  auto with = [](const std::string& settings) {
    return [settings] { tam::decode_request(R"({"onnx":"a","engine_tmp":"e","settings":)" + settings + "}"); };
  };
  check(throws_with(with(R"({"warp-speed":true})"), "settings.warp-speed: unknown setting"), "unknown key refused");
  check(throws_with(with(R"({"refit":"partial"})"), "settings.refit: \"partial\" is unknown; allowed: none, refit"),
        "enum value checked");
  check(throws_with(with(R"({"tactic-sources":["cublas"]})"), "wants a sign"), "toggle needs a sign");
  check(throws_with(with(R"({"max-aux-streams":65})"), "settings.max-aux-streams must be 0 to 64"), "range");
  check(throws_with(with(R"({"dla":{"gpu-fallback":true}})"), "settings.dla: core is required"), "dla core");
  check(throws_with(with(R"({"memory-pools":{"l2":5}})"), "settings.memory-pools: \"l2\" is unknown"), "pool name");
  check(throws_with(with(R"({"tf32":"no"})"), "settings.tf32: want true or false"), "bool type");
  check(throws_with(with(R"({"builder-flags":["fast"]})"), "settings.builder-flags: \"fast\" is unknown"), "flag names");
  check(throws_with(with(R"({"dla":{"core":0,"fallback":true}})"), "settings.dla: \"fallback\" is unknown"), "dla fields");
  check(throws_with(with(R"({"layer-precisions":{"a":"fp16"}})"), "in the order written"),
        "layer-precisions is a list: a JSON object would lose the order");
  check(throws_with(with(R"({"layer-precisions":[{"layer":"a","type":"fp64"}]})"), "settings.layer-precisions.a: \"fp64\""),
        "layer types");
}

// The layer-precisions precedence (layer_match.h): an exact name wins over
// any glob whatever the order, * loses to every other pattern, and among the
// other globs the first written wins.
void test_layer_precedence() {
  using P = std::vector<std::pair<std::string, std::string>>;
  auto winner = [](const P& patterns, const char* layer) { return tam::winning_pattern(patterns, layer).index; };
  check(winner(P{{"conv1", "fp32"}, {"*", "fp16"}}, "conv1") == 0, "trtexec's rule: conv1:fp32,*:fp16");
  check(winner(P{{"*", "fp16"}, {"conv1", "fp32"}}, "conv1") == 1, "the exact name wins whatever the order");
  check(winner(P{{"*", "fp16"}, {"conv1", "fp32"}}, "fc") == 0, "* covers the rest");
  check(winner(P{{"/backbone/*", "fp16"}, {"*attn*", "fp32"}}, "/backbone/attn/MatMul") == 0,
        "among globs the first written wins");
  check(winner(P{{"*attn*", "fp32"}, {"/backbone/*", "fp16"}}, "/backbone/attn/MatMul") == 0, "... in either order written");
  check(winner(P{{"*", "fp16"}, {"/backbone/*", "fp32"}}, "/backbone/conv") == 1, "* loses to another glob");
  check(winner(P{{"/head/*", "fp16"}, {"/backbone/Conv", "int8"}, {"/backbone/*", "fp32"}}, "/backbone/Conv") == 1,
        "an exact name wins over an earlier glob");
  check(winner(P{{"/head/*", "fp16"}}, "/backbone/Conv") == -1, "no pattern names it");
  check(tam::winning_pattern(P{{"*", "fp16"}, {"conv1", "fp32"}}, "conv1").exact, "an exact name is said to be one");
  check(!tam::winning_pattern(P{{"conv*", "fp16"}}, "conv1").exact, "a glob's match is not exact");
  check(tam::winning_pattern(P{{"a*b", "fp16"}}, "a*b").exact, "a name holding * is matched exactly first");
}

// The pattern syntax is trtexec's (matchStringWithOneWildcard): * matches
// any run of characters, / included; ? and [ are characters of a name. More
// than one * is trt-action's: each is a wildcard.
void test_layer_pattern_syntax() {
  check(tam::layer_matches("*", "/a/b") && tam::layer_matches("*", ""), "* matches any name, / included");
  check(tam::layer_matches("/conv*", "/conv1/Conv") && !tam::layer_matches("/conv*", "/fc/conv1"), "a prefix and *");
  check(tam::layer_matches("*Conv", "/conv1/Conv") && !tam::layer_matches("*Conv", "/conv1/Conv_1"), "* and a suffix");
  check(tam::layer_matches("/a*/b", "/a/b") && tam::layer_matches("/a*/b", "/ax/y/b"), "* in the middle, empty too");
  check(!tam::layer_matches("ab*ba", "aba"), "the prefix and the suffix do not overlap");
  check(tam::layer_matches("conv?", "conv?") && !tam::layer_matches("conv?", "conv1"), "? is a character");
  check(tam::layer_matches("conv[12]", "conv[12]") && !tam::layer_matches("conv[12]", "conv1"), "[ is a character");
  check(tam::layer_matches("conv[*", "conv[1") && !tam::layer_matches("conv[*", "conv1"), "[ is a character in a glob too");
  check(tam::layer_matches("*attn*", "/backbone/attn/MatMul") && !tam::layer_matches("*attn*", "/backbone/mlp"),
        "each of several * is a wildcard");
  check(tam::layer_matches("a*b*c", "abc") && tam::layer_matches("a*b*c", "axxbyyc") && !tam::layer_matches("a*b*c", "acb"),
        "several * keep their order");
  check(tam::layer_matches("a**", "a") && tam::glob_matches("**", ""), "* runs");
  check(!tam::layer_matches("a", "ab") && !tam::layer_matches("ab", "a"), "a name without * is exact");
}

}  // namespace

int main() {
  test_layer_precedence();
  test_layer_pattern_syntax();
  test_settings();
  test_settings_errors();
  test_full_request();
  test_minimal_request();
  test_profiles_in_order();
  test_no_monitor();
  test_strings();
  test_errors();
  return tamtest::summary();
}
