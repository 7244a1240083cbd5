//go:build cgo

// monitor.cc: the tam_monitor_* half of trtaction.h.
//
// TensorRT calls the monitor from its own threads while it times tactics, so
// a callback must cost next to nothing: it interns the phase name through a
// lock-free table, reads the clock, reserves a slot in a chunked queue with
// one CAS and publishes the event with a release store. It never blocks,
// never allocates except at a chunk boundary, and never enters Go. Go drains
// the queue from one goroutine a few times a second.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "trtaction.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kCacheLine = 64;

// ------------------------------------------------------------------ names

uint64_t fnv1a(const char* s, size_t* len) {
  uint64_t h = 1469598103934665603ull;
  const char* p = s;
  for (; *p; ++p) {
    h ^= static_cast<unsigned char>(*p);
    h *= 1099511628211ull;
  }
  *len = static_cast<size_t>(p - s);
  return h;
}

struct Name {
  uint64_t hash;
  uint64_t id;
  std::string text;
};

// Names maps phase names to 64-bit ids. Lookups of known names are lock-free:
// an open-addressed table of atomic pointers to immutable entries. Inserting
// a new name (a few dozen per build) takes the mutex.
class Names {
 public:
  ~Names() {
    for (auto& kv : by_id_) delete kv.second;
  }

  uint64_t intern(const char* s) {
    if (s == nullptr) return 0;
    size_t len;
    uint64_t h = fnv1a(s, &len);
    for (size_t i = 0, at = h & kMask; i < kSlots; ++i, at = (at + 1) & kMask) {
      const Name* e = slots_[at].load(std::memory_order_acquire);
      if (e == nullptr) break;
      if (e->hash == h && e->text.size() == len && std::memcmp(e->text.data(), s, len) == 0) return e->id;
    }
    return insert(s, len, h);
  }

  // Copies the name behind id into buf; returns its full length or -1.
  int64_t lookup(uint64_t id, char* buf, size_t cap) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return -1;
    const std::string& t = it->second->text;
    if (buf != nullptr && cap > 0) {
      size_t n = std::min(t.size(), cap - 1);
      std::memcpy(buf, t.data(), n);
      buf[n] = '\0';
    }
    return static_cast<int64_t>(t.size());
  }

 private:
  static constexpr size_t kSlots = 4096;  // TensorRT uses a few dozen names
  static constexpr size_t kMask = kSlots - 1;
  static constexpr size_t kMaxFill = kSlots * 3 / 4;

  uint64_t insert(const char* s, size_t len, uint64_t h) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string text(s, len);
    auto known = by_text_.find(text);
    if (known != by_text_.end()) return known->second->id;  // raced, or overflowed the table
    uint64_t id = h == 0 ? 1 : h;
    while (id == 0 || by_id_.count(id) != 0) ++id;  // a hash collision: ids stay unique
    Name* e = new Name{h, id, std::move(text)};
    by_id_.emplace(id, e);
    by_text_.emplace(e->text, e);
    if (filled_ < kMaxFill) {
      size_t at = h & kMask;
      while (slots_[at].load(std::memory_order_relaxed) != nullptr) at = (at + 1) & kMask;
      slots_[at].store(e, std::memory_order_release);
      ++filled_;
    }
    return id;
  }

  std::atomic<const Name*> slots_[kSlots] = {};
  std::mutex mu_;  // guards everything below
  size_t filled_ = 0;
  std::unordered_map<uint64_t, Name*> by_id_;
  std::unordered_map<std::string, Name*> by_text_;
};

// ------------------------------------------------------------------ queue

constexpr uint64_t kChunkEvents = 4096;
// The queue holds at most kCapEvents undrained events (about 24 MiB); after
// that callbacks are counted as dropped rather than ever blocking TensorRT.
constexpr uint64_t kCapEvents = 128 * kChunkEvents;
// Chunk k lives in ring slot k % kRing. Because at most kCapEvents events are
// outstanding, live chunks never share a slot (needs kCapEvents <= (kRing-1)*kChunkEvents).
constexpr uint64_t kRing = kCapEvents / kChunkEvents + 2;
static_assert(kCapEvents <= (kRing - 1) * kChunkEvents, "ring too small for the cap");

struct Slot {
  tam_event ev;
  std::atomic<uint32_t> ready;
};

struct Chunk {
  Slot slots[kChunkEvents];
  Chunk() {
    for (auto& s : slots) s.ready.store(0, std::memory_order_relaxed);
  }
};

// Queue is a multi-producer single-consumer queue of events. Producers take
// a ticket t (a CAS that also enforces the cap), find chunk t / kChunkEvents
// in the ring, allocating it if they are first, write the slot and raise its
// ready flag. The consumer reads tickets in order, lowers each flag, and
// recycles a chunk once it has read all of it; only then does it publish the
// new head, which is what lets producers reuse that ring slot.
class Queue {
 public:
  ~Queue() {
    for (auto& r : ring_) delete r.load(std::memory_order_relaxed);
    for (auto& s : spares_) delete s.load(std::memory_order_relaxed);
  }

