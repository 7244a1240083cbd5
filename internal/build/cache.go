package build

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/trt-action/trt-action/internal/cache"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
)

// A build with an engine cache: before its worker starts, its key is
// computed (on the build's own goroutine, never the runner loop's, so
// signals and budgets stay prompt) and the cache asked; a hit installs the
// engine and starts no worker. A build that ends ok stores its engine.

// EngineCache is the engine cache as one run uses it. The CLI makes it:
// it opens the cache and names, once per run, the library each backend
// loads and the GPUs' models.
type EngineCache struct {
	Cache  *cache.Cache
	Hasher *cache.Hasher // one per run: a model shared by many builds is read once
	// Env is what a build's key needs beyond the build: the library it
	// loads and, for tensorrt, the model of gpu ("" without --gpus). An
	// error says why the key cannot be known; the build then runs without
	// the cache.
	Env func(b matrix.Build, gpu string) (cache.Env, error)
	// Rebuild reports whether --rebuild names the build: it is built
	// without asking the cache, and its engine replaces the entry.
	Rebuild func(name string) bool

	// Remote is the shared store behind the cache folder (shared.go): a
	// build whose key the folder lacks asks it, and in read-write mode
	// what the run builds, or finds in the folder that the store lacks,
	// is pushed to it. nil: no shared store.
	Remote remote.Store
	// RemoteMode is what the run may do with Remote: remote.ReadWrite
	// (look up and push; the default when empty) or remote.ReadOnly (look
	// up only).
	RemoteMode remote.Mode
	// PushTimeout bounds how long a run whose builds have all ended waits
	// for its pushes still running; those still running then are
	// abandoned, with a warning each. 0 = 5 minutes.
	PushTimeout time.Duration

	inRun sameKey // the keys this run is building now, and those --rebuild is for
}

// planRebuilds computes, on a goroutine of its own, the keys of the
// builds --rebuild names, for every GPU a build may get (Env says where
// the GPU is part of the key: for a backend that builds for the GPU it
// runs on), so that no build asks the cache for one of those keys before
// it is known to be one (whichever build hashes its model first). Run
// calls it once, before any build starts; it returns the channel that
// closes when they are known. The hashes of the models are remembered
// (Hasher), so a build of the same model reads it no second time. A key
// that cannot be computed is left out: that build runs without the cache.
func (ec *EngineCache) planRebuilds(r *runner) <-chan struct{} {
	planned := make(chan struct{})
	var named []int
	for i, b := range r.builds {
		if cacheable(b) && ec.Rebuild != nil && ec.Rebuild(b.Name) {
			ec.inRun.addRebuilder(i)
			named = append(named, i)
		}
	}
	if len(named) == 0 {
		close(planned)
		return planned
	}
	gpus := []string{""}
	if r.opts.GPUs != nil {
		gpus = r.opts.GPUs.Devices()
	}
	go func() {
		defer close(planned)
		for _, i := range named {
			b := r.builds[i]
			done := map[cache.Env]bool{} // GPUs alike, or a backend whose key has none: one key
			for _, gpu := range gpus {
				env, err := ec.Env(b, gpu)
				if err != nil || done[env] {
					continue
				}
				done[env] = true
				if k, err := ec.Hasher.Key(r.soft, b, env); err == nil {
					ec.inRun.planRebuild(i, k)
				}
			}
		}
	}()
	return planned
}

// cacheKey is a build's key and what it was made from, once known.
type cacheKey struct {
	key     cache.Key
	env     cache.Env
	claimed bool // this build builds the key for the run (sameKey)
	// refused: the shared store's entry for the key was refused
	// (poisoned); in read-write mode the engine built instead replaces it.
	refused bool
}

// cacheable reports whether b's files can be cached: a build without
// run: that keeps an engine (a stand-in, --backend sim, keeps none), or a
// build with run: that declares its inputs.
func cacheable(b matrix.Build) bool {
	if b.Script != nil {
		return b.Script.Cached()
	}
	return b.Engine != ""
}

// decls are the files the build declares, as its cache entry holds them.
func (w *watch) decls() []cache.Decl {
	if w.spec.Script != nil {
		return cache.ScriptDecls(w.spec.Script)
	}
	return cache.EngineDecl(w.spec.Engine, "")
}

