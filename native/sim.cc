//go:build cgo

// sim.cc: the simulator backend. It replays a callback sequence in order, but
// hands each event to the next of several threads in turn, so the monitor
// sees what TensorRT gives it: callbacks from more than one thread, one at a
// time, paced in time. Faults reproduce what the supervisor must survive.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

// How often pacing looks at the cancel flag: a cancel never waits longer.
constexpr auto kCancelPoll = std::chrono::milliseconds(5);

// An event due within kSlack is delivered at once rather than slept for, so
// pacing sleeps at most once per kSlack however fast the steps: a sleep is a
// system call, and a replay of a million callbacks must not make one each.
constexpr auto kSlack = std::chrono::milliseconds(1);

// The most events one thread delivers in a row while they are scheduled
// less than kSlack apart; then it hands the turn on. Handing over wakes a
// thread (a system call), so it happens per run, not per callback, when
// events come faster than kSlack.
constexpr size_t kRun = 256;

// The replay waits while the monitor holds this many undrained events: as
// fast as the pipeline takes them, and never so fast that the queue drops
// them or the worker's memory grows with the build. (TensorRT never waits;
// but no real build calls back a million times a second.)
constexpr int64_t kBacklog = 1 << 13;
constexpr auto kBacklogPoll = std::chrono::milliseconds(1);

class Replay {
 public:
  Replay(const tam_host* host, const tam_sim_config* cfg)
      : host_(host),
        cfg_(cfg),
        threads_(std::max<int32_t>(cfg->threads, 1)),
        total_(cfg->count * static_cast<size_t>(std::max<int64_t>(cfg->repeat, 1))),
        turn_(new std::condition_variable[threads_]),
        done_(total_ == 0) {
    double at = std::min(std::max(cfg->fault_at, 0.0), 1.0);
    strike_ = static_cast<size_t>(at * static_cast<double>(total_));
    if (strike_ > total_) strike_ = total_;
    if (cfg->count > 0) span_ = nanoseconds(cfg->events[cfg->count - 1].t_ns);
  }

  int32_t run() {
    char line[128];
    std::snprintf(line, sizeof line, "simulating %zu callbacks on %d threads", total_, threads_);
    host_->log(host_->ctx, TAM_SEV_INFO, line);

    start_ = Clock::now();
    replay_on_threads();
    if (!stopped_ && cfg_->fault != TAM_FAULT_NONE && !struck_) strike();  // fault_at == 1
    if (stopped_) return status_;
    return write_engine();
  }

  const std::string& error() const { return error_; }

 private:
  void replay_on_threads() {
    std::vector<std::thread> workers;
    bool launched = true;
    try {
      for (int i = 0; i < threads_; ++i) workers.emplace_back([this, i] { take_turns(i); });
    } catch (...) {
      launched = false;
      end_turns();  // the threads already running stop after their current run
    }
    for (auto& w : workers) w.join();
    if (!launched) {
      finish_active();
      stop(TAM_FAILED, "simulator: could not start its callback threads");
    }
  }

