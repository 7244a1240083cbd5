// attach_rtx_test.cc: the shipped libtam_rtx.so attached to a config the
// test made itself, as a builder script's config is, on real TensorRT-RTX
// builds on the CPU (the library from TRT_ACTION_RTX_LIB or the loader's
// path, the model from TRT_ACTION_TEST_MODELS, default testdata/models):
// every callback reaches libtam_host.so's queue and the program's own
// monitor, the program's false and the host's cancel each stop the build,
// detach gives the config its monitor back, and the engine is byte for byte
// the one built without trt-action. Without the library or the model it
// says SKIPPED and passes, except in CI (CI or TRT_ACTION_REQUIRE_RTX set),
// where that fails. Built and run by `make backends-test` with the
// TensorRT-RTX headers (backends.mk).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <NvInfer.h>
#include <NvOnnxParser.h>

#include "backend_table.h"
#include "test_check.h"
#include "trtaction.h"

namespace {

using tamtest::check;

class QuietLogger : public nvinfer1::ILogger {
 public:
  void log(Severity severity, const char* msg) noexcept override {
    if (severity <= Severity::kERROR) std::fprintf(stderr, "TensorRT-RTX: %s\n", msg);
  }
};

// ProgramMonitor is the program's own monitor: it records each call and may
// cancel. TensorRT may call from several threads.
class ProgramMonitor : public nvinfer1::IProgressMonitor {
 public:
  std::vector<std::string> calls;
  int cancel_after = -1;  // stepComplete returns false from this many steps on
  void phaseStart(const char* phase, const char* parent, int32_t n) noexcept override {
    add("s " + std::string(phase) + " " + (parent ? parent : "null") + " " + std::to_string(n));
  }
  bool stepComplete(const char* phase, int32_t step) noexcept override {
    int seen = add("p " + std::string(phase) + " " + std::to_string(step));
    return cancel_after < 0 || seen < cancel_after;
  }
  void phaseFinish(const char* phase) noexcept override { add("f " + std::string(phase)); }

 private:
  int add(std::string call) {
    std::lock_guard<std::mutex> lock(mu_);
    calls.push_back(std::move(call));
    return ++steps_;
  }
  std::mutex mu_;
  int steps_ = 0;
};

struct Libraries {
  void* infer = nullptr;
  void* parser = nullptr;
  void* backend = nullptr;
  void* host = nullptr;
  std::string missing;
};

std::string dir_from_env(const char* var) {
  const char* v = std::getenv(var);
  return v != nullptr && v[0] != '\0' ? std::string(v) + "/" : std::string();
}

void* open(const std::string& path, std::string* missing) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) *missing += std::string(missing->empty() ? "" : "; ") + path + ": " + dlerror();
  return h;
}

template <typename Fn>
Fn fn(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

// Tools is what one build needs from the libraries, looked up once.
struct Tools {
  void* (*create_builder)(void*, int32_t);
  void* (*create_parser)(void*, void*, int32_t);
  tam_backend_attach_fn attach;
  tam_backend_detach_fn detach;
  tam_monitor* (*monitor_new)();
  void (*monitor_free)(tam_monitor*);
  const tam_host* (*monitor_host)(tam_monitor*);
  void (*monitor_cancel)(tam_monitor*);
  size_t (*monitor_drain)(tam_monitor*, tam_event*, size_t);
  int64_t (*monitor_name)(tam_monitor*, uint64_t, char*, size_t);
};

// Run is one build's outcome.
struct Run {
  std::vector<char> engine;  // empty: the build returned nothing
  std::vector<std::string> host_calls;
  int32_t flags = -1;
  bool program_back = false;  // the config's monitor after detach is the program's (or none, as before)
};

std::string name(const Tools& t, tam_monitor* m, uint64_t id) {
  char buf[512];
  return id == 0 ? "null" : (t.monitor_name(m, id, buf, sizeof buf) < 0 ? "?" : std::string(buf));
}

// build builds the model; with attach, through the backend's monitor, which
// cancel_first cancels before the build starts.
Run build(const Tools& t, const std::string& model, ProgramMonitor* program, bool attach, bool cancel_first) {
  static QuietLogger logger;
  Run run;
  std::unique_ptr<nvinfer1::IBuilder> builder(
      static_cast<nvinfer1::IBuilder*>(t.create_builder(&logger, NV_TENSORRT_VERSION)));
  std::unique_ptr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(0));
  std::unique_ptr<nvonnxparser::IParser> parser(
      static_cast<nvonnxparser::IParser*>(t.create_parser(network.get(), &logger, NV_ONNX_PARSER_VERSION)));
  if (!parser->parseFromFile(model.c_str(), static_cast<int32_t>(nvinfer1::ILogger::Severity::kWARNING))) {
    check(false, ("the parser takes " + model).c_str());
    return run;
  }
  std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
  if (program != nullptr) config->setProgressMonitor(program);

  tam_monitor* m = t.monitor_new();
  tam_attachment* a = nullptr;
  if (attach) {
    char err[512];
    a = t.attach(config.get(), t.monitor_host(m), err, sizeof err);
    check(a != nullptr, "libtam_rtx.so attaches to the config");
    if (cancel_first) t.monitor_cancel(m);
  }
  std::unique_ptr<nvinfer1::IHostMemory> engine(builder->buildSerializedNetwork(*network, *config));
  if (a != nullptr) {
    run.flags = t.detach(a);
    run.program_back = config->getProgressMonitor() == program;
  }
  if (engine) {
    const char* p = static_cast<const char*>(engine->data());
    run.engine.assign(p, p + engine->size());
  }
  tam_event events[1024];
  for (size_t n; (n = t.monitor_drain(m, events, 1024)) > 0;) {
    for (size_t i = 0; i < n; ++i) {
      const tam_event& e = events[i];
      std::string phase = name(t, m, e.phase);
      if (e.kind == TAM_EV_START)
        run.host_calls.push_back("s " + phase + " " + name(t, m, e.parent) + " " + std::to_string(e.n));
      else if (e.kind == TAM_EV_STEP)
        run.host_calls.push_back("p " + phase + " " + std::to_string(e.n));
      else
        run.host_calls.push_back("f " + phase);
    }
  }
  t.monitor_free(m);
  return run;
}

}  // namespace

