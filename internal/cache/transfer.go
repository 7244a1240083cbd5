package cache

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote"
)

// The shared tier behind the cache folder (internal/cache/remote): Pull
// (pull.go) takes an entry the folder lacks from a shared store, Push
// (push.go) puts one the folder has there. The folder's rules (cache.go)
// stay as they are: what a pull keeps is staged and installed as a
// store's entry is, and a push reads its entry as Fetch does, under the
// entry's shared lock. What a store serves is untrusted: its metadata is
// checked as strictly as a local entry.json, and its bytes against it,
// before anything of it reaches the folder or an engine path.

// Progress is told how a transfer with a shared store goes: the bytes
// moved so far and the total, at most about every progressEvery, and once
// more when it ends. Calls do not overlap. nil: not told.
type Progress func(done, total int64)

// progressEvery bounds how often a transfer's Progress is called: a few
// times a second is what a terminal's rate and ETA need.
const progressEvery = 250 * time.Millisecond

// Transfer is what one pull or push moved, and how long it took.
type Transfer struct {
	Bytes   int64
	Elapsed time.Duration
}

// RefusedError is a shared store's entry that was refused: its metadata
// is not this build's or not of this format, or what the store served
// differs from what the metadata and the store's own records say
// (remote.ErrCorrupt). A miss: the build runs. Reason may quote what the
// store sent, cut short and quoted; it is untrusted text all the same.
type RefusedError struct {
	Key    Key
	Reason string
}

func (e *RefusedError) Error() string {
	return "the shared store's entry for key " + string(e.Key) + " was refused: " + e.Reason
}

// StoreError is a shared store that failed: unreachable, credentials
// refused, errors after its own retries, a transfer that stalled. Err is
// the store's error (remote.ErrAuth among them).
type StoreError struct {
	Op  string // what was being done: "look up", "read", "check", "push"
	Err error
}

func (e *StoreError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// storeFailed sorts an error a store's method returned while op was
// done: a stop of ctx (the build's budget, a signal) is the context's
// cause; content the store's own check refused is a *RefusedError; the
// rest is the store failing, a *StoreError.
func storeFailed(ctx context.Context, k Key, op string, err error) error {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, remote.ErrCorrupt):
		return &RefusedError{Key: k, Reason: err.Error()}
	}
	return &StoreError{Op: op, Err: err}
}

// meter counts a transfer's bytes and tells its Progress at a bounded
// rate. Safe for concurrent use: a push's body is read in parallel parts.
type meter struct {
	fn    Progress
	total int64
	start time.Time
	done  atomic.Int64
	next  atomic.Int64 // when Progress may be told again, in Unix nanoseconds

	mu   sync.Mutex // keeps calls of fn apart and in order
	told int64
}

func newMeter(fn Progress, total int64) *meter {
	return &meter{fn: fn, total: total, start: time.Now()}
}

// add counts n bytes moved.
func (m *meter) add(n int64) {
	done := m.done.Add(n)
	if m.fn == nil {
		return
	}
	now, next := time.Now().UnixNano(), m.next.Load()
	if now < next || !m.next.CompareAndSwap(next, now+int64(progressEvery)) {
		return
	}
	m.tell(done)
}

// end tells Progress where the transfer ended, and returns what it moved.
func (m *meter) end() Transfer {
	done := m.done.Load()
	if m.fn != nil {
		m.tell(done)
	}
	return Transfer{Bytes: min(done, m.total), Elapsed: time.Since(m.start)}
}

func (m *meter) tell(done int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if done < m.told {
		return // a later count was told already
	}
	m.told = done
	m.fn(min(done, m.total), m.total)
}

// meteredReaderAt counts what is read through it.
type meteredReaderAt struct {
	r io.ReaderAt
	m *meter
}

func (x meteredReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := x.r.ReadAt(p, off)
	x.m.add(int64(n))
	return n, err
}
