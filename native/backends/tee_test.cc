// tee_test.cc: trt-action's monitor on a program's own builder config
// (tee_monitor.h, and the exports of the shipped backend object and
// libtam_host.so that a builder script's Python process calls), compiled
// against each flavour's real headers (TensorRT 10.16, 11.1, TensorRT-RTX;
// -DTAM_FLAVOR_*). No TensorRT library is needed: IBuilderConfig's monitor
// calls go through its implementation table, where the test puts a stand-in
// that keeps the monitor it is given (its other methods generated from the
// same headers by gen_standin.sh). The backend object (TAM_BACKEND_SO) and
// the host library (TAM_HOST_SO) are the built files, loaded with dlopen as
// Python loads them. Built and run by `make backends-test` (backends.mk).
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <typeinfo>
#include <vector>

#include "standin.h"
#include "test_check.h"

#include "backend_table.h"
#include "tee_monitor.h"
#include "trtaction.h"

namespace {

using namespace nvinfer1;
using tamtest::check;
using tamtest::ConfigOver;

// MonitorSlot is a config's implementation that keeps its monitor, as
// TensorRT's does.
class MonitorSlot : public tamtest::VBuilderConfigDefaults {
 public:
  IProgressMonitor* monitor = nullptr;
  int sets = 0;
  void setProgressMonitor(IProgressMonitor* m) noexcept override {
    monitor = m;
    ++sets;
  }
  IProgressMonitor* getProgressMonitor() const noexcept override { return monitor; }
};

// Calls is what a monitor was told, one string per call, in order.
using Calls = std::vector<std::string>;

std::string text(const char* s) { return s == nullptr ? "null" : s; }

// ProgramMonitor is the program's own monitor: it records and may cancel.
class ProgramMonitor : public IProgressMonitor {
 public:
  Calls calls;
  int cancel_at_step = -1;  // stepComplete returns false at this step
  void phaseStart(const char* phase, const char* parent, int32_t n) noexcept override {
    calls.push_back("s " + text(phase) + " " + text(parent) + " " + std::to_string(n));
  }
  bool stepComplete(const char* phase, int32_t step) noexcept override {
    calls.push_back("p " + text(phase) + " " + std::to_string(step));
    return step != cancel_at_step;
  }
  void phaseFinish(const char* phase) noexcept override { calls.push_back("f " + text(phase)); }
};

// RecordingHost is a tam_host that records into calls and says stop from
// stop_at_step on.
struct RecordingHost {
  Calls calls;
  int stop_at_step = -1;
  tam_host table{};

