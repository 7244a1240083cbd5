package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// The engine cache's shared store in runs of simulated builds, against
// real servers the tests start on 127.0.0.1 (remotetest).

// store is a shared store with the server the test started
// (remotetest.Store), for the runs of a test.
type store struct{ *remotetest.Store }

func ociServer(t *testing.T) *store {
	return &store{remotetest.StartOCIStore(t, remotetest.RegistryOptions{})}
}

func s3Server(t *testing.T) *store {
	return &store{remotetest.StartS3Store(t, remotetest.S3Options{})}
}

// open opens the store at url (st.URL when ""); stall is its
// remote.Options.Stall (0: the default).
func (st *store) open(t *testing.T, url string, stall time.Duration) remote.Store {
	t.Helper()
	if url == "" {
		url = st.URL
	}
	s, err := remote.Open(context.Background(), url, remote.Options{Getenv: st.Env.Getenv, Stall: stall})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sharedCache is an engine cache in dir with the shared store s.
func sharedCache(t *testing.T, dir string, s remote.Store, mode remote.Mode, rebuild ...string) *EngineCache {
	ec := engineCache(t, dir, rebuild...)
	ec.Remote, ec.RemoteMode = s, mode
	return ec
}

// sizedBuilds are n simulated builds, each of its own key, with engines
// of size bytes.
func sizedBuilds(dir string, n int, size int64) []matrix.Build {
	var builds []matrix.Build
	for i := range n {
		builds = append(builds, simBuild(dir, fmt.Sprintf("b%02d", i), func(b *matrix.Build) {
			b.Sim.Threads, b.Sim.EngineSize = i+1, size
		}))
	}
	return builds
}

// sharedRun is a run's report and what its views were told.
type sharedRun struct {
	rep         *report.Report
	builds      map[string]report.Build
	runWarnings []string // event.Warning of the run (Build -1)
	warnings    []string // every other event.Warning
	ended       map[string]int
	took        time.Duration
	cause       error
}

// runShared runs builds with ec; onEvent (when not nil) sees every event
// as the views do.
func runShared(t *testing.T, builds []matrix.Build, ec *EngineCache, signals <-chan os.Signal, onEvent func(event.Event)) *sharedRun {
	t.Helper()
	opts := testOptions(t)
	opts.Cache = ec
	out := &sharedRun{ended: map[string]int{}}
	opts.OnEvent = func(ev event.Event) {
		switch {
		case ev.Kind == event.Warning && ev.Build < 0:
			out.runWarnings = append(out.runWarnings, ev.Message)
		case ev.Kind == event.Warning:
			out.warnings = append(out.warnings, ev.Message)
		case ev.Kind == event.CacheTransfer && ev.Transfer.Ended:
			out.ended[ev.Transfer.Direction]++
		}
		if onEvent != nil {
			onEvent(ev)
		}
	}
	start := time.Now()
	out.rep, out.cause = Run(builds, opts, signals)
	out.took = time.Since(start)
	out.builds = byName(reporttest.ReadBack(t, out.rep)) // as the written report has them
	return out
}

// count is how many builds of the run satisfy f.
func (r *sharedRun) count(f func(b report.Build) bool) int {
	n := 0
	for _, b := range r.builds {
		if f(b) {
			n++
		}
	}
	return n
}

func (r *sharedRun) statuses() map[string]string {
	m := map[string]string{}
	for name, b := range r.builds {
		m[name] = b.Status
	}
	return m
}

// assertNoPartialsIn checks that no partial engine is in dir and that the
// cache folder's staging is empty.
func assertNoPartialsIn(t *testing.T, dir, cacheDir string) {
	t.Helper()
	assertNoPartials(t, dir)
	if staged, _ := os.ReadDir(filepath.Join(cacheDir, cacheVersion, "tmp")); len(staged) != 0 {
		t.Errorf("the cache folder's staging holds %d leftovers", len(staged))
	}
}

// A 20-build matrix on two runners (two cache folders, one store): the
// first builds and pushes every engine, the second builds nothing and
// gets every engine, byte for byte, from the store, keeping each in its
// folder; its next run is all local hits and pushes nothing.
func TestSecondRunnerBuildsNothing(t *testing.T) {
	for _, kind := range remotetest.StoreKinds {
		t.Run(kind, func(t *testing.T) {
			st := &store{remotetest.StartStore(t, kind)}
			s := st.open(t, "", 0)
			dirA, dirB := t.TempDir(), t.TempDir()
			first := runShared(t, sizedBuilds(dirA, 20, 256<<10), sharedCache(t, t.TempDir(), s, remote.ReadWrite), nil, nil)
			if n := first.count(func(b report.Build) bool {
				return b.Status == report.StatusOK && b.Cache.Stored && b.Cache.Pushed &&
					b.Cache.Transfer != nil && b.Cache.Transfer.Direction == report.TransferPush && b.Cache.Transfer.Bytes == 256<<10
			}); n != 20 {
				t.Fatalf("first runner: %d of 20 builds ok, stored and pushed: %v", n, first.builds["b00"].Cache)
			}
			if first.ended[report.TransferPush] != 20 || first.rep.Cache == nil || first.rep.Cache.Remote != s.Location() || first.rep.Cache.RemoteMode != "read-write" {
				t.Errorf("first runner: %d pushes ended in the views, run cache %+v", first.ended[report.TransferPush], first.rep.Cache)
			}

			cacheB := t.TempDir()
			second := runShared(t, sizedBuilds(dirB, 20, 256<<10), sharedCache(t, cacheB, s, remote.ReadWrite), nil, nil)
			for name, b := range second.builds {
				if b.Status != report.StatusCached || b.Callbacks != 0 || b.Cache.From != report.CacheFromRemote || b.Cache.Pushed ||
					b.Cache.Transfer == nil || b.Cache.Transfer.Direction != report.TransferPull || b.Cache.Transfer.Bytes != 256<<10 {
					t.Fatalf("second runner, %s: %s, %d callbacks, cache %+v; want a remote hit", name, b.Status, b.Callbacks, b.Cache)
				}
				theirs, _ := os.ReadFile(first.builds[name].Engine.Path)
				if mine, _ := os.ReadFile(b.Engine.Path); !bytes.Equal(mine, theirs) {
					t.Errorf("%s: the pulled engine differs from the one built", name)
				}
				checkSimEngine(t, name, b.Engine)
			}
			if len(second.warnings)+len(second.runWarnings) > 0 || second.ended[report.TransferPull] != 20 {
				t.Errorf("second runner: warnings %q %q, %d pulls ended", second.runWarnings, second.warnings, second.ended[report.TransferPull])
			}
			assertNoPartialsIn(t, dirB, cacheB)

			third := runShared(t, sizedBuilds(dirB, 20, 256<<10), sharedCache(t, cacheB, s, remote.ReadWrite), nil, nil)
			if n := third.count(func(b report.Build) bool {
				return b.Status == report.StatusCached && b.Cache.From == report.CacheFromLocal && !b.Cache.Pushed && b.Cache.Transfer == nil
			}); n != 20 || len(third.ended) != 0 {
				t.Errorf("third run: %d of 20 local hits, transfers %v", n, third.ended)
			}
		})
	}
}

// A runner whose folder has entries the store lacks seeds it: each local
// hit is pushed (after one existence check).
func TestLocalHitsSeedTheStore(t *testing.T) {
	dir, cacheDir := t.TempDir(), t.TempDir()
	builds := sizedBuilds(dir, 3, 64<<10)
	cachedRun(t, builds, engineCache(t, cacheDir)) // no store yet
	st := ociServer(t)
	s := st.open(t, "", 0)
	r := runShared(t, builds, sharedCache(t, cacheDir, s, remote.ReadWrite), nil, nil)
	if n := r.count(func(b report.Build) bool {
		return b.Status == report.StatusCached && b.Cache.From == report.CacheFromLocal && b.Cache.Pushed
	}); n != 3 {
		t.Fatalf("%d of 3 local hits pushed: %v", n, r.statuses())
	}
	for _, b := range r.builds {
		if has, err := s.Has(context.Background(), b.Cache.Key); !has || err != nil {
			t.Errorf("%s: the store lacks its key (%v)", b.Name, err)
		}
	}
}

// Read-only: a miss in both tiers builds, and nothing is pushed.
func TestReadOnlyPushesNothing(t *testing.T) {
	st := ociServer(t)
	s := st.open(t, "", 0)
	r := runShared(t, sizedBuilds(t.TempDir(), 2, 64<<10), sharedCache(t, t.TempDir(), s, remote.ReadOnly), nil, nil)
	for _, b := range r.builds {
		if b.Status != report.StatusOK || b.Cache.Pushed {
			t.Errorf("%s: %s, cache %+v; want ok, not pushed", b.Name, b.Status, b.Cache)
		}
		if has, err := s.Has(context.Background(), b.Cache.Key); has || err != nil {
			t.Errorf("%s: a read-only run pushed its engine (%v)", b.Name, err)
		}
	}
	if r.rep.Cache.RemoteMode != string(remote.ReadOnly) {
		t.Errorf("report's remote mode %q", r.rep.Cache.RemoteMode)
	}
}

// seeded is a store holding the entries of builds, built and pushed by
// another runner (its own folder).
func seeded(t *testing.T, s remote.Store, builds []matrix.Build) *sharedRun {
	t.Helper()
	r := runShared(t, builds, sharedCache(t, t.TempDir(), s, remote.ReadWrite), nil, nil)
	if n := r.count(func(b report.Build) bool { return b.Cache.Pushed }); n != len(builds) {
		t.Fatalf("seeding: %d of %d builds pushed: %v", n, len(builds), r.statuses())
	}
	return r
}

// once runs f the first time when says so.
func once(when func(event.Event) bool, f func()) func(event.Event) {
	var o sync.Once
	return func(ev event.Event) {
		if when(ev) {
			o.Do(f)
		}
	}
}

// moving is whether ev is a transfer of direction that has moved bytes.
func moving(direction string) func(event.Event) bool {
	return func(ev event.Event) bool {
		return ev.Kind == event.CacheTransfer && ev.Transfer.Direction == direction && ev.Transfer.Bytes > 0 && !ev.Transfer.Ended
	}
}

// assertStoreOff checks that the run told one warning of the store, naming
// it and what, in the views and in the report, and that every build still
// got its engine: built, as none was pulled.
func assertStoreOff(t *testing.T, r *sharedRun, s remote.Store, what string) {
	t.Helper()
	if len(r.runWarnings) != 1 || !strings.Contains(r.runWarnings[0], s.Location()) || !strings.Contains(r.runWarnings[0], what) {
		t.Errorf("run warnings %q; want one naming %s and %q", r.runWarnings, s.Location(), what)
	}
	if r.rep.Cache == nil || len(r.rep.Cache.Warnings) != 1 || report.CacheWarningPrefix+r.rep.Cache.Warnings[0] != r.runWarnings[0] {
		t.Errorf("the report's store warnings %+v; want the one shown", r.rep.Cache)
	}
	if len(r.warnings) != 0 {
		t.Errorf("build warnings %q; want the run's one alone", r.warnings)
	}
	for name, b := range r.builds {
		if b.Status != report.StatusOK || b.Callbacks == 0 || b.Cache.Pushed {
			t.Errorf("%s: %s (%s), %d callbacks, cache %+v; want built", name, b.Status, b.Reason, b.Callbacks, b.Cache)
		}
		checkSimEngine(t, name, b.Engine)
	}
	if r.cause != nil {
		t.Errorf("the run ended with %v", r.cause)
	}
}

// A store that is down when the run starts costs one warning; the builds
// run and the run is ok.
func TestStoreDownAtStart(t *testing.T) {
	st := ociServer(t)
	st.Kill(t)
	s := st.open(t, "", 0)
	dir, cacheDir := t.TempDir(), t.TempDir()
	r := runShared(t, sizedBuilds(dir, 4, 64<<10), sharedCache(t, cacheDir, s, remote.ReadWrite), nil, nil)
	assertStoreOff(t, r, s, "looking up an engine")
	if n := r.count(func(b report.Build) bool { return b.Cache.Stored }); n != 4 {
		t.Errorf("%d of 4 builds stored in the folder", n)
	}
	t.Logf("%s: %s", r.took, r.runWarnings)
}

// Credentials the registry refuses: one warning, which never holds the
// password; the builds run.
func TestWrongCredentials(t *testing.T) {
	r := remotetest.StartRegistry(t, remotetest.RegistryOptions{Auth: true})
	wrong := "not-" + r.Password
	env := r.Env().With("DOCKER_CONFIG", remotetest.DockerConfig(t, r.Host, r.User, wrong))
	s, err := remote.Open(context.Background(), r.URL("trt/engines"), remote.Options{Getenv: env.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	run := runShared(t, sizedBuilds(t.TempDir(), 2, 64<<10), sharedCache(t, t.TempDir(), s, remote.ReadWrite), nil, nil)
	assertStoreOff(t, run, s, "credentials")
	if strings.Contains(run.runWarnings[0], wrong) || strings.Contains(run.runWarnings[0], r.Password) {
		t.Errorf("the warning shows a password: %s", run.runWarnings[0])
	}
}

// Faults between the runner and the store while it pulls: every one costs
// the builds the store, never their result, with one warning; a stalled
// transfer is abandoned after the store's stall limit.
func TestStoreFaultsDuringAPull(t *testing.T) {
	const size = 24 << 20
	faults := map[string]struct {
		set   func(p *remotetest.Proxy)
		when  func(event.Event) bool // set the fault then; nil: before the run
		stall time.Duration          // the store's stall limit; 0: the default
		what  string
	}{
		"resets":       {set: func(p *remotetest.Proxy) { p.ResetNext(-1) }, what: "looking up an engine"},
		"503s":         {set: func(p *remotetest.Proxy) { p.Fail(-1, 503) }, what: "503"},
		"a stall":      {set: func(p *remotetest.Proxy) { p.Stall() }, when: moving(report.TransferPull), stall: 500 * time.Millisecond, what: "no bytes moved for 500ms"},
		"a body cut":   {set: func(p *remotetest.Proxy) { p.CutAfter(1 << 20) }, when: moving(report.TransferPull), what: "pulling an engine"},
		"reset midway": {set: func(p *remotetest.Proxy) { p.ResetAll() }, when: moving(report.TransferPull), what: "pulling an engine"},
	}
	st := ociServer(t)
	builds := func(dir string) []matrix.Build { return sizedBuilds(dir, 1, size) }
	seeded(t, st.open(t, "", 0), builds(t.TempDir()))
	for name, f := range faults {
		t.Run(name, func(t *testing.T) {
			proxy := remotetest.StartProxy(t, st.Target)
			proxy.Throttle(8 << 20)
			s := st.open(t, st.Via(proxy.Addr), f.stall)
			var onEvent func(event.Event)
			if f.when == nil {
				f.set(proxy)
			} else {
				onEvent = once(f.when, func() { f.set(proxy) })
			}
			dir, cacheDir := t.TempDir(), t.TempDir()
			r := runShared(t, builds(dir), sharedCache(t, cacheDir, s, remote.ReadWrite), nil, onEvent)
			assertStoreOff(t, r, s, f.what)
			assertNoPartialsIn(t, dir, cacheDir)
			t.Logf("%s: %s", r.took, r.runWarnings)
		})
	}
}

// A registry killed while a build's engine is pulled, or while one is
// pushed: one warning; the build runs (or stays ok), and nothing partial
// is left.
func TestStoreKilledMidTransfer(t *testing.T) {
	const size = 24 << 20
	t.Run("pull", func(t *testing.T) {
		st := ociServer(t)
		seeded(t, st.open(t, "", 0), sizedBuilds(t.TempDir(), 1, size))
		proxy := remotetest.StartProxy(t, st.Target)
		proxy.Throttle(4 << 20)
		s := st.open(t, st.Via(proxy.Addr), 0)
		dir, cacheDir := t.TempDir(), t.TempDir()
		r := runShared(t, sizedBuilds(dir, 1, size), sharedCache(t, cacheDir, s, remote.ReadWrite), nil,
			once(moving(report.TransferPull), func() { st.Kill(t) }))
		assertStoreOff(t, r, s, "pulling an engine")
		assertNoPartialsIn(t, dir, cacheDir)
	})
	t.Run("push", func(t *testing.T) {
		st := ociServer(t)
		proxy := remotetest.StartProxy(t, st.Target)
		proxy.Throttle(4 << 20)
		s := st.open(t, st.Via(proxy.Addr), 0)
		dir, cacheDir := t.TempDir(), t.TempDir()
		r := runShared(t, sizedBuilds(dir, 1, size), sharedCache(t, cacheDir, s, remote.ReadWrite), nil,
			once(moving(report.TransferPush), func() { st.Kill(t) }))
		assertStoreOff(t, r, s, "pushing an engine")
		if b := r.builds["b00"]; !b.Cache.Stored {
			t.Errorf("the build was not stored in the folder: %+v", b.Cache)
		}
	})
}

// Two runners pushing one key at once: no error, one entry stays, whole,
// and exactly one runner reports pushed (S3's conditional write; on a
// registry, which has no conditional tag, the tag resolved again once the
// race has settled).
func TestTwoRunnersPushOneKeyAtOnce(t *testing.T) {
	for _, kind := range remotetest.StoreKinds {
		t.Run(kind, func(t *testing.T) {
			st := &store{remotetest.StartStore(t, kind)}
			runs := make([]*sharedRun, 2)
			var wg sync.WaitGroup
			for i := range runs {
				s := st.open(t, "", 0)
				ec := sharedCache(t, t.TempDir(), s, remote.ReadWrite)
				builds := sizedBuilds(t.TempDir(), 1, 8<<20)
				wg.Go(func() { runs[i] = runShared(t, builds, ec, nil, nil) })
			}
			wg.Wait()
			pushed := 0
			for i, r := range runs {
				b := r.builds["b00"]
				if b.Status != report.StatusOK && b.Status != report.StatusCached || len(r.warnings)+len(r.runWarnings) > 0 {
					t.Fatalf("runner %d: %s (%s), warnings %q %q", i, b.Status, b.Reason, r.warnings, r.runWarnings)
				}
				if b.Cache.Pushed {
					pushed++
				}
			}
			if pushed != 1 {
				t.Errorf("%d runners pushed; want one", pushed)
			}
			third := runShared(t, sizedBuilds(t.TempDir(), 1, 8<<20), sharedCache(t, t.TempDir(), st.open(t, "", 0), remote.ReadWrite), nil, nil)
			if b := third.builds["b00"]; b.Status != report.StatusCached || b.Cache.From != report.CacheFromRemote {
				t.Errorf("a third runner: %s, cache %+v; want the entry that stayed", b.Status, b.Cache)
			}
		})
	}
}

// SIGINT while a build's engine is pulled: the run exits within 2 s (the
// budget docs/budgets.md gives an interrupted run) with a valid report
// that says what the build was doing, and leaves nothing partial at the
// engine path or in the folder.
func TestSignalDuringAPull(t *testing.T) {
	signalDuringAPull(t, 32<<20, 16<<20)
}

// The same with a 1 GiB engine.
func TestSignalDuringAPullOfAGibibyte(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1 GiB engine is built, stored and pushed first")
	}
	signalDuringAPull(t, 1<<30, 64<<20)
}

func signalDuringAPull(t *testing.T, size, rate int64) {
	st := ociServer(t)
	seeded(t, st.open(t, "", 0), sizedBuilds(t.TempDir(), 1, size))
	proxy := remotetest.StartProxy(t, st.Target)
	proxy.Throttle(rate)
	s := st.open(t, st.Via(proxy.Addr), 0)
	signals := make(chan os.Signal, 1)
	var sent time.Time
	dir, cacheDir := t.TempDir(), t.TempDir()
	r := runShared(t, sizedBuilds(dir, 1, size), sharedCache(t, cacheDir, s, remote.ReadWrite), signals,
		once(moving(report.TransferPull), func() {
			sent = time.Now()
			signals <- os.Interrupt
		}))
	if sent.IsZero() {
		t.Fatal("no pull was seen to move bytes")
	}
	if took := time.Since(sent); took > 2*time.Second {
		t.Errorf("the run ended %s after SIGINT; the limit is 2s", took)
	}
	b := r.builds["b00"]
	if _, ok := r.cause.(Interrupted); !ok || b.Status != report.StatusCancelled || b.Callbacks != 0 ||
		!strings.Contains(b.Reason, "interrupted by SIGINT (while its engine was pulled from the shared store)") {
		t.Errorf("run %v; build %s (%s), %d callbacks", r.cause, b.Status, b.Reason, b.Callbacks)
	}
	if _, err := os.Stat(filepath.Join(dir, "b00.engine")); !os.IsNotExist(err) {
		t.Errorf("an engine is at the engine path after a pull was interrupted (%v)", err)
	}
	assertNoPartialsIn(t, dir, cacheDir)
	if entries, _ := filepath.Glob(filepath.Join(cacheDir, cacheVersion, "??", "*")); len(entries) != 0 {
		t.Errorf("the folder has entries after an interrupted pull: %v", entries)
	}
	if r.rep.Interrupted == "" || !r.rep.Complete && r.rep.Signal != report.SignalInterrupt {
		t.Errorf("the report does not record the signal: %+v", r.rep)
	}
}

// An entry the store serves that is refused (its bytes changed in the
// server's storage; another key's metadata under its key) is a miss with a
// warning; in read-write mode the engine built instead replaces it, which
// the next runner pulls; in read-only mode the store's entry stays.
func TestRefusedEntryIsReplaced(t *testing.T) {
	poisons := map[string]struct {
		server func(*testing.T) *store
		poison func(t *testing.T, st *store, s remote.Store, first *sharedRun)
	}{
		// The bytes of the engine's blob changed in the store's files, its
		// length kept: the rebuild's engine has the same bytes, so the
		// replacement must not trust what the store has under their digest
		// (a registry keeps the first bytes it stored under a digest).
		"blob bytes changed (oci)": {server: ociServer,
			poison: changeEngineBlob},
		"blob bytes changed (s3)": {server: s3Server, poison: changeEngineBlob},
		"another key's metadata": {server: ociServer,
			poison: func(t *testing.T, _ *store, s remote.Store, first *sharedRun) {
				ctx := context.Background()
				mine, err := s.Get(ctx, first.builds["b00"].Cache.Key)
				if err != nil {
					t.Fatal(err)
				}
				theirs, err := s.Get(ctx, first.builds["b01"].Cache.Key)
				if err != nil {
					t.Fatal(err)
				}
				engine, _ := os.ReadFile(first.builds["b00"].Engine.Path)
				up := remote.Upload{File: mine.Files[0], Body: bytes.NewReader(engine)}
				if _, err := s.Put(ctx, mine.Key, theirs.Meta, []remote.Upload{up}, true); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for name, p := range poisons {
		t.Run(name, func(t *testing.T) {
			st := p.server(t)
			s := st.open(t, "", 0)
			builds := func() []matrix.Build { return sizedBuilds(t.TempDir(), 2, 1<<20) }
			p.poison(t, st, s, seeded(t, s, builds()))
			for _, mode := range []remote.Mode{remote.ReadOnly, remote.ReadWrite} {
				r := runShared(t, builds(), sharedCache(t, t.TempDir(), s, mode), nil, nil)
				b := r.builds["b00"]
				if b.Status != report.StatusOK || b.Callbacks == 0 || len(r.warnings) != 1 || !strings.Contains(r.warnings[0], "the shared store's entry for this build's key was refused") {
					t.Fatalf("%s: %s, %d callbacks, warnings %q; want built, with a warning", mode, b.Status, b.Callbacks, r.warnings)
				}
				if b.Cache.Pushed != (mode == remote.ReadWrite) || len(r.runWarnings) != 0 || r.builds["b01"].Cache.From != report.CacheFromRemote {
					t.Errorf("%s: pushed %v, run warnings %q, b01 %+v", mode, b.Cache.Pushed, r.runWarnings, r.builds["b01"].Cache)
				}
			}
			next := runShared(t, builds(), sharedCache(t, t.TempDir(), s, remote.ReadOnly), nil, nil)
			if b := next.builds["b00"]; b.Status != report.StatusCached || b.Cache.From != report.CacheFromRemote || len(next.warnings) != 0 {
				t.Errorf("after the replacement: %s, cache %+v, warnings %q; want a remote hit", b.Status, b.Cache, next.warnings)
			}
		})
	}
}

// changeEngineBlob changes a byte in the middle of b00's engine as the
// store's files hold it (its one blob: a 1 MiB engine is one layer).
func changeEngineBlob(t *testing.T, st *store, _ remote.Store, first *sharedRun) {
	engine := first.builds["b00"].Engine
	good, err := os.ReadFile(engine.Path)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 0xff
	if err := os.WriteFile(st.BlobFile(t, engine.SHA256), bad, 0o644); err != nil {
		t.Fatal(err)
	}
}

// --rebuild never asks the store; in read-write mode what it builds
// replaces the store's entry (the report says rebuilt and pushed), in
// read-only mode only the folder's.
func TestRebuildReplacesTheStoresEntry(t *testing.T) {
	st := ociServer(t)
	s := st.open(t, "", 0)
	builds := func() []matrix.Build { return sizedBuilds(t.TempDir(), 2, 64<<10) }
	seeded(t, s, builds())
	builtAt := func() time.Time {
		r := runShared(t, builds(), sharedCache(t, t.TempDir(), s, remote.ReadOnly), nil, nil)
		return r.builds["b00"].Cache.BuiltAt
	}
	before := builtAt()
	for _, mode := range []remote.Mode{remote.ReadOnly, remote.ReadWrite} {
		r := runShared(t, builds(), sharedCache(t, t.TempDir(), s, mode, "b00"), nil, nil)
		b, other := r.builds["b00"], r.builds["b01"]
		if b.Status != report.StatusOK || !b.Cache.Rebuilt || b.Callbacks == 0 || b.Cache.Transfer != nil && b.Cache.Transfer.Direction == report.TransferPull {
			t.Fatalf("%s: b00 %s, cache %+v; want rebuilt without a pull", mode, b.Status, b.Cache)
		}
		if b.Cache.Pushed != (mode == remote.ReadWrite) || other.Cache.From != report.CacheFromRemote {
			t.Errorf("%s: b00 pushed %v, b01 %+v", mode, b.Cache.Pushed, other.Cache)
		}
		after := builtAt()
		if replaced := after.After(before); replaced != (mode == remote.ReadWrite) {
			t.Errorf("%s: the store's entry was built at %s, before at %s", mode, after, before)
		}
		before = after
	}
}

// Pushes still running when every build has ended are waited for up to
// the push timeout, then abandoned with a warning each; the run ends ok.
// Pushes that end in time are in the final report.
func TestPushTimeout(t *testing.T) {
	st := ociServer(t)
	proxy := remotetest.StartProxy(t, st.Target)
	proxy.Throttle(1 << 20) // 8 MiB: 8 s
	s := st.open(t, st.Via(proxy.Addr), 0)
	ec := sharedCache(t, t.TempDir(), s, remote.ReadWrite)
	ec.PushTimeout = time.Second
	var lastEnd time.Time
	r := runShared(t, sizedBuilds(t.TempDir(), 1, 8<<20), ec, nil, func(ev event.Event) {
		if ev.Kind == event.BuildFinished {
			lastEnd = time.Now()
		}
	})
	b := r.builds["b00"]
	want := report.CacheWarningPrefix + "not pushed to the shared store: abandoned: still running 1.0s after the last build ended (the push timeout)"
	if b.Status != report.StatusOK || b.Cache.Pushed || !slices.Contains(b.Warnings, want) || !slices.Contains(r.warnings, want) || r.cause != nil {
		t.Fatalf("%s, cache %+v, warnings %q, shown %q, run %v; want ok and the push abandoned", b.Status, b.Cache, b.Warnings, r.warnings, r.cause)
	}
	if waited := time.Since(lastEnd); waited < time.Second || waited > 5*time.Second { // the push alone would take 8 s
		t.Errorf("the run ended %s after its last build; want the push timeout, 1s", waited)
	}
}

// SIGINT abandons the pushes in flight, whether the run still has builds
// running or waits for its pushes: the run exits within 2 s, and each
// build says once why it was not pushed.
func TestSignalDuringAPush(t *testing.T) {
	for _, still := range []bool{false, true} {
		t.Run(fmt.Sprintf("builds running %v", still), func(t *testing.T) {
			st := ociServer(t)
			proxy := remotetest.StartProxy(t, st.Target)
			proxy.Throttle(1 << 20)
			s := st.open(t, st.Via(proxy.Addr), 0)
			dir := t.TempDir()
			builds := sizedBuilds(dir, 1, 8<<20)
			if still {
				builds = append(builds, simBuild(dir, "slow", func(b *matrix.Build) { b.Sim.Step = 10 * time.Millisecond }))
			}
			signals := make(chan os.Signal, 1)
			var sent time.Time
			r := runShared(t, builds, sharedCache(t, t.TempDir(), s, remote.ReadWrite), signals,
				once(moving(report.TransferPush), func() {
					sent = time.Now()
					signals <- os.Interrupt
				}))
			if took := time.Since(sent); sent.IsZero() || took > 2*time.Second {
				t.Errorf("the run ended %s after SIGINT (sent: %v); the limit is 2s", took, !sent.IsZero())
			}
			b := r.builds["b00"]
			want := report.CacheWarningPrefix + "not pushed to the shared store: abandoned: interrupted by SIGINT"
			if b.Status != report.StatusOK || b.Cache.Pushed || !slices.Equal(b.Warnings, []string{want}) || !slices.Equal(r.warnings, []string{want}) {
				t.Errorf("%s, cache %+v, warnings %q, shown %q; want ok, the push abandoned, told once", b.Status, b.Cache, b.Warnings, r.warnings)
			}
			if still && r.builds["slow"].Status != report.StatusCancelled {
				t.Errorf("slow: %s", r.builds["slow"].Status)
			}
		})
	}
}

// gets counts a real store's lookups.
type gets struct {
	remote.Store
	mu sync.Mutex
	n  map[string]int
}

func (g *gets) Get(ctx context.Context, key string) (*remote.Entry, error) {
	g.mu.Lock()
	g.n[key]++
	g.mu.Unlock()
	return g.Store.Get(ctx, key)
}

// Builds of one key in one run ask the store once: the first pulls, the
// others wait for it and hit the folder; a key the store lacks is not asked
// again when its first build failed and the next builds it.
func TestOneLookupPerKey(t *testing.T) {
	st := ociServer(t)
	seeded(t, st.open(t, "", 0), sizedBuilds(t.TempDir(), 1, 1<<20))
	g := &gets{Store: st.open(t, "", 0), n: map[string]int{}}
	dir := t.TempDir()
	builds := sizedBuilds(dir, 1, 1<<20)
	again := builds[0]
	again.Name, again.Engine = "again", filepath.Join(dir, "again.engine")
	missing := simBuild(dir, "missing", func(b *matrix.Build) {
		b.Sim.Threads, b.Sim.EngineSize, b.Sim.Step = 40, 1<<20, 300*time.Microsecond
		b.Budgets.Build = 100 * time.Millisecond // not in the key: this one fails, the next builds it
	})
	retry := missing
	retry.Name, retry.Engine, retry.Budgets.Build = "retry", filepath.Join(dir, "retry.engine"), 0
	r := runShared(t, []matrix.Build{builds[0], again, missing, retry}, sharedCache(t, t.TempDir(), g, remote.ReadOnly), nil, nil)
	got := r.statuses()
	from := []string{r.builds["b00"].Cache.From, r.builds["again"].Cache.From}
	slices.Sort(from) // whichever read its inputs first pulled
	if got["b00"] != report.StatusCached || got["again"] != report.StatusCached || !slices.Equal(from, []string{report.CacheFromLocal, report.CacheFromRemote}) ||
		got["missing"] != report.StatusBudgetExceeded || got["retry"] != report.StatusOK {
		t.Fatalf("statuses %v; b00 and again from %v", got, from)
	}
	for name, b := range r.builds {
		if n := g.n[b.Cache.Key]; n != 1 {
			t.Errorf("%s: its key was looked up %d times, want once", name, n)
		}
	}
}

// A pull counts in its build's budget: a build whose budget runs out while
// its engine is pulled ends budget-exceeded, saying so, with nothing
// partial, and the store stays on.
func TestPullInTheBuildsBudget(t *testing.T) {
	st := ociServer(t)
	seeded(t, st.open(t, "", 0), sizedBuilds(t.TempDir(), 1, 16<<20))
	proxy := remotetest.StartProxy(t, st.Target)
	proxy.Throttle(2 << 20) // 8 s
	s := st.open(t, st.Via(proxy.Addr), 0)
	dir, cacheDir := t.TempDir(), t.TempDir()
	builds := sizedBuilds(dir, 1, 16<<20)
	builds[0].Budgets.Build = 500 * time.Millisecond
	r := runShared(t, builds, sharedCache(t, cacheDir, s, remote.ReadWrite), nil, nil)
	b := r.builds["b00"]
	if b.Status != report.StatusBudgetExceeded || b.Callbacks != 0 || !strings.Contains(b.Reason, "build budget exceeded") ||
		!strings.HasSuffix(b.Reason, "while its engine was pulled from the shared store; no worker started") {
		t.Errorf("%s (%s), %d callbacks; want stopped by its budget while pulling", b.Status, b.Reason, b.Callbacks)
	}
	if len(r.runWarnings) != 0 {
		t.Errorf("run warnings %q: a build's budget is not the store's failure", r.runWarnings)
	}
	assertNoPartialsIn(t, dir, cacheDir)
}
