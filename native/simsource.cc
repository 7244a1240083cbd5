//go:build cgo

// simsource.cc: the C entry points of a Go trace source, which the
// simulator calls through tam_sim_source. They only forward: the Go side
// (simsource_export.go) recovers from panics and reports them as errors.

#include "simsource.h"

#include "_cgo_export.h"

namespace {

int64_t go_read(void* ctx, tam_sim_event* buf, size_t cap, char* err, size_t errcap) {
  return tamSimSourceRead(reinterpret_cast<uintptr_t>(ctx), buf, cap, err, errcap);
}

int32_t go_rewind(void* ctx, char* err, size_t errcap) {
  return tamSimSourceRewind(reinterpret_cast<uintptr_t>(ctx), err, errcap);
}

}  // namespace

extern "C" void tam_sim_use_go_source(tam_sim_config* cfg, uintptr_t handle) {
  cfg->source.ctx = reinterpret_cast<void*>(handle);
  cfg->source.read = go_read;
  cfg->source.rewind = go_rewind;
}
