package build

import (
	"sync"

	"github.com/trt-action/trt-action/internal/cache"
)

// sameKey is the keys this run's builds are building now. Two builds of
// one run can share a key (they differ only in names or budgets); the
// second waits for the first and then takes its engine from the cache,
// rather than building the same engine beside it.
type sameKey struct {
	mu       sync.Mutex
	building map[cache.Key]chan struct{} // closed when that key's build has ended
}

// claim makes the caller the builder of k (mine), or returns the channel
// that closes when the build that is building k ends.
func (s *sameKey) claim(k cache.Key) (ended <-chan struct{}, mine bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.building[k]; ok {
		return ch, false
	}
	if s.building == nil {
		s.building = map[cache.Key]chan struct{}{}
	}
	s.building[k] = make(chan struct{})
	return nil, true
}

// release ends the caller's claim on k, after its engine was stored (or
// could not be): the builds waiting for it look in the cache again.
func (s *sameKey) release(k cache.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.building[k])
	delete(s.building, k)
}
