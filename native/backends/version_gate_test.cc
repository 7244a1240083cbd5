// version_gate_test.cc: tests for version_gate.h, which keeps the 10.x shim
// from calling a method the loaded TensorRT library's class tables lack.
// Built and run by `make backends-test`.
#include <string>
#include <vector>

#include "test_check.h"
#include "version_gate.h"

namespace {

using tamtest::check;

constexpr tam::VersionedSetting kLater{"later-setting", 12};
// As settings_table.h has it (the settings table says 10.8).
constexpr tam::VersionedSetting kTilingLevel{"tiling-optimization-level", 8};

void test_allows_only_when_headers_and_library_have_the_call() {
  check(tam::Gate(16, 16).allows(kTilingLevel), "10.16 headers, 10.16 library: tiling applies");
  check(tam::Gate(16, 8).allows(kTilingLevel), "10.8 library: the first that has it");
  check(!tam::Gate(16, 7).allows(kTilingLevel), "10.7 library: too old");
  check(!tam::Gate(16, 3).allows(kTilingLevel), "10.3 library (JetPack 6): too old");
  check(!tam::Gate(0, 16).allows(kTilingLevel), "10.0 headers cannot make the call at all");
}

void test_refused_keeps_request_order() {
  std::vector<tam::VersionedSetting> got = tam::Gate(16, 9).refused({kLater, kTilingLevel});
  check(got.size() == 1 && std::string(got[0].key) == "later-setting", "10.9 has tiling, lacks the 10.12 setting");
  got = tam::Gate(16, 3).refused({kLater, kTilingLevel});
  check(got.size() == 2 && std::string(got[0].key) == "later-setting" && std::string(got[1].key) == "tiling-optimization-level",
        "both refused, in request order");
  check(tam::Gate(16, 16).refused({kLater, kTilingLevel}).empty(), "nothing refused on a new library");
}

void test_warning_names_each_setting_and_what_it_needs() {
  const std::string lib = "/usr/lib/aarch64-linux-gnu/libnvinfer.so.10 is TensorRT 10.3.0.26";
  check(tam::Gate(16, 16).refusal({kTilingLevel}, lib, "10.16.0.72").empty(), "no refusal when all apply");
  check(tam::Gate(16, 3).refusal({}, lib, "10.16.0.72").empty(), "no refusal when nothing gated was asked for");

  std::string w = tam::Gate(16, 3).refusal({kTilingLevel}, lib, "10.16.0.72");
  check(w == lib + ", too old for tiling-optimization-level (needs 10.8): use a newer library or remove it", ("one setting: " + w).c_str());

  w = tam::Gate(16, 3).refusal({kTilingLevel, kLater}, lib, "10.16.0.72");
  check(w == lib + ", too old for tiling-optimization-level (needs 10.8), later-setting (needs 10.12): use a newer library or remove them",
        ("two settings: " + w).c_str());

  w = tam::Gate(0, 16).refusal({kTilingLevel}, lib, "10.0.1.6");
  check(w == "this backend was compiled against TensorRT 10.0.1.6 headers, which lack tiling-optimization-level (needs 10.8): "
             "rebuild the backend against the headers of the TensorRT you run, or remove it",
        ("old headers: " + w).c_str());

  w = tam::Gate(9, 16).refusal({kTilingLevel, kLater}, lib, "10.9.0.34");
  check(w.find("headers, which lack later-setting (needs 10.12)") != std::string::npos && w.find("tiling") == std::string::npos,
        ("headers older than the library: " + w).c_str());
}

void test_require_refuses_what_is_missing() {
  check(!tamtest::throws_with([] { tam::Gate(16, 8).require(kTilingLevel); }, ""), "10.8 library and 10.16 headers have it");
  check(tamtest::throws_with([] { tam::Gate(16, 3).require(kTilingLevel); },
                             "tiling-optimization-level needs TensorRT 10.8 in both the library (10.3) and the headers (10.16)"),
        "a 10.3 library: require throws before the call");
  check(tamtest::throws_with([] { tam::Gate(0, 16).require(kTilingLevel); }, "headers (10.0)"), "10.0 headers");
}

}  // namespace

int main() {
  test_require_refuses_what_is_missing();
  test_allows_only_when_headers_and_library_have_the_call();
  test_refused_keeps_request_order();
  test_warning_names_each_setting_and_what_it_needs();
  return tamtest::summary();
}
