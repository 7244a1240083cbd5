package build

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// The shared store behind the engine cache (EngineCache.Remote): a build
// whose key the cache folder lacks asks the store (watch.pull), and in
// read-write mode what the run builds, or finds in the folder that the
// store lacks, is pushed to it (runner.startPush) beside the other
// builds, never in a job slot and never delaying a build's end; the
// build's report entry is updated when its push ends (event.CachePushed).
//
// When the store fails (unreachable, credentials refused, errors after
// its own bounded retries, a transfer that stalled), it is switched off
// for the rest of the run, with one warning naming it and the cause: each
// of those says the store as a whole cannot serve this run now, and every
// later build would pay the same timeouts and retries for nothing. A
// refused entry (poisoned: bytes or metadata that disagree, another key's
// metadata) is that entry's fault: a miss with a warning, and the store
// stays on. So does a failure of this machine's side (a full disk, an
// engine path that cannot take the engine).
//
// Two runners that miss the same key both build it; the second push finds
// the first's entry and keeps it (pushed false). No lease makes one
// runner wait for another's build: an OCI registry has no create-if-absent
// for a tag, so a lease there cannot be exclusive, and a lease that is
// wrong (its runner killed, cancelled, failing, or far slower than the
// waiter's budget, or clocks apart) costs the waiter its whole expiry
// with a GPU idle, where building twice costs only the GPU time of one
// build. The fan-out (docs/github.md) gives each key to one shard instead.

// defaultPushTimeout is EngineCache.PushTimeout's default.
const defaultPushTimeout = 5 * time.Minute

// maxPushes bounds the pushes that run at once: each reads an engine of up
// to gigabytes from the disk and sends it, and a matrix of hits on a warm
// runner seeds the store without flooding the link.
const maxPushes = 4

// sharedTier is one run's use of the shared store.
type sharedTier struct {
	store   remote.Store
	mode    remote.Mode
	timeout time.Duration
	warn    func(string) // a run-level warning, through the runner's loop

	mu    sync.Mutex
	off   bool
	known map[cache.Key]inStore
	// offed is done once the store is switched off: pulls still waiting on
	// it (a lookup of a store that is down retries for seconds) stop then.
	offed     context.Context
	switchOff context.CancelCauseFunc

	// ctx is the pushes': cancelled, with the reason, to abandon them.
	ctx    context.Context
	cancel context.CancelCauseFunc
	slots  chan struct{}
}

// inStore is what this run learned of a key in the store.
type inStore int

const (
	unknown inStore = iota
	missing         // a lookup of this run found no entry: not asked again
	present         // pulled from it, pushed to it, or found there by Has
	pushing         // a push of this run is putting it there
)

func newSharedTier(ec *EngineCache, warn func(string)) *sharedTier {
	t := &sharedTier{store: ec.Remote, mode: ec.RemoteMode, timeout: ec.PushTimeout, warn: warn,
		known: map[cache.Key]inStore{}, slots: make(chan struct{}, maxPushes)}
	if t.mode == "" {
		t.mode = remote.ReadWrite
	}
	if t.timeout <= 0 {
		t.timeout = defaultPushTimeout
	}
	t.ctx, t.cancel = context.WithCancelCause(context.Background())
	t.offed, t.switchOff = context.WithCancelCause(context.Background())
	return t
}

// errSwitchedOff is why a pull was stopped when the store was switched off
// meanwhile: the build runs, and the run's one warning says why.
var errSwitchedOff = errors.New("the shared store was switched off for this run")

// pullContext is ctx (the build's budgets and the run's signals), ended
// also when the store is switched off.
func (t *sharedTier) pullContext(ctx context.Context) (context.Context, func()) {
	pull, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(t.offed, func() { cancel(errSwitchedOff) })
	return pull, func() {
		stop()
		cancel(nil)
	}
}

// runCache is the report's account of the store.
func (t *sharedTier) runCache() *report.RunCache {
	return &report.RunCache{Remote: t.store.Location(), RemoteMode: string(t.mode)}
}

// shouldPull is whether a build of k that the folder lacks asks the store:
// not once the store is off, nor for a key a lookup of this run found
// missing (the builds of one key ask once).
func (t *sharedTier) shouldPull(k cache.Key) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.off && t.known[k] != missing
}

// note records what the run learned of k.
func (t *sharedTier) note(k cache.Key, s inStore) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.known[k] = s
}

