// support_test.cc: tests for the shim's TensorRT-free parts: files.h (the
// timing cache's folder, lock and replacement), precision.h (what
// `precision` means per flavour) and host_log.h (the logger's hand-over
// between builds). Built and run by `make backends-test`, under the
// address and undefined-behaviour sanitizers.
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "files.h"
#include "host_log.h"
#include "precision.h"
#include "test_check.h"

namespace {

using tamtest::check;
using tamtest::throws_with;

// ------------------------------------------------------------ helpers

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string slurp(const std::string& path) {
  std::vector<char> bytes = tam::read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

// entries_containing counts the names in dir that contain part.
int entries_containing(const std::string& dir, const std::string& part) {
  int n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d))
      if (std::string(e->d_name).find(part) != std::string::npos) ++n;
    ::closedir(d);
  }
  return n;
}

// TempDir is a fresh folder, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tam-support-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      std::perror("mkdtemp");
      std::exit(2);
    }
    path_ = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ------------------------------------------------------------ files.h

void test_make_parent_dirs() {
  TempDir t;
  const std::string cache = t.path() + "/cache/nested/resnet.cache";
  check(throws_with([&] { tam::FileLock lock(cache); }, "resnet.cache.lock: No such file"),
        "without its folder the lock cannot be opened (the reported bug)");

  tam::make_parent_dirs(cache);
  check(is_dir(t.path() + "/cache/nested"), "every missing folder is created");
  check(!exists(cache), "the file itself is not created");
  tam::make_parent_dirs(cache);
  check(is_dir(t.path() + "/cache/nested"), "existing folders are fine");
  {
    tam::FileLock lock(cache);
    check(exists(cache + ".lock"), "the lock opens once the folder exists");
  }

  tam::make_parent_dirs(t.path() + "//double//slash/x.cache");
  check(is_dir(t.path() + "/double/slash"), "repeated slashes are one separator");
  tam::make_parent_dirs("no-folder.cache");  // the current folder: nothing to do
  check(!exists("no-folder.cache"), "a bare file name creates nothing");

  tam::write_file(t.path() + "/plain", "x", 1);
  check(throws_with([&] { tam::make_parent_dirs(t.path() + "/plain/sub/x.cache"); },
                    "creating folder " + t.path() + "/plain: a file of that name exists"),
        "a file where a folder should be is named");
}

void test_replace_file() {
  TempDir t;
  const std::string path = t.path() + "/t.cache";
  check(tam::read_file(path).empty(), "a missing file reads as empty");
  tam::replace_file(path, "first", 5);
  tam::replace_file(path, "second", 6);
  check(slurp(path) == "second", "the new content replaces the old");
  check(entries_containing(t.path(), ".partial-") == 0, "no temporary file is left after success");

  // rename(2) cannot put a file over a folder that holds something.
  const std::string folder = t.path() + "/taken";
  tam::make_parent_dirs(folder + "/inside");
  tam::write_file(folder + "/inside", "x", 1);
  check(throws_with([&] { tam::replace_file(folder, "data", 4); }, "replacing " + folder), "a failed rename throws");
  check(entries_containing(t.path(), ".partial-") == 0, "a failed rename removes its temporary file");
}

void test_replace_file_write_failure() {
  TempDir t;
  const std::string path = t.path() + "/t.cache";
  tam::replace_file(path, "old", 3);

  // A file size limit makes write(2) fail (EFBIG) the way a full disk would.
  std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit saved {};
  ::getrlimit(RLIMIT_FSIZE, &saved);
  struct rlimit small = saved;
  small.rlim_cur = 16;
  ::setrlimit(RLIMIT_FSIZE, &small);
  const std::string big(4096, 'x');
  // The temporary is named as the supervisor's partial files are
  // (<path>.partial-<pid>-<n>), so the supervisor can remove one a killed
  // worker left.
  bool threw = throws_with([&] { tam::replace_file(path, big.data(), big.size()); },
                           "writing " + path + ".partial-" + std::to_string(::getpid()) + "-");
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, SIG_DFL);

  check(threw, "a failed write throws, naming the temporary file");
  check(entries_containing(t.path(), ".partial-") == 0, "a failed write removes its temporary file");
  check(slurp(path) == "old", "a failed write leaves the old file as it was");
}

