package remote

import (
	"context"
	"sync"
)

// listWorkers is how many entries a listing looks up at once: a store
// answers each in a round trip, so a thousand entries take a thousand
// round trips over this many connections.
const listWorkers = 8

// callerError is an error of a listing's fn, passed back as it is.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }

// lookAll looks names up, listWorkers at a time, and calls use with each
// found (look's ok), one at a time in the calling goroutine, in no set
// order; the watchdog is paused while use runs. The first error stops
// the rest: a look's as it is, a use's as a callerError.
func lookAll[T any](ctx context.Context, w *watchdog, names []string,
	look func(context.Context, string) (T, bool, error), use func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v   T
		ok  bool
		err error
	}
	jobs, results := make(chan string), make(chan result)
	go func() {
		defer close(jobs)
		for _, name := range names {
			select {
			case jobs <- name:
			case <-ctx.Done():
				return
			}
		}
	}()
	var workers sync.WaitGroup
	for range min(listWorkers, len(names)) {
		workers.Go(func() {
			for name := range jobs {
				v, ok, err := look(ctx, name)
				select {
				case results <- result{v, ok, err}:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()
	var first error
	for r := range results {
		if first != nil {
			continue // draining: the workers stop at the cancellation
		}
		err := r.err
		if err == nil && r.ok {
			w.pause()
			if err = use(r.v); err != nil {
				err = callerError{err}
			}
			w.resume()
		}
		if err != nil {
			first = err
			cancel()
		}
	}
	return first
}