// claimPush is whether a push of k starts: in read-write mode, with the
// store on; a local hit's (offer) only when the run knows of no entry for
// k there and no push of it. A push that starts marks k as being pushed.
func (t *sharedTier) claimPush(k cache.Key, offer bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.off || t.mode != remote.ReadWrite || t.ctx.Err() != nil {
		return false
	}
	if s := t.known[k]; offer && (s == present || s == pushing) {
		return false
	}
	t.known[k] = pushing
	return true
}

// fail switches the store off for the rest of the run after it failed (a
// *cache.StoreError, or an error of Has); the first failure is told, once,
// with what the store was doing.
func (t *sharedTier) fail(err error) {
	t.mu.Lock()
	first := !t.off
	t.off = true
	t.mu.Unlock()
	if !first {
		return
	}
	t.switchOff(errSwitchedOff)
	doing := "checking whether it has an entry"
	var failed *cache.StoreError
	if errors.As(err, &failed) {
		doing, err = storeDoing[failed.Op], failed.Err
	}
	t.warn(fmt.Sprintf("the shared store %s failed while %s (%v): the rest of this run uses the cache folder alone, and pushes nothing",
		t.store.Location(), doing, err))
}

// storeDoing words a cache.StoreError's Op for the run's warning.
var storeDoing = map[string]string{
	"look up": "looking up an engine",
	"read":    "pulling an engine",
	"push":    "pushing an engine",
}

// pushJob is a push a build asked for when it ended.
type pushJob struct {
	key     cache.Key
	replace bool // a --rebuild's engine, or one built after the store's entry was refused
	offer   bool // a local hit: pushed only when the store lacks the key (one Has)
}

// pushOutcome is how a push ended.
type pushOutcome struct {
	pushed   bool
	transfer *report.CacheTransfer
	warning  string // for the build's report entry; "" when none
}

// push runs job with the entry of c's folder, in a slot of its own, and
// returns how it ended; progress is told of the bytes sent.
func (t *sharedTier) push(c *cache.Cache, job *pushJob, progress cache.Progress) pushOutcome {
	out := t.pushOnce(c, job, progress)
	if out.pushed || out.warning == "" && !t.isOff() {
		t.note(job.key, present) // pushed, or the store had it (another runner's entry stays)
	} else {
		t.note(job.key, unknown)
	}
	return out
}

func (t *sharedTier) pushOnce(c *cache.Cache, job *pushJob, progress cache.Progress) pushOutcome {
	select {
	case t.slots <- struct{}{}:
		defer func() { <-t.slots }()
	case <-t.ctx.Done():
		return pushOutcome{warning: notPushed(context.Cause(t.ctx))}
	}
	if job.offer {
		has, err := t.store.Has(t.ctx, string(job.key))
		switch {
		case t.ctx.Err() != nil:
			return pushOutcome{warning: notPushed(context.Cause(t.ctx))}
		case err != nil:
			t.fail(err)
			return pushOutcome{}
		case has:
			return pushOutcome{}
		}
	}
	p, err := c.Push(t.ctx, t.store, job.key, job.replace, progress)
	out := pushOutcome{pushed: p.Pushed && err == nil}
	if p.Bytes > 0 || out.pushed {
		out.transfer = &report.CacheTransfer{Direction: report.TransferPush, Bytes: p.Bytes, Ms: p.Elapsed.Milliseconds()}
	}
	var failed *cache.StoreError
	switch {
	case err == nil:
	case t.ctx.Err() != nil:
		out.warning = notPushed(context.Cause(t.ctx))
	case errors.As(err, &failed):
		t.fail(err)
	default: // this entry's: gone from the folder, metadata too large, refused
		out.warning = notPushed(err)
	}
	return out
}

// isOff is whether the store was switched off.
func (t *sharedTier) isOff() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.off
}

// notPushed is a build's warning for a push that did not happen.
func notPushed(why error) string {
	return report.CacheWarningPrefix + "not pushed to the shared store: " + why.Error()
}

// abandoned is why pushes were abandoned: the run's signal, or the push
// timeout.
type abandoned struct{ why string }

func (a abandoned) Error() string { return "abandoned: " + a.why }

// withPush is the build's report entry once its push ended: a copy of
// whole (the entry as the build ended; views may still read it) with the
// push's outcome.
func withPush(whole *report.Build, out pushOutcome) *report.Build {
	b := *whole
	use := *b.Cache
	use.Pushed = out.pushed
	if out.transfer != nil && use.Transfer == nil { // a pull's transfer is what a remote hit moved
		use.Transfer = out.transfer
	}
	b.Cache = &use
	if out.warning != "" {
		b.Warnings = append(b.Warnings[:len(b.Warnings):len(b.Warnings)], out.warning)
	}
	return &b
}

