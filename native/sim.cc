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
#include <cstdint>
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

// Events read from the source at a time: a read enters Go and parses this
// many lines, so it is also how much reading a stop can wait for.
constexpr size_t kChunk = 1024;

// Trace walks the events in replay order, the trace repeated cfg->repeat
// times: from memory, or from the source a chunk at a time, so a trace file
// is played as it is read. Only the thread holding the replay's turn uses it.
class Trace {
 public:
  explicit Trace(const tam_sim_config* cfg)
      : cfg_(cfg), repeat_(static_cast<size_t>(std::max<int64_t>(cfg->repeat, 1))) {
    if (cfg->events != nullptr) {
      chunk_ = cfg->events;
      len_ = cfg->count;
    } else {
      buf_.resize(kChunk);
    }
  }

  // The next event, or nullptr after the last one (error() then says
  // whether reading failed).
  const tam_sim_event* peek() {
    while (pos_ == len_) {
      if (!more()) return nullptr;
    }
    return &chunk_[pos_];
  }

  // Moves past the event peek() returned.
  void advance() {
    if (repetition_ == 0) span_ = nanoseconds(chunk_[pos_].t_ns);
    ++pos_;
    ++in_repetition_;
  }

  size_t repetition() const { return repetition_; }

  // The trace's own length: its last event's time, known once the first
  // repetition has ended (events are in time order).
  nanoseconds span() const { return span_; }

  const std::string& error() const { return error_; }

 private:
  // Fills the next chunk, going on to the next repetition at the end of
  // the trace; false at the end of the last repetition or on an error.
  bool more() {
    if (ended_) return false;
    if (cfg_->events == nullptr) {
      char err[512] = "";
      int64_t n = cfg_->source.read(cfg_->source.ctx, buf_.data(), buf_.size(), err, sizeof err);
      if (n < 0) return fail(err);
      if (n > 0) {
        chunk_ = buf_.data();
        pos_ = 0;
        len_ = static_cast<size_t>(n);
        return true;
      }
    }
    // The trace is done; an empty one is not repeated.
    if (repetition_ + 1 >= repeat_ || in_repetition_ == 0) {
      ended_ = true;
      return false;
    }
    ++repetition_;
    in_repetition_ = 0;
    pos_ = 0;
    if (cfg_->events != nullptr) return true;  // the same array again
    char err[512] = "";
    if (cfg_->source.rewind(cfg_->source.ctx, err, sizeof err) != 0) return fail(err);
    len_ = 0;
    return true;
  }

  bool fail(const char* err) {
    error_ = err[0] != '\0' ? err : "simulator: the trace could not be read";
    ended_ = true;
    return false;
  }

  const tam_sim_config* cfg_;
  const size_t repeat_;
  std::vector<tam_sim_event> buf_;  // the chunk read from the source
  const tam_sim_event* chunk_ = nullptr;
  size_t pos_ = 0, len_ = 0;
  size_t repetition_ = 0, in_repetition_ = 0;
  nanoseconds span_{0};
  bool ended_ = false;
  std::string error_;
};

class Replay {
 public:
  Replay(const tam_host* host, const tam_sim_config* cfg)
      : host_(host),
        cfg_(cfg),
        threads_(std::max<int32_t>(cfg->threads, 1)),
        total_(cfg->count * static_cast<size_t>(std::max<int64_t>(cfg->repeat, 1))),
        turn_(new std::condition_variable[threads_]),
        trace_(cfg) {
    double at = std::min(std::max(cfg->fault_at, 0.0), 1.0);
    strike_ = total_ == 0 ? SIZE_MAX : std::min(static_cast<size_t>(at * static_cast<double>(total_)), total_);
  }

