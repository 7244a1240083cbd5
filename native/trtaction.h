/*
 * trtaction.h: the one C interface between Go and every build backend.
 *
 * Two halves:
 *   1. The monitor (tam_monitor_*): an opaque, thread-safe event sink that a
 *      backend's IProgressMonitor forwards TensorRT's callbacks to. Callbacks
 *      never enter Go: they append to a lock-free queue and read a cancel
 *      flag. Go drains the queue a few times a second and sets the flag.
 *      The same source (monitor.cc) is also built as libtam_host.so, which
 *      exports exactly this half, with no Go in it: the host of a builder
 *      script's Python process, which loads it with ctypes
 *      (internal/pyhook's _native.py).
 *   2. The backend ABI (tam_backend_*): what a backend shared object exports
 *      (tensorrt 10, tensorrt 11, tensorrt-rtx), or what the built-in
 *      simulator implements. A backend reaches the monitor only through the
 *      tam_host function table, so a backend .so links against nothing of ours.
 *
 * Every function here is noexcept in practice: C++ implementations catch
 * every exception at the boundary.
 */
#ifndef TRTACTION_H
#define TRTACTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- monitor */

typedef struct tam_monitor tam_monitor; /* opaque */

enum tam_event_kind {
  TAM_EV_START = 1,  /* phaseStart(phase, parent, n = nbSteps) */
  TAM_EV_STEP = 2,   /* stepComplete(phase, n = step) */
  TAM_EV_FINISH = 3  /* phaseFinish(phase) */
};

/* One callback as recorded. Names are interned: phase and parent are ids
 * (0 = none) resolved with tam_monitor_name. */
typedef struct tam_event {
  int64_t t_ns;    /* monotonic, since tam_monitor_new */
  uint64_t phase;  /* interned name id */
  uint64_t parent; /* interned parent name id, 0 for a root phase */
  int32_t kind;    /* enum tam_event_kind */
  int32_t n;       /* nbSteps for START, step for STEP, 0 for FINISH */
  int32_t thread;  /* small per-monitor thread number, from 1 */
  int32_t _pad;
} tam_event;

tam_monitor* tam_monitor_new(void);
/* Only after every thread that may call the monitor has stopped. */
void tam_monitor_free(tam_monitor* m);

/* The clock event times count from: CLOCK_MONOTONIC at tam_monitor_new, in
 * ns. An event's t_ns plus this is its CLOCK_MONOTONIC time, the clock
 * Python's time.monotonic_ns() reads on Linux (the monitor's clock is
 * std::chrono::steady_clock, which libstdc++ reads from CLOCK_MONOTONIC). */
int64_t tam_monitor_epoch_ns(tam_monitor* m);

/* The three TensorRT callbacks. step_complete returns 0 once cancelled. */
void tam_phase_start(tam_monitor* m, const char* phase, const char* parent, int32_t nb_steps);
int tam_step_complete(tam_monitor* m, const char* phase, int32_t step);
void tam_phase_finish(tam_monitor* m, const char* phase);

/* Ask the build to stop: every later step_complete returns 0. */
void tam_monitor_cancel(tam_monitor* m);
int tam_monitor_cancelled(tam_monitor* m);

/* Copy up to cap queued events, oldest first, into out; returns the count.
 * Single consumer. */
size_t tam_monitor_drain(tam_monitor* m, tam_event* out, size_t cap);
/* Copy the name behind an id into buf (NUL-terminated, truncated to cap-1);
 * returns the full length, or -1 for an unknown id. */
int64_t tam_monitor_name(tam_monitor* m, uint64_t id, char* buf, size_t cap);

typedef struct tam_monitor_stats {
  int64_t callbacks;        /* all three kinds */
  int64_t last_callback_ns; /* t_ns of the newest callback, -1 before any */
  int64_t dropped;          /* events lost because the queue was full */
} tam_monitor_stats;
void tam_monitor_stats_get(tam_monitor* m, tam_monitor_stats* out);

/* Events queued and not yet drained. */
int64_t tam_monitor_backlog(tam_monitor* m);

/* TensorRT log lines, kept beside the events (rare; a mutex is fine). */
void tam_monitor_log(tam_monitor* m, int32_t severity, const char* msg);
/* Pops the oldest log line into buf; returns its full length, -1 if none. */
int64_t tam_monitor_pop_log(tam_monitor* m, int32_t* severity, char* buf, size_t cap);

/* ---------------------------------------------------------------- backend ABI */

/* 2: the Go side decides where the builder library comes from and tells the
 * backend its origin (tam_backend_info's lib_origin, the request's
 * lib_origin); a backend reads no variable of its own.
 * 3: and how to get the library when it cannot be loaded, which depends on
 * how trt-action was installed (tam_backend_info's lib_fix, the request's
 * lib_fix); a backend knows nothing of installations. */
#define TAM_BACKEND_ABI 3

/* Severity as TensorRT's ILogger::Severity. */
enum tam_severity {
  TAM_SEV_INTERNAL_ERROR = 0,
  TAM_SEV_ERROR = 1,
  TAM_SEV_WARNING = 2,
  TAM_SEV_INFO = 3,
  TAM_SEV_VERBOSE = 4
};

