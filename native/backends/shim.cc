// shim.cc: a TensorRT build backend (see native/trtaction.h, "backend ABI").
//
// One source, compiled once per TensorRT flavour against that flavour's
// headers, because their class layouts differ:
//
//   -DTAM_FLAVOR_RTX    TensorRT-RTX 1.x   -> libtam_rtx.so
//   -DTAM_FLAVOR_TRT10  TensorRT 10.x      -> libtam_trt10.so
//   -DTAM_FLAVOR_TRT11  TensorRT 11.x      -> libtam_trt11.so
//
// The TensorRT library is dlopen'ed at run time, never linked, so one binary
// serves machines with or without it, and reports clearly which is missing.
// Only the C entry points are looked up (createInferBuilder_INTERNAL and
// friends); everything else is a virtual call through the objects they return.
//
// Two C++ runtimes. A release backend is compiled with LLVM's libc++ linked
// in (scripts/zig-cc, so it runs on glibc 2.28 with no libstdc++), while
// TensorRT and its Python bindings use the system's libstdc++. Both follow
// the Itanium C++ ABI, so calls through TensorRT's virtual classes work
// alike; what they must never share is a C++ standard library object or an
// exception, and this file keeps to that:
//
//   - What crosses is TensorRT's interfaces (virtual classes), C strings,
//     plain structs (Dims, Weights) and memory TensorRT owns and frees (its
//     objects are deleted through their virtual destructors). The one std::
//     type in those interfaces, IParser::supportsModel's SubGraphCollection_t
//     (a std::vector, NvOnnxParser.h), is never called. The std::type_info
//     tam_backend_conduit_types hands pybind11 is read for its name only
//     (internal/pyhook's _native.py says why that is the same in both).
//   - No exception of ours reaches TensorRT: every callback it calls
//     (ILogger::log, IProgressMonitor, the calibrator) is noexcept and
//     catches or cannot throw, and every export below catches all and is
//     noexcept itself, so nothing unwinds into Go, Python or C.
//   - No exception of TensorRT's reaches us: its C entry points and every
//     method of its builder, network, config and parser are noexcept, so an
//     exception inside TensorRT ends in TensorRT (std::terminate, with either
//     build of this file). This matters: unwinding a libstdc++ exception
//     through a frame compiled with libc++ does not reach its catch (...); it
//     crashes in the other runtime's unwinder (measured here). The only
//     methods the shim calls that are not noexcept are IParserError's
//     accessors (desc, func, node, nodeName, nodeOperator), which return
//     fields of the parser's error record.
//   - The backend exports nothing but the backend ABI (backend.map): no
//     operator new or std:: symbol of ours for TensorRT to bind to.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <NvInfer.h>
#include <NvOnnxParser.h>

#include "backend_table.h"
#include "builder_settings.h"
#include "files.h"
#include "host_log.h"
#include "precision.h"
#include "profiles.h"
#include "request.h"
#include "tee_monitor.h"
#include "trtaction.h"
#include "version_gate.h"

#if defined(TAM_FLAVOR_RTX)
#ifndef TRT_MAJOR_RTX
#error "TAM_FLAVOR_RTX must be compiled against the TensorRT-RTX headers (TRT_RTX_INCLUDE)"
#endif
#elif defined(TAM_FLAVOR_TRT10)
#if NV_TENSORRT_MAJOR != 10 || defined(TRT_MAJOR_RTX)
#error "TAM_FLAVOR_TRT10 must be compiled against TensorRT 10.x headers (TRT10_INCLUDE)"
#endif
#elif defined(TAM_FLAVOR_TRT11)
#if NV_TENSORRT_MAJOR != 11 || defined(TRT_MAJOR_RTX)
#error "TAM_FLAVOR_TRT11 must be compiled against TensorRT 11.x headers (TRT11_INCLUDE)"
#endif
#else
#error "define one of TAM_FLAVOR_RTX, TAM_FLAVOR_TRT10, TAM_FLAVOR_TRT11"
#endif

#define TAM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// ------------------------------------------------------------ flavour facts

