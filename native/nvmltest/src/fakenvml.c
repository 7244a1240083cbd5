/*
 * A stand-in for the driver's libnvidia-ml.so.1, for native's NVML tests
 * and the build tests' GPU figures: it exports the functions trt-action
 * resolves, with NVML's signatures and struct layouts (nvml.h: a
 * nvmlReturn_t result, opaque device handles, nvmlProcessInfo_t of pid,
 * usedGpuMemory, gpuInstanceId, computeInstanceId). Built with
 * -DFAKE_NVML_V1 it has only the unversioned functions of old drivers,
 * whose process struct is pid and usedGpuMemory alone.
 *
 * What it reports comes from the environment, read at each call:
 *   FAKE_NVML_INIT       nvmlInit's result (9: driver not loaded)
 *   FAKE_NVML_DEVICES    how many GPUs (default 1)
 *   FAKE_NVML_PROCS      device:pid:bytes entries, comma-separated
 *   FAKE_NVML_MATCH      text:bytes: every process whose command line holds
 *                        text is on GPU 0 with bytes
 *   FAKE_NVML_TOTAL      each GPU's memory in bytes (nvmlDeviceGetMemoryInfo;
 *                        default 80 GiB)
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
#ifndef FAKE_NVML_V1
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
#endif
} nvmlProcessInfo_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

static struct nvmlDevice_st { int index; } devices[16];

static int env_int(const char* name, int def) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? atoi(v) : def;
}

#ifdef FAKE_NVML_V1
#define INIT nvmlInit
#define COUNT nvmlDeviceGetCount
#define HANDLE nvmlDeviceGetHandleByIndex
#define PROCESSES nvmlDeviceGetComputeRunningProcesses
#else
#define INIT nvmlInit_v2
#define COUNT nvmlDeviceGetCount_v2
#define HANDLE nvmlDeviceGetHandleByIndex_v2
#define PROCESSES nvmlDeviceGetComputeRunningProcesses_v3
#endif

nvmlReturn_t INIT(void) { return env_int("FAKE_NVML_INIT", NVML_SUCCESS); }
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case 9: return "Driver Not Loaded";
    case 7: return "Insufficient Size";
    default: return "Unknown Error";
  }
}

nvmlReturn_t COUNT(unsigned int* count) {
  *count = (unsigned int)env_int("FAKE_NVML_DEVICES", 1);
  return NVML_SUCCESS;
}

nvmlReturn_t HANDLE(unsigned int index, nvmlDevice_t* device) {
  if (index >= 16) return NVML_ERROR_INVALID_ARGUMENT;
  devices[index].index = (int)index;
  *device = &devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  (void)device;
  const char* v = getenv("FAKE_NVML_TOTAL");
  memory->total = v != NULL && *v != '\0' ? strtoull(v, NULL, 10) : 80ULL << 30;
  memory->used = 0;
  memory->free = memory->total;
  return NVML_SUCCESS;
}

/* add puts one process in infos, or only counts it when there is no room. */
static void add(nvmlProcessInfo_t* infos, unsigned int cap, unsigned int* n, unsigned int pid,
                unsigned long long bytes) {
  if (*n < cap) {
    infos[*n].pid = pid;
    infos[*n].usedGpuMemory = bytes;
#ifndef FAKE_NVML_V1
    infos[*n].gpuInstanceId = 0xFFFFFFFFu;
    infos[*n].computeInstanceId = 0xFFFFFFFFu;
#endif
  }
  ++*n;
}

/* cmdline_holds reports whether /proc/PID/cmdline holds text. */
static int cmdline_holds(const char* pid, const char* text) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  for (size_t i = 0; i < got; ++i)
    if (buf[i] == '\0') buf[i] = ' ';
  buf[got] = '\0';
  return strstr(buf, text) != NULL;
}

nvmlReturn_t PROCESSES(nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos) {
  unsigned int cap = infos == NULL ? 0 : *infoCount, n = 0;
  const char* procs = getenv("FAKE_NVML_PROCS");
  if (procs != NULL) {
    char* copy = strdup(procs);
    for (char* save = NULL, *e = strtok_r(copy, ",", &save); e != NULL; e = strtok_r(NULL, ",", &save)) {
      int dev;
      unsigned int pid;
      unsigned long long bytes;
      if (sscanf(e, "%d:%u:%llu", &dev, &pid, &bytes) == 3 && dev == device->index) add(infos, cap, &n, pid, bytes);
    }
    free(copy);
  }
  const char* match = getenv("FAKE_NVML_MATCH");
  if (match != NULL && device->index == 0) {
    char text[256];
    unsigned long long bytes;
    const char* colon = strrchr(match, ':');
    if (colon != NULL && (size_t)(colon - match) < sizeof text) {
      memcpy(text, match, (size_t)(colon - match));
      text[colon - match] = '\0';
      bytes = strtoull(colon + 1, NULL, 10);
      DIR* d = opendir("/proc");
      for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
        if (isdigit((unsigned char)e->d_name[0]) && cmdline_holds(e->d_name, text))
          add(infos, cap, &n, (unsigned int)atoi(e->d_name), bytes);
      }
      if (d != NULL) closedir(d);
    }
  }
  *infoCount = n;
  return n > cap ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}