void test_no_write_through_links() {
  TempDir t;
  const std::string victim = t.path() + "/victim";
  tam::write_file(victim, "keep", 4);

  const std::string tmp = t.path() + "/engine.partial-1-0";
  check(::symlink(victim.c_str(), tmp.c_str()) == 0, "symlink");
  check(throws_with([&] { tam::write_file(tmp, "evil", 4); }, "creating " + tmp), "a link at a written path is an error");
  check(slurp(victim) == "keep", "the link's target is untouched");

  const std::string cache = t.path() + "/t.cache";
  const std::string elsewhere = t.path() + "/elsewhere";
  check(::symlink(elsewhere.c_str(), (cache + ".lock").c_str()) == 0, "symlink");
  check(throws_with([&] { tam::FileLock lock(cache); }, "opening " + cache + ".lock"), "a link at the lock is an error");
  check(!exists(elsewhere), "no file is created through the lock's link");

  const std::string linked = t.path() + "/linked.cache";
  check(::symlink(victim.c_str(), linked.c_str()) == 0, "symlink");
  tam::replace_file(linked, "new", 3);
  check(slurp(victim) == "keep", "replacing a link does not write its target");
  check(slurp(linked) == "new", "the link is replaced by the file");
}

// ------------------------------------------------------------ precision.h

using tam::Flavour;
using Flags = std::vector<std::string>;

Flags flags(Flavour f, std::vector<std::string> precision, bool strongly_typed = false) {
  return tam::precision_flags(f, precision, strongly_typed);
}

void test_precision_tensorrt10() {
  const auto T10 = Flavour::kTRT10;
  check(flags(T10, {}).empty(), "no precision, no flags");
  check(flags(T10, {"fp32"}).empty(), "fp32 sets nothing: FP32 is always allowed");
  check(flags(T10, {"fp16"}) == Flags{"fp16"}, "fp16");
  check(flags(T10, {"bf16"}) == Flags{"bf16"}, "bf16");
  check(flags(T10, {"int8"}) == Flags{"int8"}, "int8");
  check(flags(T10, {"fp8"}) == Flags{"fp8"}, "fp8");
  check(flags(T10, {"tf32"}) == Flags{"tf32"}, "tf32");
  check((flags(T10, {"best"}) == Flags{"fp16", "int8", "bf16"}), "best is fp16, int8 and bf16");
  check((flags(T10, {"fp16", "best", "fp32", "fp16"}) == Flags{"fp16", "int8", "bf16"}),
        "flags are not repeated and keep list order");
  check(throws_with([&] { flags(T10, {"fp16"}, true); }, "\"fp16\" contradicts strongly_typed"),
        "a strongly typed TensorRT 10 network takes no precision");
  check(throws_with([&] { flags(T10, {"best"}, true); }, "contradicts strongly_typed"), "nor best");
  check(flags(T10, {"tf32"}, true) == Flags{"tf32"}, "but tf32, a math mode, is fine");
  check(throws_with([&] { flags(T10, {"fp4"}); }, "precision \"fp4\" is unknown; allowed: fp32, fp16"),
        "a value the table lacks is refused, naming the allowed ones");
}

// Every precision value of the settings table means something to the
// backend: the values it turns on are values of the table that stand for
// flags of their own, and a value that turns on nothing is the one the table
// says asks for nothing (fp32). settings_test.cc checks that each such value
// names a BuilderFlag of the headers.
void test_every_precision_value_turns_on_flags() {
  for (const auto& p : tam::allowed::precision) {
    const Flags got = flags(Flavour::kTRT10, {p});
    check(!got.empty() || p == "fp32", ("precision " + p + " turns on no flag").c_str());
    for (const auto& part : got) {
      check(std::find(tam::allowed::precision.begin(), tam::allowed::precision.end(), part) != tam::allowed::precision.end() &&
                tam::parts::precision(part) == Flags{part},
            ("precision " + p + " turns on " + part + ", which is no flag of its own").c_str());
    }
  }
}

void test_precision_strongly_typed_flavours() {
  for (Flavour f : {Flavour::kTRT11, Flavour::kRTX}) {
    const std::string product = tam::flavour_name(f);
    check(throws_with([&] { flags(f, {"fp32"}); }, "precision \"fp32\": " + product + " networks are always strongly typed"),
          "fp32 is refused too: there is no flag to set");
    check(throws_with([&] { flags(f, {"fp16"}); }, "cast the ONNX model's tensors to fp16"), "fp16 says to cast");
    check(throws_with([&] { flags(f, {"int8"}); }, "QuantizeLinear/DequantizeLinear to int8"), "int8 says to quantize");
    check(throws_with([&] { flags(f, {"best"}); }, "no \"all precisions\" switch"), "best says there is none");
    check(flags(f, {"tf32"}) == Flags{"tf32"}, "tf32 is a builder flag everywhere");
    check(flags(f, {}).empty(), "no precision is fine");
  }
  check(throws_with([] { flags(Flavour::kTRT11, {"fp16"}); }, "TensorRT 11.x"), "names TensorRT 11.x");
  check(throws_with([] { flags(Flavour::kRTX, {"fp16"}); }, "TensorRT-RTX 1.x networks"), "names TensorRT-RTX");
}