// kFlavour, kBackend, kProduct and the sonames come from
// backend_table.h, generated from the backend registry (internal/backend)
// for the TAM_FLAVOR_* this is compiled as. Its kLibEnv is for tests and
// messages only: the shim reads no variable (see load_library).
static_assert(tam::kFlavourMajor == NV_TENSORRT_MAJOR, "backend_table.h and the headers disagree on the major version");
using tam::kBackend;
using tam::kFlavour;
using tam::kInferSoname;
using tam::kParserSoname;
using tam::kProduct;

std::string version_string(int64_t major, int64_t minor, int64_t patch, int64_t build) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) + "." +
         std::to_string(build);
}

const std::string& compiled_version() {
  static const std::string v = version_string(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, NV_TENSORRT_PATCH, NV_TENSORRT_BUILD);
  return v;
}

// ------------------------------------------------------------ errors

// BuildError carries a status and a message to the extern "C" boundary.
struct BuildError {
  int32_t status;
  std::string message;
};

[[noreturn]] void fail(const std::string& message) { throw BuildError{TAM_FAILED, message}; }

void copy_out(const std::string& s, char* buf, size_t cap) {
  if (buf == nullptr || cap == 0) return;
  size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
  std::memcpy(buf, s.data(), n);
  buf[n] = '\0';
}

// ------------------------------------------------------------ library loading

using CreateBuilderFn = void* (*)(void*, int32_t);
using CreateParserFn = void* (*)(void*, void*, int32_t);
using VersionFn = int32_t (*)();

struct Library {
  std::string infer_path;  // as resolved by the dynamic loader
  std::string parser_path;
  CreateBuilderFn create_builder = nullptr;
  CreateParserFn create_parser = nullptr;
  int32_t major = 0, minor = 0, patch = 0, build = 0;

  std::string version() const { return version_string(major, minor, patch, build); }
};

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// candidate turns a --trt-lib / environment value into a file to dlopen: a
// folder means the flavour's soname inside it.
std::string candidate(const std::string& value, const char* soname) {
  return is_directory(value) ? value + "/" + soname : value;
}

// loaded_path asks the loader which file a handle came from.
std::string loaded_path(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0')
    return map->l_name;
  return fallback;
}

// open_first dlopens the first candidate that loads; on failure it throws
// TAM_UNAVAILABLE listing every attempt and how to install the library, in
// one line ("tried A (origin): why; then B (origin): why"), as the Go side
// lists the folders it looked in: a build's reason is one sentence.
struct Candidate {
  std::string file;
  std::string origin;  // where the name came from, for the error message
};