  // Returns false when the event was dropped because the queue is full.
  bool push(const tam_event& ev) {
    uint64_t t = tail_.load(std::memory_order_relaxed);
    for (;;) {
      uint64_t h = head_.load(std::memory_order_acquire);
      // Signed: t may be stale and behind h; then the CAS below fails and retries.
      if (static_cast<int64_t>(t - h) >= static_cast<int64_t>(kCapEvents)) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
      if (tail_.compare_exchange_weak(t, t + 1, std::memory_order_relaxed, std::memory_order_relaxed)) break;
    }
    Chunk* c = chunk_for(t / kChunkEvents);
    Slot& s = c->slots[t % kChunkEvents];
    s.ev = ev;
    s.ready.store(1, std::memory_order_release);
    return true;
  }

  size_t drain(tam_event* out, size_t cap) {
    uint64_t h = head_.load(std::memory_order_relaxed);
    size_t n = 0;
    while (n < cap) {
      std::atomic<Chunk*>& ref = ring_[(h / kChunkEvents) % kRing];
      Chunk* c = ref.load(std::memory_order_acquire);
      if (c == nullptr) break;
      Slot& s = c->slots[h % kChunkEvents];
      if (s.ready.load(std::memory_order_acquire) == 0) break;
      out[n++] = s.ev;
      s.ready.store(0, std::memory_order_relaxed);
      ++h;
      if (h % kChunkEvents == 0) {
        ref.store(nullptr, std::memory_order_relaxed);  // published by the head store below
        recycle(c);
      }
    }
    head_.store(h, std::memory_order_release);
    return n;
  }

