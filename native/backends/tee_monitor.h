// tee_monitor.h: trt-action's monitor on a builder config that a program
// made (a builder script's Python process hands its raw IBuilderConfig* over
// through pybind11's conduit; shim.cc exports attach and detach as C). Only
// the config's own methods are called, so no TensorRT library is needed, and
// tee_test.cc tests it against a stand-in config for every flavour.
#ifndef TAM_BACKENDS_TEE_MONITOR_H
#define TAM_BACKENDS_TEE_MONITOR_H

#include <NvInfer.h>

#include <atomic>
#include <cstdint>

#include "trtaction.h"

namespace tam {

// TeeMonitor forwards each callback to the host and then to the program's
// own monitor, if the config had one, so that monitor's drawing still
// happens and its stepComplete returning false still cancels the build, as
// without trt-action. The host is called first: its clock reading is the
// callback's, not the program's monitor's work after it. The program's
// stepComplete is called even when the host says stop, as TensorRT would
// have called it.
class TeeMonitor final : public nvinfer1::IProgressMonitor {
 public:
  TeeMonitor(const tam_host* host, nvinfer1::IProgressMonitor* program) : host_(host), program_(program) {}

  void phaseStart(const char* phase, const char* parent, int32_t nb_steps) noexcept override {
    host_->phase_start(host_->ctx, phase, parent, nb_steps);
    if (program_ != nullptr) program_->phaseStart(phase, parent, nb_steps);
  }

  bool stepComplete(const char* phase, int32_t step) noexcept override {
    bool go_on = host_->step_complete(host_->ctx, phase, step) != 0;
    if (!go_on) stopped_.store(true, std::memory_order_relaxed);
    if (program_ != nullptr && !program_->stepComplete(phase, step)) {
      program_cancelled_.store(true, std::memory_order_relaxed);
      go_on = false;
    }
    return go_on;
  }

  void phaseFinish(const char* phase) noexcept override {
    host_->phase_finish(host_->ctx, phase);
    if (program_ != nullptr) program_->phaseFinish(phase);
  }

  nvinfer1::IProgressMonitor* program() const { return program_; }

  // flags is the tam_attach_flags of the calls so far.
  int32_t flags() const {
    return (stopped_.load(std::memory_order_relaxed) ? TAM_ATTACH_STOPPED : 0) |
           (program_cancelled_.load(std::memory_order_relaxed) ? TAM_ATTACH_USER_CANCELLED : 0);
  }

 private:
  const tam_host* host_;
  nvinfer1::IProgressMonitor* program_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> program_cancelled_{false};
};

// Attachment is a TeeMonitor installed on a config. getProgressMonitor and
// setProgressMonitor exist in every release these headers stand for
// (TensorRT 10.0 on, which `make backends-check` proves by compiling
// against the 10.0 headers; TensorRT 11; TensorRT-RTX), so no version gate
// applies.
struct Attachment {
  Attachment(nvinfer1::IBuilderConfig& c, const tam_host* host) : config(c), monitor(host, c.getProgressMonitor()) {
    config.setProgressMonitor(&monitor);
  }

  // detach puts the program's monitor back, unless something other than
  // ours was set on the config during the build: that one stays.
  int32_t detach() {
    if (config.getProgressMonitor() == &monitor) config.setProgressMonitor(monitor.program());
    return monitor.flags();
  }

  nvinfer1::IBuilderConfig& config;
  TeeMonitor monitor;
};

}  // namespace tam

// The C handle of an attachment (trtaction.h) is the Attachment itself.
struct tam_attachment : tam::Attachment {
  using tam::Attachment::Attachment;
};

#endif