void test_precision_unknown() {
  for (Flavour f : {Flavour::kTRT10, Flavour::kTRT11, Flavour::kRTX})
    check(throws_with([&] { flags(f, {"fp64"}); }, "\"fp64\" is unknown; allowed: fp32, fp16, bf16, int8, fp8, tf32, best"),
          "an unknown precision lists what is allowed");
}

// ------------------------------------------------------------ host_log.h

struct Recorder {
  std::vector<int32_t> severities;
  std::vector<std::string> lines;
};

tam_host host_for(void* ctx, void (*log)(void*, int32_t, const char*)) {
  tam_host h{};
  h.abi = TAM_BACKEND_ABI;
  h.ctx = ctx;
  h.log = log;
  return h;
}

void record(void* ctx, int32_t severity, const char* msg) {
  auto* r = static_cast<Recorder*>(ctx);
  r->severities.push_back(severity);
  r->lines.push_back(msg);
}

void test_log_forwarding() {
  tam::HostLogSink sink;
  Recorder r;
  tam_host host = host_for(&r, record);
  sink.log(TAM_SEV_ERROR, "before any build");
  sink.attach(&host);
  check(sink.last_error().empty(), "attach starts a build with no error");
  sink.log(TAM_SEV_VERBOSE, "tactic timing");
  sink.log(TAM_SEV_INFO, "info");
  sink.log(TAM_SEV_WARNING, "warning");
  sink.log(TAM_SEV_ERROR, "error");
  sink.log(TAM_SEV_INFO, nullptr);
  check((r.lines == std::vector<std::string>{"info", "warning", "error"}), "INFO and worse are forwarded, VERBOSE is not");
  check((r.severities == std::vector<int32_t>{TAM_SEV_INFO, TAM_SEV_WARNING, TAM_SEV_ERROR}), "severities kept");
  check(sink.last_error() == "error", "the newest error is remembered");
  sink.log(TAM_SEV_INTERNAL_ERROR, "internal");
  check(sink.last_error() == "internal", "internal errors count as errors");
  sink.detach();
  sink.log(TAM_SEV_ERROR, "after the build");
  check(r.lines.size() == 4, "nothing is forwarded after detach");
}

// A host whose log call takes a while, as a queue under load might.
struct SlowHost {
  std::atomic<int> inside{0};
  std::atomic<int> calls{0};
};

void slow_log(void* ctx, int32_t, const char*) {
  auto* h = static_cast<SlowHost*>(ctx);
  ++h->inside;
  ++h->calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  --h->inside;
}

// A TensorRT thread may log while build() returns and the host is freed.
// detach() must wait for a call in progress and stop later ones; the
// sanitizer reports any call into the freed host.
void test_errors_since_a_mark() {
  tam::HostLogSink sink;
  sink.log(TAM_SEV_ERROR, "before");
  uint64_t mark = sink.error_mark();
  check(sink.errors_since(mark).empty(), "nothing since a fresh mark");
  sink.log(TAM_SEV_WARNING, "a warning is no error");
  sink.log(TAM_SEV_ERROR, "cause");
  sink.log(TAM_SEV_ERROR, "consequence");
  check(sink.errors_since(mark) == "cause; consequence", "errors after the mark, oldest first");
  check(sink.last_error() == "consequence", "last_error is the newest");
  for (int i = 0; i < 20; ++i) sink.log(TAM_SEV_ERROR, std::to_string(i).c_str());
  check(sink.errors_since(mark).rfind("12; ", 0) == 0, "only the newest 8 are kept");
}

void test_detach_waits_for_a_call_in_progress() {
  tam::HostLogSink sink;
  for (int round = 0; round < 10; ++round) {
    auto* slow = new SlowHost();
    auto* host = new tam_host(host_for(slow, slow_log));
    sink.attach(host);
    std::atomic<bool> stop{false};
    std::thread trt([&] {
      while (!stop.load()) sink.log(TAM_SEV_INFO, "a TensorRT thread logs");
    });
    while (slow->calls.load() == 0) std::this_thread::yield();
    sink.detach();
    const int inside = slow->inside.load();
    const int calls = slow->calls.load();
    delete host;
    delete slow;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the thread keeps logging into the void
    stop = true;
    trt.join();
    if (inside != 0 || calls == 0) {
      check(false, "detach returned while a log call into the host was still running");
      return;
    }
  }
  check(true, "detach waits for the call in progress");
}

}  // namespace

int main() {
  test_errors_since_a_mark();
  test_make_parent_dirs();
  test_replace_file();
  test_replace_file_write_failure();
  test_no_write_through_links();
  test_precision_tensorrt10();
  test_every_precision_value_turns_on_flags();
  test_precision_strongly_typed_flavours();
  test_precision_unknown();
  test_log_forwarding();
  test_detach_waits_for_a_call_in_progress();
  return tamtest::summary();
}