void* open_first(const std::vector<Candidate>& candidates, const char* what, const std::string& fix, std::string* path) {
  std::string tried;
  for (const auto& c : candidates) {
    dlerror();
    if (void* h = dlopen(c.file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *path = loaded_path(h, c.file);
      return h;
    }
    const char* e = dlerror();
    tried += (tried.empty() ? "; tried " : "; then ") + c.file + " (" + c.origin + "): " + (e ? e : "not loadable");
  }
  throw BuildError{TAM_UNAVAILABLE, std::string("cannot load the ") + kProduct + " " + what + tried +
                                        (fix.empty() ? std::string() : ". To fix: " + fix)};
}

template <typename Fn>
Fn symbol(void* handle, const char* name, const std::string& path) {
  void* p = dlsym(handle, name);
  if (p == nullptr) throw BuildError{TAM_UNAVAILABLE, path + " has no symbol " + name + "; is it " + kProduct + "?"};
  return reinterpret_cast<Fn>(p);
}

// load_library loads the builder library from lib_path (a file, or a folder
// holding the soname), else from the loader's search path, and the ONNX
// parser beside it. Where lib_path comes from (--trt-lib, the backend's
// variable, the Python environment's wheel folder) is decided on the Go side
// (internal/backend, LocateLibrary), the one place the engine cache also
// asks, so a key names the file a build loads; lib_origin says which, for
// the messages, and lib_fix how to get the library, which depends on how
// trt-action was installed (internal/install). A location given is never silently replaced by another
// library. Handles are never closed: TensorRT keeps threads and global
// state for the process.
Library load_library(const std::string& lib_path, const std::string& lib_origin, const std::string& lib_fix) {
  std::vector<Candidate> infer_candidates;
  if (!lib_path.empty())
    infer_candidates.push_back({candidate(lib_path, kInferSoname), lib_origin.empty() ? "as given" : lib_origin});
  else
    infer_candidates.push_back({kInferSoname, "on the library search path"});

  Library lib;
  void* infer = open_first(infer_candidates, "library", lib_fix, &lib.infer_path);
  auto major = symbol<VersionFn>(infer, "getInferLibMajorVersion", lib.infer_path);
  lib.major = major();
  lib.minor = symbol<VersionFn>(infer, "getInferLibMinorVersion", lib.infer_path)();
  lib.patch = symbol<VersionFn>(infer, "getInferLibPatchVersion", lib.infer_path)();
  lib.build = symbol<VersionFn>(infer, "getInferLibBuildVersion", lib.infer_path)();
  lib.create_builder = symbol<CreateBuilderFn>(infer, "createInferBuilder_INTERNAL", lib.infer_path);

  std::vector<Candidate> parser_candidates;
  if (lib.infer_path.find('/') != std::string::npos)
    parser_candidates.push_back({dir_of(lib.infer_path) + "/" + kParserSoname, "beside the library"});
  parser_candidates.push_back({kParserSoname, "on the library search path"});
  void* parser = open_first(parser_candidates, "ONNX parser library", lib_fix, &lib.parser_path);
  lib.create_parser = symbol<CreateParserFn>(parser, "createNvOnnxParser_INTERNAL", lib.parser_path);
  return lib;
}

// check_version refuses a library of another major version: its classes
// have another layout, and the other backend .so must be used instead.
void check_version(const Library& lib) {
  if (lib.major != NV_TENSORRT_MAJOR)
    throw BuildError{TAM_UNAVAILABLE, lib.infer_path + " is " + kProduct + " " + lib.version() + ", but this backend (" +
                                          kBackend + ") was compiled for " + kProduct + " " +
                                          std::to_string(NV_TENSORRT_MAJOR) + ".x"};
}

// ------------------------------------------------------------ logger

// HostLogger is TensorRT's view of tam::HostLogSink. TensorRT keeps the
// first logger it is given for the whole process, so this one is a
// process-wide object whose host is swapped per build.
class HostLogger : public nvinfer1::ILogger {
 public:
  void log(Severity severity, const char* msg) noexcept override {
    try {
      sink_.log(static_cast<int32_t>(severity), msg);
    } catch (...) {
    }
  }

  void attach(const tam_host* host) { sink_.attach(host); }
  // detach returns once no call into the host is in progress.
  void detach() { sink_.detach(); }
  std::string last_error() { return sink_.last_error(); }
  uint64_t error_mark() { return sink_.error_mark(); }
  std::string errors_since(uint64_t mark) { return sink_.errors_since(mark); }

 private:
  tam::HostLogSink sink_;
};

HostLogger& logger() {
  static HostLogger* instance = new HostLogger();  // never destroyed: TensorRT may log at exit
  return *instance;
}

// LoggerAttachment binds the logger to one build's host for its lifetime.
class LoggerAttachment {
 public:
  explicit LoggerAttachment(const tam_host* host) { logger().attach(host); }
  ~LoggerAttachment() { logger().detach(); }
  LoggerAttachment(const LoggerAttachment&) = delete;
  LoggerAttachment& operator=(const LoggerAttachment&) = delete;
};

// ------------------------------------------------------------ progress monitor

// HostMonitor forwards TensorRT's progress callbacks to the host and does
// nothing else: they run on TensorRT's threads while tactics are timed.
class HostMonitor : public nvinfer1::IProgressMonitor {
 public:
  explicit HostMonitor(const tam_host* host) : host_(host) {}

  void phaseStart(const char* phase, const char* parent, int32_t nb_steps) noexcept override {
    host_->phase_start(host_->ctx, phase, parent, nb_steps);
  }
  bool stepComplete(const char* phase, int32_t step) noexcept override {
    return host_->step_complete(host_->ctx, phase, step) != 0;
  }
  void phaseFinish(const char* phase) noexcept override { host_->phase_finish(host_->ctx, phase); }

 private:
  const tam_host* host_;
};

// ------------------------------------------------------------ the build

template <typename T>
using Owned = std::unique_ptr<T>;  // TensorRT 10+ objects are freed with delete

// check_request_fits_flavour refuses what this flavour cannot do before the
// library is loaded, so a wrong matrix entry fails the same way everywhere.
void check_request_fits_flavour(const tam::BuildRequest& req) {
  // Only checked here; build() applies them.
  tam::precision_flags(kFlavour, req.precision, req.strongly_typed);
  tam::check_settings_fit_flavour(kFlavour, req.settings);
#if defined(TAM_FLAVOR_RTX)
  if (!req.timing_cache.empty())
    fail("timing_cache: TensorRT-RTX has no timing cache API (and a cache would need a GPU); remove timing_cache");
#else
  if (!req.targets.empty())
    fail("targets apply to the tensorrt-rtx backend only; TensorRT builds for the GPU it runs on");
#endif
}

// apply_precision sets the BuilderFlag of each precision value precision.h
// returned, as the settings table names it (settings_enums.h).
void apply_precision(nvinfer1::IBuilderConfig& config, const std::vector<std::string>& values) {
  for (const auto& p : values) {
    if (auto flag = tam::enums::precision(p)) {
      config.setFlag(*flag);
    } else {
      fail("internal error: precision " + p + " sets no flag");  // precision_flags leaves such values out
    }
  }
}

#if defined(TAM_FLAVOR_RTX)
// apply_targets sets the targets, in the order the request lists them (a
// set, in the settings table's order: the matrix makes it so).
void apply_targets(nvinfer1::IBuilderConfig& config, const tam::BuildRequest& req) {
  if (req.targets.empty()) return;  // TensorRT-RTX's own default; never kCURRENT, which needs a GPU
  if (!config.setNbComputeCapabilities(static_cast<int32_t>(req.targets.size())))
    fail("TensorRT-RTX refused " + std::to_string(req.targets.size()) + " targets: " + logger().last_error());
  for (size_t i = 0; i < req.targets.size(); ++i) {
    const std::string& t = req.targets[i];
    if (!config.setComputeCapability(tam::enums::targets(t), static_cast<int32_t>(i)))
      fail("TensorRT-RTX refused target " + t + ": " + logger().last_error());
  }
}
#endif

// parse_onnx fills the network; on failure the message names each refused
// node and what the parser said about it, in one line ("refused m.onnx:
// node 3 (Unique): why; node 7 …"), like every list in a build's reason.
void parse_onnx(nvonnxparser::IParser& parser, const std::string& path) {
  if (parser.parseFromFile(path.c_str(), static_cast<int32_t>(nvinfer1::ILogger::Severity::kWARNING))) return;
  std::ostringstream msg;
  msg << "the ONNX parser refused " << path;
  int32_t n = parser.getNbErrors();
  const char* separator = ": ";
  for (int32_t i = 0; i < n; ++i) {
    const nvonnxparser::IParserError* e = parser.getError(i);
    if (e == nullptr) continue;
    msg << separator;
    separator = "; ";
    if (e->node() >= 0) {
      msg << "node " << e->node();
      const char* name = e->nodeName();
      const char* op = e->nodeOperator();
      if (name != nullptr && name[0] != '\0') msg << " \"" << name << "\"";
      if (op != nullptr && op[0] != '\0') msg << " (" << op << ")";
      msg << ": ";
    }
    // A failed operator check reports just "false"; its function name
    // (checkUnique, ...) says more.
    const char* desc = e->desc() ? e->desc() : "";
    const char* func = e->func() ? e->func() : "";
    if (std::strcmp(desc, "false") == 0 || desc[0] == '\0')
      msg << "refused by the parser" << (func[0] ? std::string(" in ") + func : std::string());
    else
      msg << desc;
  }
  if (n == 0) msg << ": " << logger().last_error();
  fail(msg.str());
}

#if !defined(TAM_FLAVOR_RTX)
// TimingCache holds the build's timing cache. It starts from the file (an
// incompatible file is ignored with a warning) and afterwards merges the
// build's timings into whatever the file holds by then, under the lock, so
// concurrent builds sharing one file lose nothing. The file's folder is
// created if missing: the matrix may name a cache in a folder nobody made.
class TimingCache {
 public:
  TimingCache(nvinfer1::IBuilderConfig& config, const std::string& path, const tam_host* host)
      : config_(config), path_(path) {
    std::vector<char> blob;
    {
      tam::make_parent_dirs(path_);
      tam::FileLock lock(path_);
      blob = tam::read_file(path_);
    }
    cache_.reset(config_.createTimingCache(blob.data(), blob.size()));
    if (cache_ && config_.setTimingCache(*cache_, false)) return;
    host->log(host->ctx, TAM_SEV_WARNING,
              ("timing cache " + path_ + " does not fit this TensorRT version or GPU; starting an empty one").c_str());
    cache_.reset(config_.createTimingCache(nullptr, 0));
    if (!cache_ || !config_.setTimingCache(*cache_, false))
      fail("cannot create a timing cache: " + logger().last_error());
  }

  // save_or_warn merges and writes the cache. It runs after the engine is
  // written, and a cache is only an accelerator, so a failure here is a
  // warning: failing the build would make the supervisor delete a complete
  // engine.
  void save_or_warn(const tam_host* host) {
    std::string error;
    try {
      save();
      return;
    } catch (const BuildError& e) {
      error = e.message;
    } catch (const std::exception& e) {
      error = e.what();
    }
    const std::string warning = "timing cache " + path_ + " was not saved (the engine is complete): " + error;
    host->log(host->ctx, TAM_SEV_WARNING, warning.c_str());
  }

 private:
  void save() {
    const nvinfer1::ITimingCache* used = config_.getTimingCache();
    if (used == nullptr) return;
    tam::FileLock lock(path_);
    std::vector<char> blob = tam::read_file(path_);
    Owned<nvinfer1::ITimingCache> merged(config_.createTimingCache(blob.data(), blob.size()));
    if (!merged || !merged->combine(*used, false)) merged.reset(config_.createTimingCache(nullptr, 0));
    if (!merged || !merged->combine(*used, false)) fail("cannot merge the timing cache: " + logger().last_error());
    Owned<nvinfer1::IHostMemory> bytes(merged->serialize());
    if (!bytes) fail("cannot serialize the timing cache: " + logger().last_error());
    tam::replace_file(path_, bytes->data(), bytes->size());
  }

  nvinfer1::IBuilderConfig& config_;
  std::string path_;
  Owned<nvinfer1::ITimingCache> cache_;  // must outlive the build
};
#endif

// ------------------------------------------------------------ calls newer than 10.0

// make_gate is tam::Gate for this flavour: on 10.x it weighs the headers'
// and the loaded library's minor versions; TensorRT 11.x and TensorRT-RTX
// have every call the shim makes.
tam::Gate make_gate(const Library& lib) {
#if defined(TAM_FLAVOR_TRT10)
  return tam::Gate(NV_TENSORRT_MINOR, lib.minor);
#else
  (void)lib;
  return tam::Gate(INT32_MAX, INT32_MAX);
#endif
}

const tam::TrtErrors& trt_errors() {
  static const tam::TrtErrors errors{[] { return logger().error_mark(); },
                                     [](uint64_t mark) { return logger().errors_since(mark); }};
  return errors;
}

// settings_note names the settings a failed build had (every one, as the
// request lists them), since TensorRT's message does not say which of them
// (if any) it failed on.
std::string settings_note(const std::vector<std::string>& setting_keys) {
  if (setting_keys.empty()) return "";
  return " (with settings: " + tam::detail::join(setting_keys) + ")";
}

int32_t network_flags(const tam::BuildRequest& req) {
#if NV_TENSORRT_MAJOR == 10 && !defined(TAM_FLAVOR_RTX)
  if (req.strongly_typed) return 1 << static_cast<int32_t>(nvinfer1::NetworkDefinitionCreationFlag::kSTRONGLY_TYPED);
#else
  (void)req;  // always strongly typed; kSTRONGLY_TYPED is a deprecated no-op
#endif
  return 0;
}

// build runs one build to its serialized engine; every failure, a cancel
// included, is a BuildError (or another exception) that carries its message.
void build(const tam_host* host, const tam::BuildRequest& req) {
  check_request_fits_flavour(req);
  Library lib = load_library(req.lib_path, req.lib_origin, req.lib_fix);
  check_version(lib);
  LoggerAttachment attach(host);
  const tam::Gate gate = make_gate(lib);
  const std::string refusal = gate.refusal(tam::versioned_settings(req.settings), lib.infer_path + " is " + kProduct + " " + lib.version(),
                                           compiled_version());
  if (!refusal.empty()) fail(refusal);

  // Declaration order is destruction order reversed: the monitor outlives
  // the config that points at it, the parser dies before its network.
  HostMonitor monitor(host);
  Owned<nvinfer1::IBuilder> builder(
      static_cast<nvinfer1::IBuilder*>(lib.create_builder(&logger(), NV_TENSORRT_VERSION)));
  if (!builder)
    fail(std::string("cannot create a ") + kProduct + " builder (library " + lib.version() + ", headers " +
         compiled_version() + "): " + logger().last_error());
  Owned<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(network_flags(req)));
  if (!network) fail("cannot create a network: " + logger().last_error());
  tam::load_plugins(*builder, req.settings, trt_errors());
  Owned<nvonnxparser::IParser> parser(
      static_cast<nvonnxparser::IParser*>(lib.create_parser(network.get(), &logger(), NV_ONNX_PARSER_VERSION)));
  if (!parser) fail("cannot create the ONNX parser (" + lib.parser_path + "): " + logger().last_error());
  parse_onnx(*parser, req.onnx);
#if TAM_HAS_LAYER_PRECISIONS || TAM_HAS_LAYER_OUTPUT_TYPES
  tam::apply_layer_types(*network, req.settings);
#endif

  Owned<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
  if (!config) fail("cannot create a builder config: " + logger().last_error());
  apply_precision(*config, tam::precision_flags(kFlavour, req.precision, req.strongly_typed));
  tam::apply_config(*config, req.settings, gate, trt_errors());
#if TAM_HAS_INT8_CALIBRATION_CACHE
  // The calibrator must outlive the build; it only serves the cache file.
  std::unique_ptr<tam::CacheOnlyCalibrator> calibrator;
  if (!req.settings.int8_calibration_cache.empty()) {
    calibrator = std::make_unique<tam::CacheOnlyCalibrator>(req.settings.int8_calibration_cache);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    config->setInt8Calibrator(calibrator.get());
#pragma GCC diagnostic pop
  }
#endif
#if defined(TAM_FLAVOR_RTX)
  apply_targets(*config, req);
#endif
  tam::add_profiles(*builder, *network, *config, req.profiles, kProduct, trt_errors());
#if !defined(TAM_FLAVOR_RTX)
  std::unique_ptr<TimingCache> timing;
  if (!req.timing_cache.empty()) timing = std::make_unique<TimingCache>(*config, req.timing_cache, host);
#endif
  // no_monitor exists to measure what the monitor costs (scripts/bench-real).
  if (!req.no_monitor) config->setProgressMonitor(&monitor);

  if (host->cancelled(host->ctx)) throw BuildError{TAM_CANCELLED, "cancelled before the build started"};
  Owned<nvinfer1::IHostMemory> engine(builder->buildSerializedNetwork(*network, *config));
  if (!engine) {
    if (host->cancelled(host->ctx)) throw BuildError{TAM_CANCELLED, "cancelled during the build"};
    std::string last = logger().last_error();
    fail((last.empty() ? std::string("the build failed without an error message") : last) + settings_note(req.setting_keys));
  }
  tam::write_file(req.engine_tmp, engine->data(), engine->size());
#if !defined(TAM_FLAVOR_RTX)
  if (timing) timing->save_or_warn(host);
#endif
}