  int32_t run() {
    char line[128];
    if (total_ > 0) {
      std::snprintf(line, sizeof line, "simulating %zu callbacks on %d threads", total_, threads_);
    } else {
      std::snprintf(line, sizeof line, "simulating the trace as it is read, on %d threads", threads_);
    }
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
        {
          std::unique_lock<std::mutex> lock(mu_);
          turn_[i].wait(lock, [&] { return done_ || owner_ == i; });
          if (done_) return;
        }
        // This thread alone owns the replay state until the turn moves on.
        wait_for_room();
        size_t run = 0;
        const tam_sim_event* ev = trace_.peek();
        while (ev != nullptr) {
          deliver(*ev);
          if (stopped_) break;
          ev = trace_.peek();
          if (ev == nullptr || ++run >= kRun || !due(*ev)) break;
        }
        if (ev == nullptr && !stopped_ && !trace_.error().empty()) {
          finish_active();
          stop(TAM_FAILED, trace_.error());
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (stopped_ || ev == nullptr) {
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

  // Delivers the next event (ev, which trace_.peek() returned), and moves
  // the trace past it.
  void deliver(const tam_sim_event& ev) {
    size_t k = delivered_;
    if (cfg_->fault != TAM_FAULT_NONE && !struck_ && k == strike_) {
      strike();
      if (stopped_) return;
    }
    pace(ev);
    trace_.advance();
    ++delivered_;
    note_phase(ev.phase);
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

  // note_phase folds a delivered event's phase name into the fake engine's
  // checksum (FNV-1a over the names, one line each, in replay order).
  void note_phase(const char* phase) {
    for (const char* p = phase; p != nullptr && *p; ++p) {
      sum_ ^= static_cast<unsigned char>(*p);
      sum_ *= 1099511628211ull;
    }
    sum_ ^= '\n';
    sum_ *= 1099511628211ull;
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

  // When ev, the next event to deliver (the delivered_-th), is due on the
  // replay's clock: at its step, or at its own time in its repetition.
  Clock::time_point deadline(const tam_sim_event& ev) const {
    nanoseconds due =
        cfg_->step_ns > 0
            ? nanoseconds(cfg_->step_ns * static_cast<int64_t>(delivered_))
            : nanoseconds(ev.t_ns) + trace_.span() * static_cast<int64_t>(trace_.repetition());
    return start_ + shift_ + due;
  }

  // Whether ev may go right after the event just delivered, on the same
  // thread: when nothing paces it, or it is scheduled within kSlack of the
  // last one. Decided by the schedule, not the clock, so paced events
  // alternate threads even when a loaded machine makes the replay late.
  bool due(const tam_sim_event& ev) const {
    return cfg_->unpaced != 0 || cancel_seen_ || deadline(ev) - last_deadline_ < kSlack;
  }

  // Waits until ev is due. Once a cancel is seen the rest come at once,
  // as TensorRT only stops at the next stepComplete. Unpaced events never
  // wait: the monitor's queue is the only limit.
  void pace(const tam_sim_event& ev) {
    if (cfg_->unpaced != 0 || cancel_seen_) return;
    Clock::time_point at = deadline(ev);
    last_deadline_ = at;
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
        std::string msg = "simulated failure after " + std::to_string(delivered_) + " of " +
                          (total_ > 0 ? std::to_string(total_) : std::string("all the")) + " callbacks";
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
    char tail[96];
    std::snprintf(tail, sizeof tail, "\nevents %zu\nphases-fnv1a %016llx\n", delivered_,
                  static_cast<unsigned long long>(sum_));
    std::string body = "TRTACTION-SIM-ENGINE v1";
    body += tail;
    if (cfg_->engine_size > 0) return write_sized(cfg_->engine_tmp, body, cfg_->engine_size);
    return write_file(cfg_->engine_tmp, body);
  }

  int32_t write_file(const char* path, const std::string& body) {
    int fd = open_engine(path);
    if (fd < 0) return io_error("open", path);
    if (!write_all(fd, body.data(), body.size())) return close_failed(fd, "write", path);
    return finish_file(fd, path);
  }

  // A large fake engine (sim.engine-size): exactly size bytes, the header
  // (cut short when size is smaller) and then splitmix64's stream from the
  // settings' seed mixed with the trace's checksum, so builds that differ
  // get different bytes and the same build the same. Written a chunk at a
  // time: a 1 GiB engine is a second of writes, not millions of small ones.
  int32_t write_sized(const char* path, const std::string& header, int64_t size) {
    int fd = open_engine(path);
    if (fd < 0) return io_error("open", path);
    constexpr size_t kChunk = size_t{8} << 20;
    std::vector<unsigned char> buf(static_cast<size_t>(std::min<int64_t>(size, kChunk)));
    uint64_t state = cfg_->engine_seed ^ sum_;
    size_t head = 0;  // header bytes written so far
    for (int64_t left = size; left > 0;) {
      size_t n = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buf.size())));
      size_t at = 0;
      if (head < header.size()) {
        at = std::min(header.size() - head, n);
        std::memcpy(buf.data(), header.data() + head, at);
        head += at;
      }
      for (; at < n; at += 8) {
        uint64_t word = splitmix64(state);
        std::memcpy(buf.data() + at, &word, std::min<size_t>(8, n - at));
      }
      if (!write_all(fd, buf.data(), n)) return close_failed(fd, "write", path);
      left -= static_cast<int64_t>(n);
    }
    return finish_file(fd, path);
  }

  static uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // open_engine creates the engine file. O_NOFOLLOW: a link planted at the
  // predictable temporary name must not send the engine elsewhere (as in
  // backends/files.h).
  static int open_engine(const char* path) {
    return ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  }

  static bool write_all(int fd, const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    size_t off = 0;
    while (off < size) {
      ssize_t w = ::write(fd, p + off, size - off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return false;
      off += static_cast<size_t>(w);
    }
    return true;
  }

  // finish_file syncs and closes a written engine.
  int32_t finish_file(int fd, const char* path) {
    if (::fsync(fd) != 0) return close_failed(fd, "fsync", path);
    if (::close(fd) != 0) return io_error("close", path);
    return TAM_OK;
  }

  // close_failed reports op's errno on path, then closes fd.
  int32_t close_failed(int fd, const char* op, const char* path) {
    int32_t st = io_error(op, path);
    ::close(fd);
    return st;
  }

  int32_t io_error(const char* op, const char* path) {
    error_ = std::string("simulator: ") + op + " " + path + ": " + std::strerror(errno);
    return TAM_FAILED;
  }

  const tam_host* host_;
  const tam_sim_config* cfg_;
  const int threads_;
  const size_t total_;  // events to deliver: count times repeat; 0 when not known
  size_t strike_ = 0;   // SIZE_MAX: at the end

  std::mutex mu_;
  std::unique_ptr<std::condition_variable[]> turn_;  // one per thread: a hand-over wakes only the next
  int owner_ = 0;      // guarded by mu_: whose turn it is
  bool done_ = false;  // guarded by mu_

  // Owned by whichever thread holds the turn; the hand-over through mu_
  // orders each owner after the previous one.
  Trace trace_;
  size_t delivered_ = 0;
  uint64_t sum_ = 1469598103934665603ull;  // the fake engine's checksum so far
  Clock::time_point start_;
  Clock::time_point last_deadline_;
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
    if (host == nullptr || cfg == nullptr ||
        (cfg->events == nullptr && (cfg->source.read == nullptr || cfg->source.rewind == nullptr))) {
      copy_error("simulator: missing host, config, or events and a source", err, errcap);
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