  int64_t backlog() const {
    return static_cast<int64_t>(tail_.load(std::memory_order_relaxed) - head_.load(std::memory_order_relaxed));
  }
  int64_t accepted() const { return static_cast<int64_t>(tail_.load(std::memory_order_relaxed)); }
  int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  Chunk* chunk_for(uint64_t k) {
    std::atomic<Chunk*>& ref = ring_[k % kRing];
    Chunk* c = ref.load(std::memory_order_acquire);
    if (c != nullptr) return c;
    Chunk* fresh = take_spare();
    if (ref.compare_exchange_strong(c, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) return fresh;
    recycle(fresh);  // another producer linked the chunk first
    return c;
  }

  Chunk* take_spare() {
    Chunk* c = nullptr;
    for (size_t i = 0; c == nullptr && i < kSpares; ++i) {
      if (spares_[i].load(std::memory_order_relaxed) != nullptr)
        c = spares_[i].exchange(nullptr, std::memory_order_acquire);
    }
    while (c == nullptr) {
      // A producer holding a ticket must publish that slot or the consumer
      // stalls, so an allocation failure waits for memory instead of dropping.
      c = new (std::nothrow) Chunk();
      if (c == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return c;
  }

  // Keeps a few clean chunks for the next boundaries, so steady state
  // allocates nothing (a fresh chunk costs page faults on the hot path).
  void recycle(Chunk* c) {
    for (auto& s : spares_) {
      Chunk* empty = nullptr;
      if (s.compare_exchange_strong(empty, c, std::memory_order_release, std::memory_order_relaxed)) return;
    }
    delete c;
  }

  alignas(kCacheLine) std::atomic<uint64_t> tail_{0};
  alignas(kCacheLine) std::atomic<uint64_t> head_{0};
  alignas(kCacheLine) std::atomic<int64_t> dropped_{0};
  static constexpr size_t kSpares = 4;
  alignas(kCacheLine) std::atomic<Chunk*> spares_[kSpares] = {};
  std::atomic<Chunk*> ring_[kRing] = {};
};

// ------------------------------------------------------------------ threads

std::atomic<uint64_t> g_generation{0};

// A thread remembers its number for the few monitors it called last; the
// generation tells monitors apart even when one is freed and another gets
// its address.
struct ThreadNumber {
  uint64_t generation;
  int32_t number;
};
constexpr int kThreadCache = 4;
thread_local ThreadNumber t_numbers[kThreadCache];
thread_local unsigned t_next_victim;

constexpr size_t kMaxLogLines = 100000;

}  // namespace

// ------------------------------------------------------------------ monitor

struct tam_monitor {
  const uint64_t generation = g_generation.fetch_add(1) + 1;  // never 0: 0 marks an empty cache entry
  const Clock::time_point born = Clock::now();
  tam_host host{};

  Names names;
  Queue queue;

  alignas(kCacheLine) std::atomic<int> cancelled{0};
  alignas(kCacheLine) std::atomic<int64_t> last_ns{-1};

  std::mutex threads_mu;  // a thread's first callback only
  std::unordered_map<std::thread::id, int32_t> threads;

  std::mutex logs_mu;
  std::deque<std::pair<int32_t, std::string>> logs;

  int32_t thread_number() {
    for (auto& e : t_numbers)
      if (e.generation == generation) return e.number;
    int32_t n;
    {
      std::lock_guard<std::mutex> lock(threads_mu);
      auto it = threads.emplace(std::this_thread::get_id(), static_cast<int32_t>(threads.size()) + 1).first;
      n = it->second;
    }
    t_numbers[t_next_victim++ % kThreadCache] = ThreadNumber{generation, n};
    return n;
  }

  void record(int32_t kind, const char* phase, const char* parent, int32_t n) {
    tam_event ev;
    ev.t_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - born).count();
    ev.phase = names.intern(phase);
    ev.parent = names.intern(parent);
    ev.kind = kind;
    ev.n = n;
    ev.thread = thread_number();
    ev._pad = 0;
    last_ns.store(ev.t_ns, std::memory_order_relaxed);
    queue.push(ev);
  }
};

namespace {

void host_phase_start(void* ctx, const char* phase, const char* parent, int32_t nb_steps) {
  tam_phase_start(static_cast<tam_monitor*>(ctx), phase, parent, nb_steps);
}
int host_step_complete(void* ctx, const char* phase, int32_t step) {
  return tam_step_complete(static_cast<tam_monitor*>(ctx), phase, step);
}
void host_phase_finish(void* ctx, const char* phase) { tam_phase_finish(static_cast<tam_monitor*>(ctx), phase); }
void host_log(void* ctx, int32_t severity, const char* msg) {
  tam_monitor_log(static_cast<tam_monitor*>(ctx), severity, msg);
}
int host_cancelled(void* ctx) { return tam_monitor_cancelled(static_cast<tam_monitor*>(ctx)); }
int64_t host_backlog(void* ctx) { return tam_monitor_backlog(static_cast<tam_monitor*>(ctx)); }

}  // namespace

extern "C" {

tam_monitor* tam_monitor_new(void) {
  try {
    tam_monitor* m = new tam_monitor();
    m->host = tam_host{TAM_BACKEND_ABI, m,           host_phase_start, host_step_complete,
                       host_phase_finish, host_log, host_cancelled, host_backlog};
    return m;
  } catch (...) {
    return nullptr;
  }
}

void tam_monitor_free(tam_monitor* m) {
  try {
    delete m;
  } catch (...) {
  }
}

const tam_host* tam_monitor_host(tam_monitor* m) { return m == nullptr ? nullptr : &m->host; }

int64_t tam_monitor_epoch_ns(tam_monitor* m) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(m->born.time_since_epoch()).count();
}

void tam_phase_start(tam_monitor* m, const char* phase, const char* parent, int32_t nb_steps) {
  try {
    m->record(TAM_EV_START, phase, parent, nb_steps);
  } catch (...) {
  }
}

int tam_step_complete(tam_monitor* m, const char* phase, int32_t step) {
  try {
    m->record(TAM_EV_STEP, phase, nullptr, step);
  } catch (...) {
  }
  return m->cancelled.load(std::memory_order_acquire) == 0 ? 1 : 0;
}

void tam_phase_finish(tam_monitor* m, const char* phase) {
  try {
    m->record(TAM_EV_FINISH, phase, nullptr, 0);
  } catch (...) {
  }
}

void tam_monitor_cancel(tam_monitor* m) { m->cancelled.store(1, std::memory_order_release); }

int64_t tam_monitor_backlog(tam_monitor* m) { return m->queue.backlog(); }

int tam_monitor_cancelled(tam_monitor* m) { return m->cancelled.load(std::memory_order_acquire); }

size_t tam_monitor_drain(tam_monitor* m, tam_event* out, size_t cap) {
  try {
    return m->queue.drain(out, cap);
  } catch (...) {
    return 0;
  }
}

int64_t tam_monitor_name(tam_monitor* m, uint64_t id, char* buf, size_t cap) {
  try {
    return m->names.lookup(id, buf, cap);
  } catch (...) {
    return -1;
  }
}

void tam_monitor_stats_get(tam_monitor* m, tam_monitor_stats* out) {
  out->dropped = m->queue.dropped();
  out->callbacks = m->queue.accepted() + out->dropped;
  out->last_callback_ns = m->last_ns.load(std::memory_order_relaxed);
}

void tam_monitor_log(tam_monitor* m, int32_t severity, const char* msg) {
  try {
    std::lock_guard<std::mutex> lock(m->logs_mu);
    if (m->logs.size() >= kMaxLogLines) return;  // a runaway verbose logger must not eat memory
    m->logs.emplace_back(severity, msg == nullptr ? "" : msg);
  } catch (...) {
  }
}

int64_t tam_monitor_pop_log(tam_monitor* m, int32_t* severity, char* buf, size_t cap) {
  try {
    std::pair<int32_t, std::string> line;
    {
      std::lock_guard<std::mutex> lock(m->logs_mu);
      if (m->logs.empty()) return -1;
      line = std::move(m->logs.front());
      m->logs.pop_front();
    }
    if (severity != nullptr) *severity = line.first;
    if (buf != nullptr && cap > 0) {
      size_t n = std::min(line.second.size(), cap - 1);
      std::memcpy(buf, line.second.data(), n);
      buf[n] = '\0';
    }
    return static_cast<int64_t>(line.second.size());
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