std::string info_json(const std::string& lib_path, const std::string& lib_origin, const std::string& lib_fix) {
  std::string library, path, error;
  try {
    Library lib = load_library(lib_path, lib_origin, lib_fix);
    library = lib.version();
    path = lib.infer_path;
    check_version(lib);
  } catch (const BuildError& e) {
    error = e.message;
  }
  using tamjson::quote;
  return std::string("{\"backend\":") + quote(kBackend) + ",\"abi\":" + std::to_string(TAM_BACKEND_ABI) +
         ",\"compiled_against\":" + quote(compiled_version()) + ",\"library\":" + quote(library) +
         ",\"library_path\":" + quote(path) + ",\"error\":" + quote(error) + "}";
}

}  // namespace

// tam_backend_info: see trtaction.h. Adds "error": why the library could not
// be used ("" when it can).
TAM_EXPORT int64_t tam_backend_info(const char* lib_path, const char* lib_origin, const char* lib_fix, char* buf,
                                    size_t cap) noexcept {
  try {
    std::string json = info_json(lib_path ? lib_path : "", lib_origin ? lib_origin : "", lib_fix ? lib_fix : "");
    copy_out(json, buf, cap);
    return static_cast<int64_t>(json.size());
  } catch (...) {
    copy_out("{}", buf, cap);
    return 2;
  }
}

