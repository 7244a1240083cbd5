//go:build cgo && trtaction_stress

// stress.cc: load generators for the tests and benchmarks. Each thread plays
// a TensorRT worker: its own phase chain and a tight loop of stepComplete,
// against either the real monitor or the naive one that enters Go.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "_cgo_export.h"
#include "stress.h"

namespace {

using Clock = std::chrono::steady_clock;

int64_t since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

// Calls the callbacks through function-like objects so both monitors run the
// identical loop.
struct Callbacks {
  void (*start)(void* ctx, const char* phase, const char* parent, int32_t n);
  int (*step)(void* ctx, const char* phase, int32_t step);
  void (*finish)(void* ctx, const char* phase);
  void* ctx;
};

// Returns the thread's own elapsed ns; *stopped becomes true if a step was refused.
int64_t one_thread(const Callbacks& cb, int index, int iters, bool* stopped) {
  std::string root = "Stress thread " + std::to_string(index);
  std::string leaf = "Stress steps " + std::to_string(index);
  Clock::time_point t0 = Clock::now();
  cb.start(cb.ctx, root.c_str(), nullptr, 1);
  cb.start(cb.ctx, leaf.c_str(), root.c_str(), iters);
  for (int i = 0; i < iters; ++i) {
    if (cb.step(cb.ctx, leaf.c_str(), i) == 0) {
      *stopped = true;
      break;
    }
  }
  cb.finish(cb.ctx, leaf.c_str());
  cb.finish(cb.ctx, root.c_str());
  return since(t0);
}

int64_t run_threads(const Callbacks& cb, int threads, int iters, int64_t* ns_total, int32_t* stopped) {
  std::vector<int64_t> elapsed(threads, 0);
  std::vector<char> refused(threads, 0);
  std::vector<std::thread> pool;
  std::atomic<bool> go{false};
  pool.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();  // start together
      bool s = false;
      elapsed[i] = one_thread(cb, i + 1, iters, &s);
      refused[i] = s;
    });
  }
  Clock::time_point t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();
  int64_t wall = since(t0);
  int64_t total = 0;
  int32_t n = 0;
  for (int i = 0; i < threads; ++i) {
    total += elapsed[i];
    n += refused[i];
  }
  if (ns_total != nullptr) *ns_total = total;
  if (stopped != nullptr) *stopped = n;
  return wall;
}

void naive_start(void* ctx, const char* phase, const char* parent, int32_t n) {
  trtNaiveCallback(reinterpret_cast<uintptr_t>(ctx), TAM_EV_START, const_cast<char*>(phase),
                   const_cast<char*>(parent), n);
}
int naive_step(void* ctx, const char* phase, int32_t step) {
  return trtNaiveCallback(reinterpret_cast<uintptr_t>(ctx), TAM_EV_STEP, const_cast<char*>(phase), nullptr, step);
}
void naive_finish(void* ctx, const char* phase) {
  trtNaiveCallback(reinterpret_cast<uintptr_t>(ctx), TAM_EV_FINISH, const_cast<char*>(phase), nullptr, 0);
}

}  // namespace

extern "C" {

int64_t tam_stress(tam_monitor* m, int threads, int iters_per_thread, int64_t* ns_total, int32_t* stopped) {
  try {
    const tam_host* h = tam_monitor_host(m);
    Callbacks cb{h->phase_start, h->step_complete, h->phase_finish, h->ctx};
    return run_threads(cb, threads, iters_per_thread, ns_total, stopped);
  } catch (...) {
    return -1;
  }
}

int64_t tam_stress_naive(uintptr_t handle, int threads, int iters_per_thread, int64_t* ns_total) {
  try {
    Callbacks cb{naive_start, naive_step, naive_finish, reinterpret_cast<void*>(handle)};
    return run_threads(cb, threads, iters_per_thread, ns_total, nullptr);
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