  RecordingHost() {
    table.abi = TAM_BACKEND_ABI;
    table.ctx = this;
    table.phase_start = [](void* ctx, const char* phase, const char* parent, int32_t n) {
      self(ctx)->calls.push_back("s " + text(phase) + " " + text(parent) + " " + std::to_string(n));
    };
    table.step_complete = [](void* ctx, const char* phase, int32_t step) {
      self(ctx)->calls.push_back("p " + text(phase) + " " + std::to_string(step));
      return self(ctx)->stop_at_step >= 0 && step >= self(ctx)->stop_at_step ? 0 : 1;
    };
    table.phase_finish = [](void* ctx, const char* phase) { self(ctx)->calls.push_back("f " + text(phase)); };
  }
  static RecordingHost* self(void* ctx) { return static_cast<RecordingHost*>(ctx); }
};

// a_build calls the config's monitor as a small build would, and returns
// what each stepComplete returned.
std::vector<bool> a_build(IBuilderConfig& config) {
  IProgressMonitor* m = config.getProgressMonitor();
  std::vector<bool> results;
  m->phaseStart("Building engine", nullptr, 3);
  m->phaseStart("Timing", "Building engine", 2);
  for (int step = 0; step < 2; ++step) results.push_back(m->stepComplete("Timing", step));
  m->phaseFinish("Timing");
  results.push_back(m->stepComplete("Building engine", 2));
  m->phaseFinish("Building engine");
  return results;
}

const Calls kBuildCalls = {"s Building engine null 3", "s Timing Building engine 2", "p Timing 0", "p Timing 1",
                           "f Timing", "p Building engine 2", "f Building engine"};

void test_every_callback_reaches_the_host_and_the_programs_monitor() {
  MonitorSlot slot;
  ConfigOver config(&slot);
  ProgramMonitor program;
  config.setProgressMonitor(&program);
  RecordingHost host;
  {
    tam::Attachment a(config, &host.table);
    check(slot.monitor == &a.monitor, "attach installs its monitor on the config");
    auto results = a_build(config);
    check(results == std::vector<bool>{true, true, true}, "no one cancelled: every step goes on");
    check(host.calls == kBuildCalls, "the host saw every callback, in order");
    check(program.calls == kBuildCalls, "the program's monitor saw every callback, in order");
    check(a.detach() == 0, "nothing stopped and no cancel: no flags");
    check(slot.monitor == &program, "detach puts the program's monitor back");
  }
}

void test_without_a_program_monitor() {
  MonitorSlot slot;
  ConfigOver config(&slot);
  RecordingHost host;
  tam::Attachment a(config, &host.table);
  a_build(config);
  check(host.calls == kBuildCalls, "the host saw every callback with no program monitor");
  a.detach();
  check(slot.monitor == nullptr, "detach leaves the config without a monitor, as it was");
}

void test_the_programs_false_still_cancels() {
  MonitorSlot slot;
  ConfigOver config(&slot);
  ProgramMonitor program;
  program.cancel_at_step = 1;
  config.setProgressMonitor(&program);
  RecordingHost host;
  tam::Attachment a(config, &host.table);
  auto results = a_build(config);
  check(results == std::vector<bool>{true, false, true}, "the program's false is the build's false");
  check(a.detach() == TAM_ATTACH_USER_CANCELLED, "the program's cancel is flagged as the program's, not a stop");
}

void test_a_stop_cancels_and_the_program_still_hears_every_step() {
  MonitorSlot slot;
  ConfigOver config(&slot);
  ProgramMonitor program;
  config.setProgressMonitor(&program);
  RecordingHost host;
  host.stop_at_step = 1;
  tam::Attachment a(config, &host.table);
  auto results = a_build(config);
  check(results == std::vector<bool>{true, false, false}, "after the host's stop every step returns false");
  check(program.calls == kBuildCalls, "the program's monitor is still called at every step after a stop");
  check(a.detach() == TAM_ATTACH_STOPPED, "a stop is flagged as a stop");
}

void test_detach_keeps_a_monitor_set_during_the_build() {
  MonitorSlot slot;
  ConfigOver config(&slot);
  ProgramMonitor program, later;
  config.setProgressMonitor(&program);
  RecordingHost host;
  tam::Attachment a(config, &host.table);
  config.setProgressMonitor(&later);
  a.detach();
  check(slot.monitor == &later, "a monitor set on the config after ours stays: it is not ours to replace");
}

// ------------------------------------------------------------ the shipped objects

template <typename Fn>
Fn must_find(void* handle, const char* name) {
  void* p = dlsym(handle, name);
  check(p != nullptr, name);
  return reinterpret_cast<Fn>(p);
}

void test_the_backend_objects_exports() {
  const int failed_before = tamtest::failed;
  void* backend = dlopen(TAM_BACKEND_SO, RTLD_NOW | RTLD_LOCAL);
  void* host_lib = dlopen(TAM_HOST_SO, RTLD_NOW | RTLD_LOCAL);
  check(backend != nullptr, "the backend object loads: " TAM_BACKEND_SO);
  check(host_lib != nullptr, "libtam_host.so loads: " TAM_HOST_SO);
  if (backend == nullptr || host_lib == nullptr) {
    std::printf("  dlerror: %s\n", dlerror());
    return;
  }
  auto types_of = must_find<tam_backend_conduit_types_fn>(backend, "tam_backend_conduit_types");
  auto attach = must_find<tam_backend_attach_fn>(backend, "tam_backend_attach");
  auto detach = must_find<tam_backend_detach_fn>(backend, "tam_backend_detach");
  auto monitor_new = must_find<tam_monitor* (*)()>(host_lib, "tam_monitor_new");
  auto monitor_free = must_find<void (*)(tam_monitor*)>(host_lib, "tam_monitor_free");
  auto monitor_host = must_find<const tam_host* (*)(tam_monitor*)>(host_lib, "tam_monitor_host");
  auto monitor_cancel = must_find<void (*)(tam_monitor*)>(host_lib, "tam_monitor_cancel");
  auto monitor_drain = must_find<size_t (*)(tam_monitor*, tam_event*, size_t)>(host_lib, "tam_monitor_drain");
  if (tamtest::failed > failed_before) return;

  // The conduit finds the bindings' registered type by its name: the name
  // of IBuilderConfig these headers give (the same in every flavour, and
  // the one the TensorRT-RTX bindings register, N8nvinfer114IBuilderConfigE).
  tam_conduit_types types{};
  types_of(&types);
  check(types.config_type != nullptr && *static_cast<const std::type_info*>(types.config_type) == typeid(IBuilderConfig),
        "the conduit type is IBuilderConfig's");
  check(text(types.config_type_name) == "N8nvinfer114IBuilderConfigE", "the conduit type's name is nvinfer1::IBuilderConfig's");
  check(text(types.type_info_name) == typeid(std::type_info).name(), "the capsule name is std::type_info's name");
  check(text(types.stdlib) == "libstdcpp", "the C++ library is libstdc++, as pybind11's ABI ids spell it");

  MonitorSlot slot;
  ConfigOver config(&slot);
  ProgramMonitor program;
  config.setProgressMonitor(&program);

  char err[256];
  tam_host other{};
  other.abi = TAM_BACKEND_ABI + 1;
  check(attach(&config, &other, err, sizeof err) == nullptr && std::strstr(err, "ABI") != nullptr,
        "a host of another ABI is refused, saying so");
  check(attach(nullptr, &other, err, sizeof err) == nullptr, "no config, no attachment");
  check(slot.monitor == &program, "a refused attach leaves the config alone");

  tam_monitor* m = monitor_new();
  tam_attachment* a = attach(&config, monitor_host(m), err, sizeof err);
  check(a != nullptr, "the backend attaches to a config with libtam_host.so's host");
  if (a == nullptr) return;
  check(slot.monitor != &program && slot.monitor != nullptr, "the backend's monitor is on the config");
  a_build(config);
  tam_event events[16];
  size_t n = monitor_drain(m, events, 16);
  check(n == kBuildCalls.size(), "every callback reached libtam_host.so's queue");
  check(n > 0 && events[0].kind == TAM_EV_START && events[n - 1].kind == TAM_EV_FINISH, "in order");
  check(program.calls == kBuildCalls, "and the program's monitor");
  monitor_cancel(m);
  check(!config.getProgressMonitor()->stepComplete("Building engine", 2), "a cancel of the host stops the build");
  check(detach(a) == TAM_ATTACH_STOPPED, "detach says the build was stopped");
  check(slot.monitor == &program, "detach puts the program's monitor back");
  check(detach(nullptr) == -1, "detach of nothing is -1");
  monitor_free(m);
}

// The backend loads the library it is told, and its messages say where that
// came from (the Go side decides: internal/backend, LocateLibrary); it
// reads no variable of its own, so the one decision is also the engine
// cache's.
void test_the_library_origin_reaches_the_messages() {
  const int failed_before = tamtest::failed;
  void* backend = dlopen(TAM_BACKEND_SO, RTLD_NOW | RTLD_LOCAL);
  check(backend != nullptr, "the backend object loads: " TAM_BACKEND_SO);
  if (backend == nullptr) return;
  auto info = must_find<tam_backend_info_fn>(backend, "tam_backend_info");
  auto build = must_find<tam_backend_build_fn>(backend, "tam_backend_build");
  if (tamtest::failed > failed_before) return;

  const std::string folder = "/nonexistent-trt-action-env/tensorrt_rtx_libs";
  const std::string origin = "from the Python environment's tensorrt_rtx_libs (" + folder + ")";
  const std::string tried = "tried " + folder + " (" + origin + "): ";
  std::vector<char> buf(8192);
  const std::string fix = "pip install the library";
  info(folder.c_str(), origin.c_str(), fix.c_str(), buf.data(), buf.size());
  std::string answer(buf.data());
  check(answer.find(tried) != std::string::npos, "tam_backend_info names the file it tried with its origin");
  check(answer.find(". To fix: " + fix) != std::string::npos, "tam_backend_info's error ends with the fix it was told");
  if (answer.find(tried) == std::string::npos || answer.find(fix) == std::string::npos)
    std::printf("  answer: %s\n", answer.c_str());

  RecordingHost host;
  const std::string request = "{\"name\":\"m\",\"onnx\":\"/nonexistent.onnx\",\"engine_tmp\":\"/nonexistent.engine\","
                              "\"lib_path\":\"" + folder + "\",\"lib_origin\":\"" + origin + "\",\"lib_fix\":\"" + fix + "\"}";
  char err[4096];
  int32_t status = build(&host.table, request.c_str(), err, sizeof err);
  check(status == TAM_UNAVAILABLE, "a build whose library is missing is unavailable");
  check(std::strstr(err, tried.c_str()) != nullptr, "the build's reason names the file it tried with the request's origin");
  check(std::strstr(err, (". To fix: " + fix).c_str()) != nullptr, "the build's reason ends with the request's fix");
  if (std::strstr(err, tried.c_str()) == nullptr || std::strstr(err, fix.c_str()) == nullptr) std::printf("  reason: %s\n", err);

  // The variable is the Go side's to read: set here, the backend ignores it.
  const std::string variable_folder = "/nonexistent-variable-folder";
  ::setenv(tam::kLibEnv, variable_folder.c_str(), 1);
  info("", "", "", buf.data(), buf.size());
  answer = buf.data();
  ::unsetenv(tam::kLibEnv);
  check(answer.find(variable_folder) == std::string::npos && answer.find(std::string("from ") + tam::kLibEnv) == std::string::npos,
        "with no library named, the backend does not read its variable");
  if (answer.find(variable_folder) != std::string::npos) std::printf("  answer: %s\n", answer.c_str());
}

}  // namespace

int main() {
  test_every_callback_reaches_the_host_and_the_programs_monitor();
  test_without_a_program_monitor();
  test_the_programs_false_still_cancels();
  test_a_stop_cancels_and_the_program_still_hears_every_step();
  test_detach_keeps_a_monitor_set_during_the_build();
  test_the_backend_objects_exports();
  test_the_library_origin_reaches_the_messages();
  return tamtest::summary();
}