// lookup asks the engine cache for the build's files. It returns the
// build's report entry when the build is over (a hit, or a stop that came
// while the key was computed), nil when the worker (or the command) must
// run.
func (w *watch) lookup() *report.Build {
	ec := w.r.opts.Cache
	switch {
	case ec == nil:
		return nil
	case w.spec.Script != nil && !w.spec.Script.Cached():
		w.res.Cache = &report.CacheUse{KeyUnknown: cache.ErrNoInputs.Error()}
		return nil
	case !cacheable(w.spec):
		return nil
	}
	ec.inRun.start(w.index) // a build --rebuild names: builds of its key may wait for it from now on
	env, err := ec.Env(w.spec, w.gpu)
	var key cache.Key
	if err == nil {
		ctx, cancel := w.hashContext()
		if err = waitFor(ctx, w.r.rebuildsPlanned); err == nil { // the keys --rebuild is for come first
			key, err = ec.Hasher.Key(ctx, w.spec, env)
		}
		cancel()
		if ended := w.stoppedWhile(ctx, err, whileHashing); ended != nil {
			return ended
		}
	}
	if err != nil {
		// The cache saves time; it is never why a build fails. The
		// build's own run says what is wrong with its model.
		w.res.Cache = &report.CacheUse{KeyUnknown: err.Error()}
		return nil
	}
	w.key = &cacheKey{key: key, env: env}
	w.res.Cache = &report.CacheUse{Key: string(key)}
	if w.r.soft.Err() != nil { // a signal came while the model was hashed
		return w.finish(report.StatusCancelled, fmt.Sprintf("not started: %v", context.Cause(w.r.soft)), outcome{})
	}
	for {
		do, ended := ec.inRun.claim(key, w.index)
		if do != wait {
			w.key.claimed = true
			// A build --rebuild names, or one of its key that cannot
			// wait for it: built without asking the cache, its engine
			// replaces the entry.
			w.res.Cache.Rebuilt = do == rebuild
			break
		}
		// Another build of this run builds this key, or the rebuild of
		// it has not said its key yet: wait (not on the runner's loop),
		// then decide again.
		select {
		case <-ended:
		case <-w.r.admit.Done():
		}
		if why := w.r.startRefused(); why != nil { // a signal or the run budget: like a build not started
			return w.finish(report.StatusCancelled, fmt.Sprintf("not started: %v", why), outcome{})
		}
		w.startClock() // the wait is not the build's: its time and budgets start now
	}
	if w.res.Cache.Rebuilt {
		return nil // built without asking the cache; store replaces the entry
	}
	entry, hit, err := ec.Cache.FetchFiles(key, w.decls())
	var corrupt *cache.CorruptError
	switch {
	case errors.As(err, &corrupt):
		w.warn(report.CacheWarningPrefix + err.Error())
	case err != nil:
		w.warn(report.CacheWarningPrefix + fmt.Sprintf("the engine could not be taken from it (%v); the build runs", err))
		return nil // the engine path cannot take an engine: a pull would fail as this did
	case hit:
		w.releaseKey()
		b := w.cached(entry)
		b.Cache.From = report.CacheFromLocal
		if w.r.shared != nil {
			w.push = &pushJob{key: key, offer: true} // seeds the store with what this runner has
		}
		return b
	}
	return w.pull()
}