TAM_EXPORT int32_t tam_backend_build(const tam_host* host, const char* request_json, char* err, size_t errcap) noexcept {
  try {
    if (host == nullptr || host->abi != TAM_BACKEND_ABI) {
      copy_out("backend ABI mismatch: the host is not ABI " + std::to_string(TAM_BACKEND_ABI), err, errcap);
      return TAM_FAILED;
    }
    tam::BuildRequest req = tam::decode_request(request_json ? request_json : "");
    build(host, req);
    copy_out("", err, errcap);
    return TAM_OK;
  } catch (const BuildError& e) {
    copy_out(e.message, err, errcap);
    return e.status;
  } catch (const std::exception& e) {
    copy_out(e.what(), err, errcap);
    return TAM_FAILED;
  } catch (...) {
    copy_out("unknown C++ exception in the backend", err, errcap);
    return TAM_FAILED;
  }
}

// ------------------------------------------------------------ a program's own config

// The exports below serve a builder script's Python process (trtaction.h,
// "a program's own builder config"; internal/pyhook's _native.py calls
// them through ctypes). The std::type_info handed to pybind11's conduit is
// this compilation's: pybind11 finds the bindings' registered type by the
// type's name (N8nvinfer114IBuilderConfigE in every flavour), and checks
// that the capsule holding it is named as std::type_info is
// (pybind11/detail/type_caster_base.h, cpp_conduit_method, in
// https://github.com/pybind/pybind11). It reads nothing else of it, so one
// made with libc++ serves bindings built with libstdc++ (stdlib says which
// library made it; _native.py tries that library's ABI ids first).

