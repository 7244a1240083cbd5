//go:build cgo

// SIGINT and SIGTERM are caught from the executable's first constructor on.
//
// Why a handler and not a blocked mask: a Go executable unblocks SIGINT and
// SIGTERM on every thread as the runtime starts (minitSignalMask drops every
// signal blockableSig calls unblockable, and SIGINT and SIGTERM carry
// _SigKill; go/src/runtime/signal_unix.go), so a signal held pending from
// here would be delivered by the default action the moment the runtime
// starts. (That same unblocking is why no child gets them blocked: Go
// forks with the forking thread's mask, syscall_runtime_BeforeFork, and
// every Go thread has both unblocked.)
//
// Why the sigaction wrapper: the runtime installs its own handler for both
// signals before any package's init runs, and until os/signal.Notify that
// handler ends the process (runtime.sighandler: sigsend fails, dieFromSignal).
// With cgo on linux/amd64 and arm64, the runtime installs handlers through the
// C library's sigaction (go/src/runtime/cgo/sigaction.go, there for sanitizer
// interceptors), so defining sigaction here lets the hold keep its handler in
// place and remember what the runtime asked for; tam_hold_release, called by
// package earlysignal's init once Notify is in force, installs it then.
// Every other call, and every call once released, goes straight through.
#define _GNU_SOURCE
#include "hold.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

enum { HELD = 2 };
static const int held_signal[HELD] = {SIGINT, SIGTERM};

typedef int (*sigaction_fn)(int, const struct sigaction*, struct sigaction*);

static sigaction_fn real_sigaction_fn;
static atomic_int held[HELD];           // 1 while the hold's handler stands in for the signal
static struct sigaction asked[HELD];    // what the process asked for meanwhile (guarded by lock)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

// The signals caught during the hold: a slot is claimed (claimed), then
// written (written), so a release can wait for a handler running on another
// thread to finish writing.
static atomic_int claimed, written;
static volatile sig_atomic_t caught[TAM_HOLD_MAX];

static int real_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    sigaction_fn fn = atomic_load_explicit((_Atomic sigaction_fn*)&real_sigaction_fn, memory_order_acquire);
    if (fn == NULL) {
        fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        atomic_store_explicit((_Atomic sigaction_fn*)&real_sigaction_fn, fn, memory_order_release);
    }
    return fn(sig, act, old);
}

static int slot_of(int sig) {
    for (int i = 0; i < HELD; i++) {
        if (held_signal[i] == sig) {
            return i;
        }
    }
    return -1;
}

// catch_held runs in signal context: atomics and a volatile store only.
static void catch_held(int sig) {
    int n = atomic_fetch_add(&claimed, 1);
    if (n < TAM_HOLD_MAX) {
        caught[n] = sig;
    }
    atomic_fetch_add(&written, 1);
}

__attribute__((constructor)) static void tam_hold_start(void) {
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_handler = catch_held;
    sigemptyset(&ours.sa_mask);
    for (int i = 0; i < HELD; i++) {
        sigaddset(&ours.sa_mask, held_signal[i]);
    }
    // SA_ONSTACK: once Go runs, a signal may land on a goroutine's small
    // stack; Go gives each of its threads an alternate stack for handlers.
    ours.sa_flags = SA_RESTART | SA_ONSTACK;
    for (int i = 0; i < HELD; i++) {
        struct sigaction start;
        if (real_sigaction(held_signal[i], NULL, &start) != 0 || start.sa_handler != SIG_DFL) {
            continue;  // ignored by whoever started us: it stays ignored, as without the hold
        }
        asked[i] = start;
        if (real_sigaction(held_signal[i], &ours, NULL) == 0) {
            atomic_store(&held[i], 1);
        }
    }
}

// sigaction is the C library's, except for a held signal during the hold:
// the caller sees and changes the disposition it would have had, and the
// hold's handler stays installed until the release.
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    int i = slot_of(sig);
    if (i < 0 || !atomic_load(&held[i])) {
        return real_sigaction(sig, act, old);
    }
    pthread_mutex_lock(&lock);
    if (!atomic_load(&held[i])) {  // released meanwhile
        pthread_mutex_unlock(&lock);
        return real_sigaction(sig, act, old);
    }
    struct sigaction before = asked[i];
    if (act != NULL) {
        asked[i] = *act;
    }
    pthread_mutex_unlock(&lock);
    if (old != NULL) {
        *old = before;
    }
    return 0;
}

int tam_hold_release(int* out, int max) {
    for (int i = 0; i < HELD; i++) {
        pthread_mutex_lock(&lock);
        if (atomic_exchange(&held[i], 0)) {
            struct sigaction now;
            // Only if the hold's handler is still the one installed: had the
            // runtime bypassed this wrapper, its handler is in place already.
            if (real_sigaction(held_signal[i], NULL, &now) == 0 && now.sa_handler == catch_held) {
                real_sigaction(held_signal[i], &asked[i], NULL);
            }
        }
        pthread_mutex_unlock(&lock);
    }
    // No handler of the hold can start now; wait for one that started on
    // another thread to finish writing.
    int n = atomic_load(&claimed);
    while (atomic_load(&written) < n) {
    }
    if (n > TAM_HOLD_MAX) {
        n = TAM_HOLD_MAX;
    }
    static atomic_int taken;
    if (atomic_exchange(&taken, 1)) {
        return 0;
    }
    int w = 0;
    for (; w < n && w < max; w++) {
        out[w] = caught[w];
    }
    return w;
}
