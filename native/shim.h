/*
 * shim.h: what the Go side of package native needs beyond trtaction.h.
 * Internal to this package; backends never see it.
 */
#ifndef TRTACTION_SHIM_H
#define TRTACTION_SHIM_H

#include "trtaction.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host table for m: valid as long as m is. */
const tam_host* tam_monitor_host(tam_monitor* m);

#ifdef __cplusplus
}
#endif
#endif