TAM_EXPORT void tam_backend_conduit_types(tam_conduit_types* out) noexcept {
  try {
    if (out == nullptr) return;
    out->config_type = &typeid(nvinfer1::IBuilderConfig);
    out->config_type_name = typeid(nvinfer1::IBuilderConfig).name();
    out->type_info_name = typeid(std::type_info).name();
#if defined(__GLIBCXX__)
    out->stdlib = "libstdcpp";
#elif defined(_LIBCPP_VERSION)
    out->stdlib = "libcpp";
#else
    out->stdlib = "";
#endif
  } catch (...) {
  }
}

TAM_EXPORT tam_attachment* tam_backend_attach(void* config, const tam_host* host, char* err, size_t errcap) noexcept {
  try {
    if (host == nullptr || host->abi != TAM_BACKEND_ABI) {
      copy_out("backend ABI mismatch: the host is not ABI " + std::to_string(TAM_BACKEND_ABI), err, errcap);
      return nullptr;
    }
    if (config == nullptr) {
      copy_out("no builder config", err, errcap);
      return nullptr;
    }
    auto* a = new tam_attachment(*static_cast<nvinfer1::IBuilderConfig*>(config), host);
    copy_out("", err, errcap);
    return a;
  } catch (const std::exception& e) {
    copy_out(e.what(), err, errcap);
  } catch (...) {
    copy_out("unknown C++ exception in the backend", err, errcap);
  }
  return nullptr;
}

TAM_EXPORT int32_t tam_backend_detach(tam_attachment* a) noexcept {
  try {
    if (a == nullptr) return -1;
    int32_t flags = a->detach();
    delete a;
    return flags;
  } catch (...) {
    return -1;
  }
}
