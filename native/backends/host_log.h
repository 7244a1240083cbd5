// host_log.h: where the shim's TensorRT logger sends lines. Independent of
// TensorRT so its thread safety can be tested without it.
#ifndef TAM_BACKENDS_HOST_LOG_H
#define TAM_BACKENDS_HOST_LOG_H

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include "trtaction.h"

namespace tam {

// HostLogSink forwards log lines to the host of the build in progress and
// remembers the newest error. TensorRT logs from its own threads, also
// after a build has returned, while the host (and the monitor behind
// host->ctx) is freed as soon as build() returns. So the host pointer is read
// and called under a mutex that detach() also takes: once detach() returns,
// no call into the old host is running or can start. Only INFO and worse
// lines are forwarded (the thousands of VERBOSE lines return before the
// lock), so holding it during the call costs nothing measurable.
class HostLogSink {
 public:
  void log(int32_t severity, const char* msg) {
    if (msg == nullptr) return;
    if (severity <= TAM_SEV_ERROR) {
      std::lock_guard<std::mutex> lock(error_mu_);
      last_error_ = msg;
      recent_.push_back(msg);
      if (recent_.size() > kRecentErrors) recent_.pop_front();
      ++errors_;
    }
    if (severity > TAM_SEV_INFO) return;
    std::lock_guard<std::mutex> lock(host_mu_);
    if (host_ != nullptr) host_->log(host_->ctx, severity, msg);
  }

  void attach(const tam_host* host) {
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      last_error_.clear();
      recent_.clear();
    }
    std::lock_guard<std::mutex> lock(host_mu_);
    host_ = host;
  }

  void detach() {
    std::lock_guard<std::mutex> lock(host_mu_);
    host_ = nullptr;
  }

  std::string last_error() {
    std::lock_guard<std::mutex> lock(error_mu_);
    return last_error_;
  }

  // error_mark and errors_since give every error logged after the mark,
  // oldest first, joined by "; ": a failed call often logs the cause first
  // and a consequence last (a plugin library without its entry points, then
  // a CUDA error), and last_error() alone would show only the consequence.
  uint64_t error_mark() {
    std::lock_guard<std::mutex> lock(error_mu_);
    return errors_;
  }
  std::string errors_since(uint64_t mark) {
    std::lock_guard<std::mutex> lock(error_mu_);
    uint64_t n = errors_ - mark;
    if (n > recent_.size()) n = recent_.size();
    std::string out;
    for (size_t i = recent_.size() - static_cast<size_t>(n); i < recent_.size(); ++i)
      out += (out.empty() ? "" : "; ") + recent_[i];
    return out;
  }

 private:
  std::mutex host_mu_;  // guards host_ and every call through it
  const tam_host* host_ = nullptr;
  std::mutex error_mu_;  // separate: last_error() is read while a line may be forwarded
  std::string last_error_;
  static constexpr size_t kRecentErrors = 8;
  std::deque<std::string> recent_;  // the newest errors, for errors_since
  uint64_t errors_ = 0;             // errors logged so far
};

}  // namespace tam

#endif
