//go:build cgo

// nvml.cc: NVML's C API, resolved with dlsym. The signatures and struct
// layouts are NVML's own (nvml.h of the CUDA toolkit, also in the NVML
// API reference, https://docs.nvidia.com/deploy/nvml-api/): functions
// return nvmlReturn_t (an int, 0 for success), devices are opaque
// handles, and nvmlDeviceGetComputeRunningProcesses_v3 and _v2 fill
// nvmlProcessInfo_t {unsigned int pid; unsigned long long usedGpuMemory;
// unsigned int gpuInstanceId; unsigned int computeInstanceId;}, the
// unversioned one of older drivers the first two fields only;
// nvmlDeviceGetMemoryInfo fills nvmlMemory_t {unsigned long long total;
// unsigned long long free; unsigned long long used;}, in bytes.

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nvml.h"

namespace {

using nvmlReturn = int;
using nvmlDevice = void*;

constexpr nvmlReturn kSuccess = 0;
constexpr nvmlReturn kInsufficientSize = 7;
// usedGpuMemory when the driver cannot tell (NVML_VALUE_NOT_AVAILABLE).
constexpr unsigned long long kNotAvailable = ~0ULL;

struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

struct MemoryInfo {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct ProcessInfoV2 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

using InitFn = nvmlReturn (*)();
using ShutdownFn = nvmlReturn (*)();
using CountFn = nvmlReturn (*)(unsigned int*);
using HandleFn = nvmlReturn (*)(unsigned int, nvmlDevice*);
using ProcessesFn = nvmlReturn (*)(nvmlDevice, unsigned int*, void*);
using MemoryInfoFn = nvmlReturn (*)(nvmlDevice, MemoryInfo*);
using ErrorStringFn = const char* (*)(nvmlReturn);

void copy_error(const std::string& msg, char* err, size_t errcap) {
  if (err == nullptr || errcap == 0) return;
  std::snprintf(err, errcap, "%s", msg.c_str());
}

// first resolves the first of names the library has.
void* first(void* dl, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* f = dlsym(dl, name)) return f;
  }
  return nullptr;
}

}  // namespace

struct tam_nvml {
  void* dl = nullptr;
  ShutdownFn shutdown = nullptr;
  CountFn count = nullptr;
  HandleFn handle = nullptr;
  ProcessesFn processes = nullptr;
  size_t info_size = 0;  // sizeof the struct processes fills
  MemoryInfoFn memory_info = nullptr;  // optional: only the start-up check reads it
  ErrorStringFn error_string = nullptr;
  std::vector<unsigned char> buf;

  std::string describe(const char* call, nvmlReturn r) const {
    std::string what = error_string != nullptr ? error_string(r) : "";
    if (what.empty()) what = "error " + std::to_string(r);
    return std::string(call) + ": " + what;
  }
};

extern "C" {

int tam_nvml_open(const char* path, tam_nvml** out, char* err, size_t errcap) {
  try {
    *out = nullptr;
    dlerror();
    void* dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (dl == nullptr) {
      const char* e = dlerror();
      copy_error(std::string("cannot load ") + path + ": " + (e != nullptr ? e : "unknown error"), err, errcap);
      return -1;
    }
    auto n = new tam_nvml();
    n->dl = dl;
    auto init = reinterpret_cast<InitFn>(first(dl, {"nvmlInit_v2", "nvmlInit"}));
    n->shutdown = reinterpret_cast<ShutdownFn>(first(dl, {"nvmlShutdown"}));
    n->count = reinterpret_cast<CountFn>(first(dl, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}));
    n->handle = reinterpret_cast<HandleFn>(first(dl, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}));
    n->error_string = reinterpret_cast<ErrorStringFn>(first(dl, {"nvmlErrorString"}));
    n->memory_info = reinterpret_cast<MemoryInfoFn>(first(dl, {"nvmlDeviceGetMemoryInfo"}));
    if (void* f = first(dl, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"})) {
      n->processes = reinterpret_cast<ProcessesFn>(f);
      n->info_size = sizeof(ProcessInfoV2);
    } else if (void* f1 = first(dl, {"nvmlDeviceGetComputeRunningProcesses"})) {
      n->processes = reinterpret_cast<ProcessesFn>(f1);
      n->info_size = sizeof(ProcessInfoV1);
    }
    if (init == nullptr || n->shutdown == nullptr || n->count == nullptr || n->handle == nullptr ||
        n->processes == nullptr) {
      copy_error(std::string(path) + " lacks the NVML functions trt-action reads", err, errcap);
      delete n;  // the library stays loaded, as every library trt-action opens
      return -1;
    }
    if (nvmlReturn r = init(); r != kSuccess) {
      copy_error(n->describe("nvmlInit", r), err, errcap);
      delete n;
      return -1;
    }
    *out = n;
    return 0;
  } catch (...) {
    copy_error("cannot load NVML: internal error", err, errcap);
    return -1;
  }
}

