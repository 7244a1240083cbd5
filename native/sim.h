/*
 * sim.h: the built-in simulator backend. It replays a recorded callback
 * sequence through a tam_host exactly as a TensorRT backend would, from
 * several threads, and can inject the faults a real build suffers.
 */
#ifndef TRTACTION_SIM_H
#define TRTACTION_SIM_H

#include "trtaction.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tam_sim_event {
  int64_t t_ns;       /* when, since the build started */
  int32_t kind;       /* enum tam_event_kind */
  int32_t n;          /* nbSteps for START, step for STEP */
  const char* phase;
  const char* parent; /* NULL for a root phase */
} tam_sim_event;

enum tam_sim_fault {
  TAM_FAULT_NONE = 0,
  TAM_FAULT_CRASH = 1,   /* std::abort(): the whole process dies */
  TAM_FAULT_HANG = 2,    /* the delivering thread blocks forever, ignoring cancel */
  TAM_FAULT_FAIL = 3,    /* finish active phases, log an error, return TAM_FAILED */
  TAM_FAULT_SILENCE = 4  /* no callback for fault_ns, ignoring cancel, then go on */
};

/* A trace read as the replay goes, so a file of millions of callbacks is
 * played in bounded memory. read fills buf with up to cap events that follow
 * the ones read so far and returns how many, 0 after the last, or -1 with a
 * message in err. rewind starts the trace again (for repeat): 0 on success,
 * else -1 with a message. Only the thread replaying at that moment calls
 * them, one call at a time. Phase and parent names must stay valid until the
 * build returns. */
typedef struct tam_sim_source {
  void* ctx;
  int64_t (*read)(void* ctx, tam_sim_event* buf, size_t cap, char* err, size_t errcap);
  int32_t (*rewind)(void* ctx, char* err, size_t errcap);
} tam_sim_source;

typedef struct tam_sim_config {
  const tam_sim_event* events; /* the trace in memory; NULL: read it from source */
  size_t count;                /* its events; with a source, 0 when not known before the end */
  tam_sim_source source;
  int64_t step_ns;    /* > 0: event k is due at k*step_ns; 0: at its own t_ns (plus the trace's
                         length for each repetition before it) */
  int32_t threads;    /* callback threads taking turns; < 1 means 1 */
  int32_t fault;      /* enum tam_sim_fault */
  int64_t fault_ns;   /* silence length */
  double fault_at;    /* the fault strikes once fault_at*count*repeat events were delivered
                         (with count 0: when the trace ends) */
  const char* engine_tmp;
  const char* name;   /* the build's name, written into the fake engine */
  int64_t repeat;     /* the events are replayed this many times over; < 1 means 1 */
  int32_t unpaced;    /* 1: no pacing, each event as soon as the monitor takes it */
  int64_t engine_size;  /* > 0: the fake engine has exactly this many bytes: its header (cut
                           short if need be), then a stream that follows from engine_seed */
  uint64_t engine_seed; /* what the bytes after the header follow from (the build's settings) */
} tam_sim_config;

int32_t tam_sim_build(const tam_host* host, const tam_sim_config* cfg, char* err, size_t errcap);

#ifdef __cplusplus
}
#endif
#endif
