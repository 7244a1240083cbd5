/*
 * nvml.h: GPU memory per process, read through NVML (libnvidia-ml.so.1,
 * which the NVIDIA driver ships), loaded at run time as the TensorRT
 * libraries are: a machine without the driver runs trt-action all the
 * same, with no GPU figures. Every function catches every exception.
 */
#ifndef TRTACTION_NVML_H
#define TRTACTION_NVML_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tam_nvml tam_nvml; /* opaque */

/* dlopens path and initialises NVML. Returns 0, or -1 with a message in
 * err (no library, no driver, a library without the functions). */
int tam_nvml_open(const char* path, tam_nvml** out, char* err, size_t errcap);

/* Lists the compute processes of every GPU: pids[i] holds bytes[i] of
 * GPU memory on one GPU (a process on two GPUs is listed twice). Returns
 * how many there are; when that is more than cap, only cap were written
 * and the caller asks again with room for them. -1 with a message in err
 * when NVML fails. */
int64_t tam_nvml_processes(tam_nvml* n, uint32_t* pids, uint64_t* bytes, size_t cap, char* err, size_t errcap);

/* The memory of every GPU NVML sees, summed (nvmlDeviceGetMemoryInfo's
 * total; a build's GPU figure sums its processes over every GPU too).
 * -1 with a message in err when NVML cannot tell. */
int64_t tam_nvml_total_bytes(tam_nvml* n, char* err, size_t errcap);

/* Shuts NVML down; the library stays loaded. */
void tam_nvml_close(tam_nvml* n);

#ifdef __cplusplus
}
#endif
#endif
