// drive.cc: calls a builder config's progress monitor as TensorRT does, from
// C++ threads that do not hold Python's GIL, and times it: the synthetic
// build behind scripts/bench-native, which compares a builder script's two
// monitor routes (the native monitor against a Python IProgressMonitor).
// threads = 0 calls it on the calling thread (which ctypes has let go of
// the GIL), as TensorRT-RTX calls back on the thread that called the build;
// threads = N from N threads of its own, as TensorRT's own threads may.
// Compiled against one flavour's headers (the config's class layout).
#include <NvInfer.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

extern "C" __attribute__((visibility("default"))) int64_t tam_bench_drive(void* config, int32_t threads,
                                                                          int32_t steps) {
  auto* monitor = static_cast<nvinfer1::IBuilderConfig*>(config)->getProgressMonitor();
  if (monitor == nullptr || threads < 0 || steps < 1) return -1;
  auto one_phase = [monitor, steps](int32_t i) {
    const std::string phase = "Bench thread " + std::to_string(i);
    monitor->phaseStart(phase.c_str(), nullptr, steps);
    for (int32_t s = 0; s < steps; ++s) monitor->stepComplete(phase.c_str(), s);
    monitor->phaseFinish(phase.c_str());
  };
  if (threads == 0) {
    auto start = std::chrono::steady_clock::now();
    one_phase(0);
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  }
  std::atomic<int32_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int32_t i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      one_phase(i);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}