  // The threads take turns in order, 0, 1, ..., T-1, 0, ...: a turn
  // delivers the next event, and the ones after it scheduled within kSlack
  // of their predecessor (up to kRun), so order is kept while callbacks
  // come from T threads. Paced events alternate threads one by one.
  void take_turns(int i) {
    try {
      for (;;) {
        size_t k;
        {
          std::unique_lock<std::mutex> lock(mu_);
          turn_[i].wait(lock, [&] { return done_ || owner_ == i; });
          if (done_) return;
          k = next_;
        }
        // This thread alone owns the replay state until the turn moves on.
        wait_for_room();
        size_t run = 0;
        do {
          deliver(k++);
        } while (!stopped_ && k < total_ && ++run < kRun && due(k));
        std::lock_guard<std::mutex> lock(mu_);
        next_ = k;
        if (stopped_ || next_ >= total_) {
          end_turns_locked();
        } else {
          owner_ = (i + 1) % threads_;
          turn_[owner_].notify_one();
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      stop(TAM_FAILED, "simulator: internal error");
      end_turns_locked();
    }
  }

  void end_turns() {
    std::lock_guard<std::mutex> lock(mu_);
    end_turns_locked();
  }

  void end_turns_locked() {
    done_ = true;
    for (int t = 0; t < threads_; ++t) turn_[t].notify_one();
  }

  const tam_sim_event& event(size_t k) const { return cfg_->events[k % cfg_->count]; }

  void deliver(size_t k) {
    if (cfg_->fault != TAM_FAULT_NONE && !struck_ && k == strike_) {
      strike();
      if (stopped_) return;
    }
    pace(k);
    const tam_sim_event& ev = event(k);
    switch (ev.kind) {
      case TAM_EV_START:
        host_->phase_start(host_->ctx, ev.phase, ev.parent, ev.n);
        active_.push_back(ev.phase);
        break;
      case TAM_EV_STEP:
        if (host_->step_complete(host_->ctx, ev.phase, ev.n) == 0) {
          finish_active();
          stop(TAM_CANCELLED, "cancelled: step_complete returned false");
        }
        break;
      case TAM_EV_FINISH:
        host_->phase_finish(host_->ctx, ev.phase);
        forget(ev.phase);
        break;
      default:
        finish_active();
        stop(TAM_FAILED, "simulator: event " + std::to_string(k) + " has unknown kind " + std::to_string(ev.kind));
    }
  }

  void wait_for_room() {
    if (host_->backlog == nullptr) return;
    while (!cancel_seen_ && host_->backlog(host_->ctx) > kBacklog) {
      if (host_->cancelled(host_->ctx) != 0) {
        cancel_seen_ = true;
        return;
      }
      std::this_thread::sleep_for(kBacklogPoll);
    }
  }

  // When event k is due on the replay's clock.
  Clock::time_point deadline(size_t k) const {
    nanoseconds due = cfg_->step_ns > 0
                          ? nanoseconds(cfg_->step_ns * static_cast<int64_t>(k))
                          : nanoseconds(event(k).t_ns) + span_ * static_cast<int64_t>(k / cfg_->count);
    return start_ + shift_ + due;
  }

  // Whether event k may go right after event k-1 on the same thread: when
  // nothing paces it, or it is scheduled within kSlack of k-1. Decided by the
  // schedule, not the clock, so paced events alternate threads even when a
  // loaded machine makes the replay late.
  bool due(size_t k) const {
    return cfg_->unpaced != 0 || cancel_seen_ || deadline(k) - deadline(k - 1) < kSlack;
  }

  // Waits until event k is due. Once a cancel is seen the rest come at once,
  // as TensorRT only stops at the next stepComplete. Unpaced events never
  // wait: the monitor's queue is the only limit.
  void pace(size_t k) {
    if (cfg_->unpaced != 0 || cancel_seen_) return;
    Clock::time_point at = deadline(k);
    for (;;) {
      Clock::time_point now = Clock::now();
      if (at - now <= kSlack) return;
      if (host_->cancelled(host_->ctx) != 0) {
        cancel_seen_ = true;
        return;
      }
      std::this_thread::sleep_until(std::min(at, now + kCancelPoll));
    }
  }

  void strike() {
    struck_ = true;
    switch (cfg_->fault) {
      case TAM_FAULT_CRASH:
        std::abort();
      case TAM_FAULT_HANG:
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      case TAM_FAULT_FAIL: {
        finish_active();
        std::string msg = "simulated failure after " + std::to_string(strike_) + " of " +
                          std::to_string(total_) + " callbacks";
        host_->log(host_->ctx, TAM_SEV_ERROR, msg.c_str());
        stop(TAM_FAILED, msg);
        return;
      }
      case TAM_FAULT_SILENCE:
        // Like one long tactic: no callback and no look at the cancel flag.
        std::this_thread::sleep_for(nanoseconds(cfg_->fault_ns));
        shift_ += nanoseconds(cfg_->fault_ns);  // the rest keeps its spacing
        return;
      default:
        stop(TAM_FAILED, "simulator: unknown fault " + std::to_string(cfg_->fault));
    }
  }

  void finish_active() {
    for (auto it = active_.rbegin(); it != active_.rend(); ++it) host_->phase_finish(host_->ctx, *it);
    active_.clear();
  }

  void forget(const char* phase) {
    for (auto it = active_.rbegin(); it != active_.rend(); ++it) {
      if (std::strcmp(*it, phase) == 0) {
        active_.erase(std::next(it).base());
        return;
      }
    }
  }

  void stop(int32_t status, std::string msg) {
    if (stopped_) return;
    stopped_ = true;
    status_ = status;
    error_ = std::move(msg);
  }

  // The fake engine: a header, the event count and a checksum of the phase
  // names, so its size and digest mean something. Not the build's name:
  // like a real engine, its bytes follow only from what the cache key
  // covers, so a hit after a rename hands out the same bytes a build would.
  int32_t write_engine() {
    if (cfg_->engine_tmp == nullptr || cfg_->engine_tmp[0] == '\0') {
      error_ = "simulator: no engine_tmp path";
      return TAM_FAILED;
    }
    uint64_t sum = 1469598103934665603ull;
    for (size_t k = 0; k < total_; ++k) {
      for (const char* p = event(k).phase; p != nullptr && *p; ++p) {
        sum ^= static_cast<unsigned char>(*p);
        sum *= 1099511628211ull;
      }
      sum ^= '\n';
      sum *= 1099511628211ull;
    }
    char tail[96];
    std::snprintf(tail, sizeof tail, "\nevents %zu\nphases-fnv1a %016llx\n", total_,
                  static_cast<unsigned long long>(sum));
    std::string body = "TRTACTION-SIM-ENGINE v1";
    body += tail;
    return write_file(cfg_->engine_tmp, body);
  }

  int32_t write_file(const char* path, const std::string& body) {
    // O_NOFOLLOW: a link planted at the predictable temporary name must not
    // send the engine elsewhere (as in backends/files.h).
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return io_error("open", path);
    size_t off = 0;
    while (off < body.size()) {
      ssize_t w = ::write(fd, body.data() + off, body.size() - off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        int32_t st = io_error("write", path);
        ::close(fd);
        return st;
      }
      off += static_cast<size_t>(w);
    }
    if (::fsync(fd) != 0) {
      int32_t st = io_error("fsync", path);
      ::close(fd);
      return st;
    }
    if (::close(fd) != 0) return io_error("close", path);
    return TAM_OK;
  }

  int32_t io_error(const char* op, const char* path) {
    error_ = std::string("simulator: ") + op + " " + path + ": " + std::strerror(errno);
    return TAM_FAILED;
  }

  const tam_host* host_;
  const tam_sim_config* cfg_;
  const int threads_;
  const size_t total_;  // events to deliver: count times repeat
  size_t strike_ = 0;
  nanoseconds span_{0};  // the trace's own length, for repetitions at its own times

  std::mutex mu_;
  std::unique_ptr<std::condition_variable[]> turn_;  // one per thread: a hand-over wakes only the next
  int owner_ = 0;      // guarded by mu_: whose turn it is
  size_t next_ = 0;    // guarded by mu_
  bool done_;          // guarded by mu_

  // Owned by whichever thread holds the turn; the hand-over through mu_
  // orders each owner after the previous one.
  Clock::time_point start_;
  nanoseconds shift_{0};
  bool struck_ = false;
  bool cancel_seen_ = false;
  bool stopped_ = false;
  int32_t status_ = TAM_OK;
  std::string error_;
  std::vector<const char*> active_;
};

void copy_error(const std::string& msg, char* err, size_t errcap) {
  if (err == nullptr || errcap == 0) return;
  size_t n = std::min(msg.size(), errcap - 1);
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

}  // namespace

extern "C" int32_t tam_sim_build(const tam_host* host, const tam_sim_config* cfg, char* err, size_t errcap) {
  try {
    if (host == nullptr || cfg == nullptr || (cfg->count > 0 && cfg->events == nullptr)) {
      copy_error("simulator: missing host, config or events", err, errcap);
      return TAM_FAILED;
    }
    Replay replay(host, cfg);
    int32_t status = replay.run();
    copy_error(status == TAM_OK ? std::string() : replay.error(), err, errcap);
    return status;
  } catch (...) {
    copy_error("simulator: internal error", err, errcap);
    return TAM_FAILED;
  }
}
