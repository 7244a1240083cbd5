/*
 * stress.h: the load generators behind the monitor's tests and benchmarks,
 * built only with the trtaction_stress tag (stress.cc).
 */
#ifndef TRTACTION_STRESS_H
#define TRTACTION_STRESS_H

#include "trtaction.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stress: `threads` C++ threads each start their own phase chain
 * ("Stress thread i" > "Stress steps i") and call step_complete
 * iters_per_thread times, stopping early once it returns 0, then finish both
 * phases. Returns wall time in ns; *ns_total receives the sum of the threads'
 * own elapsed times and *stopped the number of threads that saw a 0
 * (either may be NULL). */
int64_t tam_stress(tam_monitor* m, int threads, int iters_per_thread, int64_t* ns_total,
                   int32_t* stopped);

/* The same load against the naive monitor: every callback enters Go through
 * an exported function (trtNaiveCallback) that locks a mutex and appends. */
int64_t tam_stress_naive(uintptr_t handle, int threads, int iters_per_thread, int64_t* ns_total);

#ifdef __cplusplus
}
#endif
#endif
