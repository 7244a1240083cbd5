package build

import (
	"slices"
	"sync"

	"github.com/trt-action/trt-action/internal/cache"
)

// sameKey is the keys this run's builds are building now, and the keys
// --rebuild is for. Two builds of one run can share a key (they differ
// only in names or budgets); the second waits for the first and then takes
// its engine from the cache, rather than building the same engine beside
// it. A key a --rebuild build builds is one whose entry the user called
// bad: no build of the run takes the entry that was there before the run.
// Its rebuild's keys are known before any build asks the cache
// (EngineCache.planRebuilds), whichever build hashes its model first.
type sameKey struct {
	mu       sync.Mutex
	building map[cache.Key]chan struct{} // closed when that key's build has ended
	// rebuilds are the --rebuild builds by each key they may build (a
	// tensorrt build's key depends on the GPU it gets); rebuilders the
	// same by their index in the run.
	rebuilds   map[cache.Key][]*rebuilder
	rebuilders map[int]*rebuilder
	fresh      map[cache.Key]bool // keys whose entry was stored in this run
}

// rebuilder is one build --rebuild names.
type rebuilder struct {
	index   int         // its place in the run: builds start in this order
	keys    []cache.Key // the keys it may build, planned before the run's builds ask the cache
	started bool        // its lookup has begun: it holds its job slot (and GPU) and settles without waiting for another build
	settled chan struct{}
	done    bool // settled: it knows its key (it is in building), or it ended
}

// turn is what a build with a key does now.
type turn int

const (
	ask     turn = iota // the build holds the key's claim: ask the cache, build on a miss
	rebuild             // the build holds the key's claim: build without asking the cache, replace the entry
	wait                // wait for the channel, then claim again
)

// addRebuilder notes that build index is named by --rebuild.
func (s *sameKey) addRebuilder(index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rebuilders == nil {
		s.rebuilders = map[int]*rebuilder{}
	}
	s.rebuilders[index] = &rebuilder{index: index, settled: make(chan struct{})}
}

// planRebuild notes that rebuild build index may build k.
func (s *sameKey) planRebuild(index int, k cache.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rebuilders[index]
	if r == nil || r.done {
		return
	}
	if s.rebuilds == nil {
		s.rebuilds = map[cache.Key][]*rebuilder{}
	}
	r.keys = append(r.keys, k)
	s.rebuilds[k] = append(s.rebuilds[k], r)
}

// start notes that rebuild build index has begun its lookup: from now on
// a build of its key listed before it may wait for it too.
func (s *sameKey) start(index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.rebuilders[index]; r != nil {
		r.started = true
	}
}

// settle notes that rebuild build index knows its key k (it is no longer
// the rebuild of any other key it might have built), or, with k "", that
// it ended before it knew one (the keys planned for it stay keys of
// --rebuild: the next build of one rebuilds it).
func (s *sameKey) settle(index int, k cache.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleLocked(index, k)
}

func (s *sameKey) settleLocked(index int, k cache.Key) {
	r := s.rebuilders[index]
	if r == nil || r.done {
		return
	}
	r.done = true
	close(r.settled)
	if k == "" {
		return
	}
	for _, other := range r.keys {
		if other != k {
			s.rebuilds[other] = slices.DeleteFunc(s.rebuilds[other], func(x *rebuilder) bool { return x == r })
		}
	}
	if !slices.Contains(s.rebuilds[k], r) {
		if s.rebuilds == nil {
			s.rebuilds = map[cache.Key][]*rebuilder{}
		}
		s.rebuilds[k] = append(s.rebuilds[k], r)
	}
}

// claim decides what build index, with key k, does (a build --rebuild
// names has its key settled in the same step, so no build of the key
// finds it neither building nor to be waited for).
// A build of the key runs now: wait for it. A build --rebuild names
// rebuilds. A key --rebuild is for whose entry was not stored in this run
// yet is never asked of the cache: the build waits for its rebuild when
// the rebuild is listed before it (builds start in their order, and a
// build asks for a GPU only after the one before it asked, so the rebuild
// holds its job slot and GPU, or has ended) or has started its lookup
// anyway; either way the wait ends. Otherwise it rebuilds the key itself:
// a rebuild listed later may get no slot until this build ends. Otherwise
// the build asks the cache. A build that does not wait holds the key's
// claim until release.
func (s *sameKey) claim(k cache.Key, index int) (turn, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, named := s.rebuilders[index]
	s.settleLocked(index, k) // nothing unless --rebuild names it
	if ch, ok := s.building[k]; ok {
		return wait, ch
	}
	do := ask
	if named {
		do = rebuild
	} else if !s.fresh[k] && len(s.rebuilds[k]) > 0 {
		for _, r := range s.rebuilds[k] {
			if (r.index < index || r.started) && !r.done {
				return wait, r.settled
			}
		}
		do = rebuild
	}
	if s.building == nil {
		s.building = map[cache.Key]chan struct{}{}
	}
	s.building[k] = make(chan struct{})
	return do, nil
}

// stored notes that k's entry was stored (or replaced) in this run: a
// build of a key --rebuild is for may take it.
func (s *sameKey) stored(k cache.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fresh == nil {
		s.fresh = map[cache.Key]bool{}
	}
	s.fresh[k] = true
}

// release ends the caller's claim on k, after its engine was stored (or
// could not be): the builds waiting for it look in the cache again.
func (s *sameKey) release(k cache.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.building[k])
	delete(s.building, k)
}