// waitFor waits for ch to close, or for ctx to end (its error).
func waitFor(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil // closed already: whatever ctx says (a hit takes none of the build's budget)
	default:
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pull asks the shared store for the engine the folder lacks: a hit is
// delivered (and kept in the folder, where it can be) and ends the build
// cached from the remote; nil when the worker must run. A pull is part of
// the build as reading its inputs for the key is (hashContext): its
// budgets bound it and a signal stops it, and the build then ends
// (stoppedWhile). A store that stalls is abandoned by the store itself
// (remote.Options.Stall): the store is switched off and the build runs.
func (w *watch) pull() *report.Build {
	t := w.r.shared
	if t == nil || !t.shouldPull(w.key.key) {
		return nil
	}
	ec := w.r.opts.Cache
	ctx, cancel := w.hashContext()
	pullCtx, stopPull := t.pullContext(ctx)
	progress, started := transferProgress(w.emit, report.TransferPull)
	p, hit, err := ec.Cache.PullFiles(pullCtx, t.store, w.key.key, w.decls(), progress)
	stopPull()
	cancel()
	if started() || hit {
		end := &event.Transfer{Direction: report.TransferPull, Bytes: p.Bytes, Total: p.Entry.Bytes(), Elapsed: p.Elapsed, Ended: true}
		if err != nil {
			end.Err = err.Error()
		}
		w.emit(event.Event{Kind: event.CacheTransfer, Transfer: end})
	}
	if ended := w.stoppedWhile(ctx, err, whilePulling); ended != nil {
		return ended
	}
	var refused *cache.RefusedError
	var failed *cache.StoreError
	switch {
	case errors.As(err, &refused):
		w.key.refused = true
		then := "the build runs"
		if t.mode == remote.ReadWrite {
			then += ", and its engine replaces the store's entry"
		}
		w.warn(report.CacheWarningPrefix + fmt.Sprintf("the shared store's entry for this build's key was refused (%s): %s", refused.Reason, then))
	case errors.As(err, &failed):
		t.fail(err)
	case errors.Is(err, errSwitchedOff): // another build's failure: the run's warning says it
	case err != nil:
		w.warn(report.CacheWarningPrefix + fmt.Sprintf("the engine could not be taken from the shared store (%v); the build runs", err))
	case !hit:
		t.note(w.key.key, missing)
	default:
		t.note(w.key.key, present)
		w.noteStored(p.Stored, p.NotKept)
		w.releaseKey()
		b := w.cached(p.Entry)
		b.Cache.From = report.CacheFromRemote
		b.Cache.Transfer = &report.CacheTransfer{Direction: report.TransferPull, Bytes: p.Bytes, Ms: p.Elapsed.Milliseconds()}
		return b
	}
	return nil
}

// hashBudget is why a key's computation was stopped by a budget: the
// build's own or the run's, as it would stop the build.
type hashBudget struct{ hit report.BudgetHit }

func (h hashBudget) Error() string { return describeHit(&h.hit) }

// hashContext bounds the key's computation (it reads the model, which can
// be gigabytes) as the build it is part of is bounded: a signal (the run's
// soft stop) ends it, and so does the build's budget or the run's, both
// counted from the build's start, as they are for the worker.
func (w *watch) hashContext() (context.Context, context.CancelFunc) {
	l, ok := w.budget.nearestFromStart()
	if !ok {
		return context.WithCancel(w.r.soft)
	}
	over := hashBudget{report.BudgetHit{Kind: l.kind, LimitMs: l.limit.Milliseconds()}}
	return context.WithDeadlineCause(w.r.soft, w.started.Add(l.deadline), over)
}

// What a build was doing before its worker when a budget or a signal
// stopped it (stoppedWhile).
const (
	whileHashing = "while its inputs were read for the engine cache key"
	whilePulling = "while its engine was pulled from the shared store"
)

// stoppedWhile ends the build when what it did before its worker (while:
// computing its key, pulling its engine) was stopped: by its budget
// (budget-exceeded, as a worker stopped by it would be) or by a signal
// (cancelled, as a build not started). nil when it was not stopped.
func (w *watch) stoppedWhile(ctx context.Context, err error, while string) *report.Build {
	if err == nil || ctx.Err() == nil {
		return nil
	}
	var over hashBudget
	if errors.As(context.Cause(ctx), &over) {
		over.hit.ElapsedMs = w.now().Milliseconds()
		w.hit = &over.hit
		return w.finish(report.StatusBudgetExceeded, describeHit(w.hit)+", "+while+"; no worker started", outcome{})
	}
	if w.r.soft.Err() != nil {
		return w.finish(report.StatusCancelled, fmt.Sprintf("not started: %v (%s)", context.Cause(w.r.soft), while), outcome{})
	}
	return nil
}

// releaseKey lets builds of this run waiting for the build's key go on;
// a --rebuild build that ended before it knew its key says so.
func (w *watch) releaseKey() {
	ec := w.r.opts.Cache
	if ec == nil {
		return
	}
	ec.inRun.settle(w.index, "") // nothing when it settled with its key, or --rebuild does not name it
	if w.key != nil && w.key.claimed {
		w.key.claimed = false
		ec.inRun.release(w.key.key)
	}
}

// cached is the report entry of a hit: the files are in place (a build
// with run:'s engines and outputs, where it declares them), and the entry
// keeps the key, when and how long the original build took, and its
// report entry (phase tree). Its own time is the lookup's.
func (w *watch) cached(e cache.Entry) *report.Build {
	b := &w.res
	b.Status = report.StatusCached
	b.DurationMs = w.now().Milliseconds()
	if w.spec.Script != nil {
		for i, d := range w.decls() {
			f := report.Engine{Path: d.Local, Bytes: e.Files[i].Size, SHA256: e.Files[i].SHA256}
			if d.Role == cache.RoleEngine {
				b.Engines = append(b.Engines, f)
			} else {
				b.Outputs = append(b.Outputs, f)
			}
		}
	} else {
		b.Engine = &report.Engine{Path: w.spec.Engine, Bytes: e.Engine().Size, SHA256: e.Engine().SHA256}
	}
	c := b.Cache
	c.Hit, c.BuiltAt, c.BuildMs, c.Original = true, e.BuiltAt.UTC(), e.Duration.Milliseconds(), e.Original
	if e.Original != nil {
		b.Library = e.Original.Library // "TensorRT-RTX 1.7.1", as the build that made it said
	}
	return b
}

// store puts an ok build's files in the cache; a --rebuild build's
// replace the entry there. Whatever goes wrong is a warning: the build
// stays ok. A read-only cache stores nothing, and the CLI said so once for
// the run. A build with run: is stored only whole: every engine and output
// it declares written during this run, else its cache says why not. The
// report says what happened: stored (and replaced), or neither when
// another process had stored the key first. With a shared store, an entry
// the folder has then is to be pushed (w.push).
func (w *watch) store() {
	ec := w.r.opts.Cache
	if ec == nil || w.key == nil || w.res.Status != report.StatusOK {
		return
	}
	decls, whole := w.written()
	if decls == nil {
		return
	}
	if whole != "" {
		w.res.Cache.NotStored = whole
		w.warn(report.CacheWarningPrefix + "not stored: " + whole)
		return
	}
	put := ec.Cache.StoreFiles
	if w.res.Cache.Rebuilt {
		put = ec.Cache.ReplaceFiles
	}
	done, err := put(w.key.key, decls, cache.Entry{
		Build: w.spec.Name, Backend: w.spec.Backend, Library: w.key.env.Library, Target: w.key.env.Target,
		BuiltAt: time.Now().UTC(), Duration: time.Duration(w.res.DurationMs) * time.Millisecond,
		Original: original(&w.res),
	})
	if !w.noteStored(done, err) {
		return
	}
	w.res.Cache.Stored = done.Outcome != cache.Kept
	w.res.Cache.Replaced = done.Outcome == cache.Replaced
	if w.res.Cache.Stored {
		ec.inRun.stored(w.key.key) // the run's builds of a key --rebuild is for may take it now
	}
	if w.r.shared != nil {
		// What was built for the key is pushed, replacing the store's
		// entry for a --rebuild (whose report then says rebuilt and
		// pushed: the store's entry is this engine now) and for an entry
		// the store served that was refused.
		w.push = &pushJob{key: w.key.key, replace: w.res.Cache.Rebuilt || w.key.refused}
	}
}

// written is what an ok build stores: the files it declares, each with
// the SHA-256 the build found it to hold (a file that changed since is not
// stored); nil when it kept none. whole says why a build with run: is not
// stored whole, "" when it is: each file it declares written during this
// run (its engines are, or it would not be ok; its outputs say, w.unwritten).
func (w *watch) written() (decls []cache.Decl, whole string) {
	if w.spec.Script == nil {
		if w.res.Engine == nil {
			return nil, ""
		}
		return cache.EngineDecl(w.spec.Engine, w.res.Engine.SHA256), ""
	}
	if w.unwritten != "" {
		return []cache.Decl{}, w.unwritten
	}
	decls = w.decls()
	kept := append(slices.Clone(w.res.Engines), w.res.Outputs...)
	if len(kept) != len(decls) {
		return []cache.Decl{}, "not every file it declares was written during this run"
	}
	for i := range decls {
		decls[i].SHA256 = kept[i].SHA256
	}
	return decls, ""
}

// noteStored warns of what a store in the folder (a build's, or a pull's
// backfill) says went wrong, and reports whether the folder has the entry
// (the store succeeded, or another process stored it first). A read-only
// folder is no warning: the CLI said so once for the run.
func (w *watch) noteStored(done cache.Stored, err error) bool {
	ec := w.r.opts.Cache
	for _, n := range ec.Cache.Notices() {
		w.warn(report.CacheWarningPrefix + n)
	}
	kept := true
	switch {
	case errors.Is(err, cache.ErrReadOnly):
		kept = false
	case err != nil && done.Outcome == cache.Kept:
		w.warn(report.CacheWarningPrefix + "the engine was not stored: " + err.Error())
		kept = false
	case err != nil: // stored, but the eviction after it failed
		w.warn(report.CacheWarningPrefix + err.Error())
	}
	if done.EvictedOwn > 0 {
		// One warning per store that evicted: each counts what its own
		// store did and the run's total so far, so the last one gives the
		// whole run (a single warning at the first eviction undercounted).
		w.warn(report.CacheWarningPrefix + fmt.Sprintf("max-size %s is too small for this run's engines: storing this one evicted %s stored in this run (%d so far), built again next run; raise max-size",
			text.Bytes(ec.Cache.MaxSize()), text.Count(done.EvictedOwn, "engine"), ec.Cache.EvictedStored()))
	}
	return kept
}

// original is what a cache entry keeps of the build that made its
// engine: its outcome and phases, without what only this run means (its
// start in this run, its log, every phase instance, its cache use).
func original(b *report.Build) *report.Build {
	o := *b
	o.StartMs, o.Log, o.Phases, o.Cache, o.Warnings = 0, nil, nil, nil, nil
	return &o
}

// warn records a warning in the build's report entry and shows it.
func (w *watch) warn(msg string) {
	w.res.Warnings = append(w.res.Warnings, msg)
	w.emit(event.Event{Kind: event.Warning, Message: msg})
}