int main() {
  const bool required = std::getenv("CI") != nullptr || std::getenv("TRT_ACTION_REQUIRE_RTX") != nullptr;
  const char* models = std::getenv("TRT_ACTION_TEST_MODELS");
  const std::string model = std::string(models != nullptr && models[0] != '\0' ? models : "testdata/models") + "/cnn.onnx";

  Libraries libs;
  std::string lib_dir = dir_from_env(tam::kLibEnv);
  libs.infer = open(lib_dir + tam::kInferSoname, &libs.missing);
  libs.parser = open(lib_dir + tam::kParserSoname, &libs.missing);
  libs.backend = open(TAM_BACKEND_SO, &libs.missing);
  libs.host = open(TAM_HOST_SO, &libs.missing);
  if (std::FILE* f = std::fopen(model.c_str(), "rb")) {
    std::fclose(f);
  } else {
    libs.missing += std::string(libs.missing.empty() ? "" : "; ") + model + " (run scripts/make-test-models)";
  }
  if (!libs.missing.empty()) {
    std::printf("%s: %s\n", required ? "FAIL: missing in CI" : "SKIPPED: missing", libs.missing.c_str());
    return required ? 1 : 0;
  }

  Tools t{};
  t.create_builder = fn<void* (*)(void*, int32_t)>(libs.infer, "createInferBuilder_INTERNAL");
  t.create_parser = fn<void* (*)(void*, void*, int32_t)>(libs.parser, "createNvOnnxParser_INTERNAL");
  t.attach = fn<tam_backend_attach_fn>(libs.backend, "tam_backend_attach");
  t.detach = fn<tam_backend_detach_fn>(libs.backend, "tam_backend_detach");
  t.monitor_new = fn<tam_monitor* (*)()>(libs.host, "tam_monitor_new");
  t.monitor_free = fn<void (*)(tam_monitor*)>(libs.host, "tam_monitor_free");
  t.monitor_host = fn<const tam_host* (*)(tam_monitor*)>(libs.host, "tam_monitor_host");
  t.monitor_cancel = fn<void (*)(tam_monitor*)>(libs.host, "tam_monitor_cancel");
  t.monitor_drain = fn<size_t (*)(tam_monitor*, tam_event*, size_t)>(libs.host, "tam_monitor_drain");
  t.monitor_name = fn<int64_t (*)(tam_monitor*, uint64_t, char*, size_t)>(libs.host, "tam_monitor_name");

  Run plain = build(t, model, nullptr, false, false);
  check(!plain.engine.empty(), "a build without trt-action makes an engine");

  ProgramMonitor program;
  Run teed = build(t, model, &program, true, false);
  check(!teed.engine.empty(), "a build with the backend's monitor attached makes an engine");
  check(teed.engine == plain.engine, "and it is byte for byte the engine built without it");
  check(teed.host_calls.size() > 10 && teed.host_calls.front().rfind("s Building engine null ", 0) == 0,
        "libtam_host.so's queue holds the build's callbacks, from the root phase on");
  check(teed.host_calls == program.calls, "the program's monitor got every callback the queue holds, in order");
  check(teed.flags == 0, "no stop and no cancel are flagged");
  check(teed.program_back, "after detach the config's monitor is the program's again");

  Run alone = build(t, model, nullptr, true, false);
  check(alone.engine == plain.engine && alone.host_calls == teed.host_calls,
        "without a program monitor the same callbacks arrive and the same engine comes out");
  check(alone.program_back, "after detach a config that had no monitor has none");

  ProgramMonitor cancelling;
  cancelling.cancel_after = 3;
  Run cancelled = build(t, model, &cancelling, true, false);
  check(cancelled.engine.empty(), "the program's monitor returning false still cancels the build");
  check(cancelled.flags == TAM_ATTACH_USER_CANCELLED, "flagged as the program's cancel, not a stop");

  ProgramMonitor watching;
  Run stopped = build(t, model, &watching, true, true);
  check(stopped.engine.empty(), "a cancel of the host stops the build");
  check(stopped.flags == TAM_ATTACH_STOPPED, "flagged as a stop");
  check(!watching.calls.empty() && watching.calls == stopped.host_calls,
        "the program's monitor still hears every callback of a stopped build");
  return tamtest::summary();
}
