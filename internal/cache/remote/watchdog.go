package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// A watchdog abandons a store operation that moves no bytes for its stall
// time: every request the operation sends, every response it gets and every
// byte of a request or response body kicks it (watchTransport, below the
// client libraries' retries, so each attempt counts), and when it is not
// kicked for the stall time it cancels the operation's context with
// ErrStalled as the cause. One watchdog covers a whole operation (a Put's
// blobs, record and checks), so both stores get the same rule from one
// place. While the caller holds the bytes of an Open (pause), the time is
// not counted: a slow disk is not a stalled store.
type watchdog struct {
	stall  time.Duration
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	timer  *time.Timer
	paused bool
	done   bool
}

// stallError is the cause a watchdog cancels with.
type stallError struct{ stall time.Duration }

func (e *stallError) Error() string {
	return fmt.Sprintf("no bytes moved for %s, so the transfer was abandoned", e.stall)
}
func (e *stallError) Is(target error) bool { return target == ErrStalled }

type watchdogKey struct{}

// watch starts a watchdog for an operation: the returned context is the
// operation's, canceled when it stalls or when stop is called.
func watch(ctx context.Context, stall time.Duration) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{stall: stall, cancel: cancel}
	w.timer = time.AfterFunc(stall, func() { cancel(&stallError{stall}) })
	return context.WithValue(ctx, watchdogKey{}, w), w
}

// kick says bytes moved.
func (w *watchdog) kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.paused && !w.done {
		w.timer.Reset(w.stall)
	}
}

// pause stops counting until resume: the caller, not the store, has the
// next move.
func (w *watchdog) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = true
	w.timer.Stop()
}

func (w *watchdog) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = false
	if !w.done {
		w.timer.Reset(w.stall)
	}
}

// stop ends the operation: the timer and the context are released.
func (w *watchdog) stop() {
	w.mu.Lock()
	w.done = true
	w.timer.Stop()
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// stalled is the operation's error when its watchdog abandoned it: the
// stall, in place of the "context canceled" the client libraries report.
func stalled(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrStalled) {
		return cause
	}
	return err
}

// watchTransport kicks the watchdog of a request's context (if any) at
// each request, response and body read.
type watchTransport struct{ base http.RoundTripper }

func (t watchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w, _ := req.Context().Value(watchdogKey{}).(*watchdog)
	if w == nil {
		return t.base.RoundTrip(req)
	}
	w.kick()
	if req.Body != nil && req.Body != http.NoBody {
		req = req.Clone(req.Context())
		req.Body = &kickReader{r: req.Body, w: w}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	w.kick()
	resp.Body = &kickReader{r: resp.Body, w: w}
	return resp, nil
}

// kickReader kicks a watchdog at each read that moves bytes.
type kickReader struct {
	r io.ReadCloser
	w *watchdog
}

func (k *kickReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.w.kick()
	}
	return n, err
}

func (k *kickReader) Close() error { return k.r.Close() }

// watchedReader is what Open returns: the file's reader, with its
// watchdog paused between the caller's reads and stopped at Close, and
// the stall as the error of a read it cut short.
type watchedReader struct {
	ctx context.Context
	r   io.ReadCloser
	w   *watchdog
}

func newWatchedReader(ctx context.Context, r io.ReadCloser, w *watchdog) *watchedReader {
	w.pause()
	return &watchedReader{ctx: ctx, r: r, w: w}
}

func (r *watchedReader) Read(p []byte) (int, error) {
	r.w.resume()
	n, err := r.r.Read(p)
	r.w.pause()
	if err != nil && err != io.EOF {
		err = stalled(r.ctx, err)
	}
	return n, err
}

func (r *watchedReader) Close() error {
	err := r.r.Close()
	r.w.stop()
	return err
}
