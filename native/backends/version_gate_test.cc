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

void test_allows_only_when_headers_and_library_have_the_call() {
  check(tam::Gate(16, 16).allows(tam::kTilingLevel), "10.16 headers, 10.16 library: tiling applies");
  check(tam::Gate(16, 8).allows(tam::kTilingLevel), "10.8 library: the first that has it");
  check(!tam::Gate(16, 7).allows(tam::kTilingLevel), "10.7 library: too old");
  check(!tam::Gate(16, 3).allows(tam::kTilingLevel), "10.3 library (JetPack 6): too old");
  check(!tam::Gate(0, 16).allows(tam::kTilingLevel), "10.0 headers cannot make the call at all");
}

void test_refused_keeps_request_order() {
  std::vector<tam::VersionedSetting> got = tam::Gate(16, 9).refused({kLater, tam::kTilingLevel});
  check(got.size() == 1 && std::string(got[0].key) == "later-setting", "10.9 has tiling, lacks the 10.12 setting");
  got = tam::Gate(16, 3).refused({kLater, tam::kTilingLevel});
  check(got.size() == 2 && std::string(got[0].key) == "later-setting" && std::string(got[1].key) == "tiling-optimization-level",
        "both refused, in request order");
  check(tam::Gate(16, 16).refused({kLater, tam::kTilingLevel}).empty(), "nothing refused on a new library");
}

void test_warning_names_each_setting_and_what_it_needs() {
  const std::string lib = "/usr/lib/aarch64-linux-gnu/libnvinfer.so.10 is TensorRT 10.3.0.26";
  check(tam::Gate(16, 16).refusal({tam::kTilingLevel}, lib, "10.16.0.72").empty(), "no refusal when all apply");
  check(tam::Gate(16, 3).refusal({}, lib, "10.16.0.72").empty(), "no refusal when nothing gated was asked for");

  std::string w = tam::Gate(16, 3).refusal({tam::kTilingLevel}, lib, "10.16.0.72");
  check(w == lib + ", too old for tiling-optimization-level (needs 10.8): use a newer library or remove it", ("one setting: " + w).c_str());

  w = tam::Gate(16, 3).refusal({tam::kTilingLevel, kLater}, lib, "10.16.0.72");
  check(w == lib + ", too old for tiling-optimization-level (needs 10.8), later-setting (needs 10.12): use a newer library or remove them",
        ("two settings: " + w).c_str());

  w = tam::Gate(0, 16).refusal({tam::kTilingLevel}, lib, "10.0.1.6");
  check(w == "this backend was compiled against TensorRT 10.0.1.6 headers, which lack tiling-optimization-level (needs 10.8): "
             "rebuild the backend against the headers of the TensorRT you run, or remove it",
        ("old headers: " + w).c_str());

  w = tam::Gate(9, 16).refusal({tam::kTilingLevel, kLater}, lib, "10.9.0.34");
  check(w.find("headers, which lack later-setting (needs 10.12)") != std::string::npos && w.find("tiling") == std::string::npos,
        ("headers older than the library: " + w).c_str());
}

}  // namespace

int main() {
  test_allows_only_when_headers_and_library_have_the_call();
  test_refused_keeps_request_order();
  test_warning_names_each_setting_and_what_it_needs();
  return tamtest::summary();
}
