// fake_backend.cc: a backend shared object for the loader test. It speaks
// the tam_backend ABI without TensorRT: one phase of two steps, one log line,
// and the request JSON echoed into the "engine".

#include <cstdio>
#include <cstring>

#include "../trtaction.h"

// tam_backend_info echoes where it was told the library is, from where,
// and its fix (as "error": the one text field a real backend fills with
// them).
extern "C" int64_t tam_backend_info(const char* lib_path, const char* lib_origin, const char* lib_fix, char* buf,
                                    size_t cap) {
  return std::snprintf(buf, cap, "{\"backend\":\"fake\",\"abi\":%d,\"library_path\":\"%s\",\"error\":\"%s. To fix: %s\"}",
                       TAM_BACKEND_ABI, lib_path == nullptr ? "" : lib_path, lib_origin == nullptr ? "" : lib_origin,
                       lib_fix == nullptr ? "" : lib_fix);
}

extern "C" int32_t tam_backend_build(const tam_host* host, const char* request_json, char* err, size_t errcap) {
  host->log(host->ctx, TAM_SEV_WARNING, request_json);
  host->phase_start(host->ctx, "Fake phase", nullptr, 2);
  for (int i = 0; i < 2; ++i) {
    if (!host->step_complete(host->ctx, "Fake phase", i)) {
      host->phase_finish(host->ctx, "Fake phase");
      return TAM_CANCELLED;
    }
  }
  host->phase_finish(host->ctx, "Fake phase");
  std::snprintf(err, errcap, "fake backend builds no engine");
  return TAM_FAILED;
}
