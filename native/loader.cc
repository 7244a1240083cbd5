//go:build cgo

// loader.cc: backends are loaded with RTLD_LOCAL because every backend .so
// carries its own TensorRT C++ symbols (TensorRT 10, 11, RTX); with
// RTLD_GLOBAL the first one loaded would capture the others' names.

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "loader.h"

namespace {

void copy_error(const std::string& msg, char* err, size_t errcap) {
  if (err == nullptr || errcap == 0) return;
  std::snprintf(err, errcap, "%s", msg.c_str());
}

std::string last_dlerror() {
  const char* e = dlerror();
  return e == nullptr ? std::string("unknown dlerror") : std::string(e);
}

}  // namespace

extern "C" {

int tam_backend_open(const char* path, tam_backend* out, char* err, size_t errcap) {
  try {
    std::memset(out, 0, sizeof *out);
    dlerror();  // clear any stale error
    void* dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (dl == nullptr) {
      copy_error("cannot load backend " + std::string(path) + ": " + last_dlerror(), err, errcap);
      return -1;
    }
    void* info = dlsym(dl, "tam_backend_info");
    if (info == nullptr) {
      copy_error("backend " + std::string(path) + " has no tam_backend_info: " + last_dlerror(), err, errcap);
      return -1;
    }
    void* build = dlsym(dl, "tam_backend_build");
    if (build == nullptr) {
      copy_error("backend " + std::string(path) + " has no tam_backend_build: " + last_dlerror(), err, errcap);
      return -1;
    }
    out->dl = dl;
    out->info = reinterpret_cast<tam_backend_info_fn>(info);
    out->build = reinterpret_cast<tam_backend_build_fn>(build);
    return 0;
  } catch (...) {
    copy_error("cannot load backend: internal error", err, errcap);
    return -1;
  }
}

int64_t tam_backend_call_info(const tam_backend* b, const char* lib_path, const char* lib_origin, const char* lib_fix,
                              char* buf, size_t cap) {
  try {
    return b->info(lib_path, lib_origin, lib_fix, buf, cap);
  } catch (...) {
    return -1;
  }
}

int32_t tam_backend_call_build(const tam_backend* b, const tam_host* host, const char* request_json, char* err,
                               size_t errcap) {
  try {
    return b->build(host, request_json, err, errcap);
  } catch (...) {
    copy_error("backend threw an exception out of tam_backend_build", err, errcap);
    return TAM_FAILED;
  }
}

}  // extern "C"
