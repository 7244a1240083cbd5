/*
 * loader.h: opens a backend shared object and calls its two entry points.
 * Go cannot call C function pointers, so these small wrappers do.
 */
#ifndef TRTACTION_LOADER_H
#define TRTACTION_LOADER_H

#include "trtaction.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tam_backend {
  void* dl;
  tam_backend_info_fn info;
  tam_backend_build_fn build;
} tam_backend;

/* dlopens path (RTLD_NOW | RTLD_LOCAL) and resolves both entry points.
 * Returns 0, or -1 with a message in err. The library stays loaded for the
 * life of the process: unloading TensorRT is not safe. */
int tam_backend_open(const char* path, tam_backend* out, char* err, size_t errcap);

int64_t tam_backend_call_info(const tam_backend* b, const char* lib_path, const char* lib_origin, const char* lib_fix,
                              char* buf, size_t cap);
int32_t tam_backend_call_build(const tam_backend* b, const tam_host* host, const char* request_json, char* err,
                               size_t errcap);

#ifdef __cplusplus
}
#endif
#endif