/* What a backend may call. ctx is the tam_monitor*; the pointers are the
 * tam_* functions above. A backend must not keep any of them past build(). */
typedef struct tam_host {
  int32_t abi; /* TAM_BACKEND_ABI */
  void* ctx;
  void (*phase_start)(void* ctx, const char* phase, const char* parent, int32_t nb_steps);
  int (*step_complete)(void* ctx, const char* phase, int32_t step);
  void (*phase_finish)(void* ctx, const char* phase);
  void (*log)(void* ctx, int32_t severity, const char* msg);
  int (*cancelled)(void* ctx);
  /* Events queued and not yet drained. Only the simulator asks, to replay
   * as fast as the pipeline takes events without overrunning the queue. */
  int64_t (*backlog)(void* ctx);
} tam_host;

/* The host table for m: ctx is m and the functions are the tam_* calls
 * above. Valid as long as m is. */
const tam_host* tam_monitor_host(tam_monitor* m);

enum tam_status {
  TAM_OK = 0,        /* engine written completely to the requested path */
  TAM_FAILED = 1,    /* the library refused the model or failed; err says why */
  TAM_CANCELLED = 2, /* stopped because step_complete returned 0 */
  TAM_UNAVAILABLE = 3 /* the library could not be loaded; err says what was looked for */
};

/* A backend shared object exports these two symbols.
 *
 * tam_backend_info writes a short JSON object into buf:
 *   {"backend":"tensorrt-rtx","abi":3,"compiled_against":"1.2.0","library":"1.2.0.54","library_path":"..."}
 * loading the library if it can (library fields empty if not). Returns the length.
 * lib_path is the library's file or folder (NULL or "": the loader's search
 * path), lib_origin where that came from, in the words its messages put
 * after a file they tried ("from --trt-lib"; see internal/backend's
 * LibraryLocation.Origin), lib_fix what a message that the library cannot
 * be loaded ends with, after "To fix: " (NULL or "": nothing;
 * LibraryLocation.Fix).
 *
 * tam_backend_build runs one build. request_json is a JSON object (see
 * native/request.go, type Request; its lib_path, lib_origin and lib_fix are
 * the three above); the engine goes to request.engine_tmp, which the caller renames.
 * err receives a message on failure. Blocks until the build ends. */
typedef int64_t (*tam_backend_info_fn)(const char* lib_path, const char* lib_origin, const char* lib_fix, char* buf,
                                       size_t cap);
typedef int32_t (*tam_backend_build_fn)(const tam_host* host, const char* request_json, char* err, size_t errcap);

/* ------------------------------------------------- a program's own builder config
 *
 * A builder script builds with a config its Python program made. These
 * exports attach trt-action's monitor to such a config, given its raw
 * nvinfer1::IBuilderConfig* (pybind11's _pybind11_conduit_v1_ hands it out),
 * so a script build's callbacks cost what a matrix build's do: no GIL, no
 * Python per callback. The program's own monitor is kept: every callback
 * goes to the host and then to it, and its stepComplete returning false
 * still cancels. No TensorRT library is loaded: they only call the
 * config's methods. */

/* What pybind11's conduit needs from C++: the type to ask for and the name
 * the capsule holding it must have. All strings and the type live as long
 * as the library. */
typedef struct tam_conduit_types {
  const void* config_type;      /* &typeid(nvinfer1::IBuilderConfig), a const std::type_info* */
  const char* config_type_name; /* its name(), "N8nvinfer114IBuilderConfigE": the returned capsule's name */
  const char* type_info_name;   /* typeid(std::type_info).name(): the name of the capsule holding config_type */
  const char* stdlib;           /* the C++ library config_type belongs to, as pybind11's ABI ids spell it:
                                   "libstdcpp" (make's backends) or "libcpp" (a release's). Both lay a
                                   std::type_info out as the Itanium C++ ABI says and the conduit reads
                                   only its name, so it goes with the ids of either (own ones first) */
} tam_conduit_types;

/* tam_backend_conduit_types fills out. */
typedef void (*tam_backend_conduit_types_fn)(tam_conduit_types* out);

typedef struct tam_attachment tam_attachment; /* opaque */

/* tam_backend_attach reads the config's monitor (the program's, or NULL),
 * and installs one that forwards every callback to host and then to the
 * program's. host (and the monitor behind host->ctx) must outlive the
 * attachment. Returns NULL with a message in err on failure (a host of
 * another ABI, a NULL config). */
typedef tam_attachment* (*tam_backend_attach_fn)(void* config, const tam_host* host, char* err, size_t errcap);

/* How an attached build went, as tam_backend_detach returns it (bits). */
enum tam_attach_flags {
  TAM_ATTACH_STOPPED = 1,       /* the host's step_complete returned 0 at least once (a stop) */
  TAM_ATTACH_USER_CANCELLED = 2 /* the program's monitor's stepComplete returned false at least once */
};

/* tam_backend_detach puts the program's monitor back on the config (unless
 * something other than ours was set there meanwhile) and frees ours; only
 * after the build returned, while the config still exists. Returns the
 * tam_attach_flags bits, or -1 when a is NULL. */
typedef int32_t (*tam_backend_detach_fn)(tam_attachment* a);

#ifdef __cplusplus
}
#endif
#endif
