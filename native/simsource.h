/*
 * simsource.h: a trace file as the simulator's source (sim.h's
 * tam_sim_source), read by Go (simsource.go) as the replay goes.
 */
#ifndef TRTACTION_SIMSOURCE_H
#define TRTACTION_SIMSOURCE_H

#include <stdint.h>

#include "sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Points cfg's source at the Go source behind the cgo handle. */
void tam_sim_use_go_source(tam_sim_config* cfg, uintptr_t handle);

#ifdef __cplusplus
}
#endif
#endif