// transferProgress is a cache.Progress that shows a transfer of the
// build's to the views; started reports whether it was called.
func transferProgress(send func(event.Event), direction string) (p cache.Progress, started func() bool) {
	begin := time.Now()
	var mu sync.Mutex
	called := false
	return func(done, total int64) {
			mu.Lock()
			called = true
			mu.Unlock()
			send(event.Event{Kind: event.CacheTransfer, Transfer: &event.Transfer{
				Direction: direction, Bytes: done, Total: total, Elapsed: time.Since(begin)}})
		}, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return called
		}
}

// storeWarning is a run-level warning of the store's, which the loop
// also keeps in the report's Cache.Warnings (by its prefix).
func (r *runner) storeWarning(msg string) {
	r.send(runWarning(report.CacheWarningPrefix + msg))
}

// send hands an event of a push (or of the store) to the loop; once the
// loop has ended (an abandoned push ending late) it goes nowhere.
func (r *runner) send(ev event.Event) {
	select {
	case r.events <- ev:
	case <-r.closed:
	}
}

// beginPush starts the push build i asked for when it ended (res, its
// report entry) beside the other builds, and returns the entry the loop
// settles: res, or res with a warning when pushes were abandoned already.
// The push's end comes back to the loop as event.CachePushed.
func (r *runner) beginPush(i int, res *report.Build) *report.Build {
	job := r.pushJobs[i]
	r.pushJobs[i] = nil
	switch {
	case job == nil:
		return res
	case r.pushesAbandoned != nil:
		warning := notPushed(r.pushesAbandoned)
		r.emit(event.Event{Kind: event.Warning, Build: i, Name: res.Name, Message: warning})
		return withPush(res, pushOutcome{warning: warning})
	case !r.shared.claimPush(job.key, job.offer):
		return res
	}
	r.awaiting[i] = res
	send := func(ev event.Event) {
		ev.Build, ev.Name = i, res.Name
		r.send(ev)
	}
	progress, started := transferProgress(send, report.TransferPush)
	c := r.opts.Cache.Cache
	go func() {
		out := r.shared.push(c, job, progress)
		if r.shared.ctx.Err() != nil {
			return // abandoned: the loop settled the build then, with its warning
		}
		if started() {
			end := &event.Transfer{Direction: report.TransferPush, Ended: true}
			if out.transfer != nil {
				end.Bytes, end.Elapsed = out.transfer.Bytes, time.Duration(out.transfer.Ms)*time.Millisecond
			}
			if out.warning != "" {
				end.Err = out.warning
			}
			send(event.Event{Kind: event.CacheTransfer, Transfer: end})
		}
		if out.warning != "" {
			send(event.Event{Kind: event.Warning, Message: out.warning})
		}
		send(event.Event{Kind: event.CachePushed, Result: withPush(res, out)})
	}()
	return res
}

// awaitPushes waits, once every build has ended, for the pushes still
// running, up to the push timeout; a signal, or the timeout, abandons
// those left. Their ends update the report as they come.
func (r *runner) awaitPushes(signals <-chan os.Signal) {
	if len(r.awaiting) == 0 {
		return
	}
	timeout := time.NewTimer(r.shared.timeout)
	defer timeout.Stop()
	running := 0
	for len(r.awaiting) > 0 {
		select {
		case ev := <-r.events:
			if r.take(ev, &running) {
				r.checkpoint(false)
			}
		case <-r.checkpointDue:
			r.checkpoint(true)
		case sig := <-signals:
			r.onSignal(sig)
		case <-timeout.C:
			r.abandonPushes(fmt.Sprintf("still running %s after the last build ended (the push timeout)", text.Duration(r.shared.timeout)))
		}
	}
}

// abandonPushes cancels every push and settles the builds whose push was
// running, each with a warning saying why; builds that end later push
// nothing (beginPush).
func (r *runner) abandonPushes(why string) {
	if r.shared == nil || r.pushesAbandoned != nil {
		return
	}
	cause := abandoned{why: why}
	r.pushesAbandoned = cause
	r.shared.cancel(cause)
	for _, i := range slices.Sorted(maps.Keys(r.awaiting)) {
		b := withPush(r.awaiting[i], pushOutcome{warning: notPushed(cause)})
		delete(r.awaiting, i)
		r.rep.Settle(i, b)
		r.emit(event.Event{Kind: event.Warning, Build: i, Name: b.Name, Message: b.Warnings[len(b.Warnings)-1]})
		r.emit(event.Event{Kind: event.CachePushed, Build: i, Name: b.Name, Result: b})
	}
	r.checkpoint(false)
}