int64_t tam_nvml_processes(tam_nvml* n, uint32_t* pids, uint64_t* bytes, size_t cap, char* err, size_t errcap) {
  try {
    unsigned int devices = 0;
    if (nvmlReturn r = n->count(&devices); r != kSuccess) {
      copy_error(n->describe("nvmlDeviceGetCount", r), err, errcap);
      return -1;
    }
    size_t found = 0;
    for (unsigned int d = 0; d < devices; ++d) {
      nvmlDevice dev = nullptr;
      if (n->handle(d, &dev) != kSuccess) continue;  // a GPU lost or not ours to read
      unsigned int count = 0;
      for (int attempt = 0; attempt < 4; ++attempt) {
        count = static_cast<unsigned int>(n->buf.size() / n->info_size);
        nvmlReturn r = n->processes(dev, &count, n->buf.empty() ? nullptr : n->buf.data());
        if (r == kInsufficientSize) {
          n->buf.resize((count + 16) * n->info_size);
          count = 0;
          continue;
        }
        if (r != kSuccess) count = 0;
        break;
      }
      for (unsigned int i = 0; i < count; ++i) {
        const unsigned char* p = n->buf.data() + i * n->info_size;
        unsigned int pid;
        unsigned long long used;
        if (n->info_size == sizeof(ProcessInfoV2)) {
          ProcessInfoV2 info;
          std::memcpy(&info, p, sizeof info);
          pid = info.pid;
          used = info.usedGpuMemory;
        } else {
          ProcessInfoV1 info;
          std::memcpy(&info, p, sizeof info);
          pid = info.pid;
          used = info.usedGpuMemory;
        }
        if (used == kNotAvailable) continue;
        if (found < cap) {
          pids[found] = pid;
          bytes[found] = used;
        }
        ++found;
      }
    }
    return static_cast<int64_t>(found);
  } catch (...) {
    copy_error("NVML: internal error", err, errcap);
    return -1;
  }
}

int64_t tam_nvml_total_bytes(tam_nvml* n, char* err, size_t errcap) {
  try {
    if (n->memory_info == nullptr) {
      copy_error("the NVML library has no nvmlDeviceGetMemoryInfo", err, errcap);
      return -1;
    }
    unsigned int devices = 0;
    if (nvmlReturn r = n->count(&devices); r != kSuccess) {
      copy_error(n->describe("nvmlDeviceGetCount", r), err, errcap);
      return -1;
    }
    unsigned long long total = 0;
    for (unsigned int d = 0; d < devices; ++d) {
      nvmlDevice dev = nullptr;
      if (nvmlReturn r = n->handle(d, &dev); r != kSuccess) {
        copy_error(n->describe("nvmlDeviceGetHandleByIndex", r), err, errcap);
        return -1;
      }
      MemoryInfo info{};
      if (nvmlReturn r = n->memory_info(dev, &info); r != kSuccess) {
        copy_error(n->describe("nvmlDeviceGetMemoryInfo", r), err, errcap);
        return -1;
      }
      total += info.total;
    }
    return static_cast<int64_t>(total);
  } catch (...) {
    copy_error("NVML: internal error", err, errcap);
    return -1;
  }
}

void tam_nvml_close(tam_nvml* n) {
  try {
    if (n == nullptr) return;
    n->shutdown();
    delete n;
  } catch (...) {
  }
}

}  // extern "C"
