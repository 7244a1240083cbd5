package cache

import (
	"context"
	"errors"
	"fmt"

	"github.com/trt-action/trt-action/internal/cache/remote"
)

// Pushed is what Push did.
type Pushed struct {
	// Pushed: the store took the entry. False when it had one for the key
	// already (another runner pushed it first) and replace was not asked.
	Pushed bool
	Transfer
}

// ErrNotCached is Push's error when the folder has no entry for the key
// (evicted, or removed as corrupt, since it was stored or found).
var ErrNotCached = errors.New("the cache folder no longer has the entry")

// Push puts k's entry of the folder in the shared store s (replacing the
// store's entry for k when replace: a --rebuild's engine, or one built
// after the store's entry was refused). The entry is opened as Fetch
// opens it, under its shared lock (eviction skips it, a replacement's
// removal waits for it), and the store reads its metadata file's bytes as
// they are and its files, checked when they were stored; the lock is let go
// when Put returns. A store that failed is a *StoreError, a stop of ctx
// its cause, content the store refused a *RefusedError.
func (c *Cache) Push(ctx context.Context, s remote.Store, k Key, replace bool, progress Progress) (Pushed, error) {
	if err := checkKey(k); err != nil {
		return Pushed{}, err
	}
	r, err := c.openForPush(k)
	if err != nil {
		return Pushed{}, err
	}
	defer r.close()
	if len(r.meta) > remote.MaxMetaBytes {
		return Pushed{}, fmt.Errorf("its metadata has %d bytes, more than the %d a shared store's entry may have", len(r.meta), remote.MaxMetaBytes)
	}
	m := newMeter(progress, r.entry.Bytes())
	uploads := make([]remote.Upload, len(r.entry.Files))
	for i, f := range r.entry.Files {
		uploads[i] = remote.Upload{File: remote.File{Name: f.Name, Size: f.Size, SHA256: f.SHA256},
			Body: meteredReaderAt{r: r.files[i], m: m}}
	}
	pushed, err := s.Put(ctx, string(k), r.meta, uploads, replace)
	p := Pushed{Pushed: pushed, Transfer: m.end()}
	if err != nil {
		return p, storeFailed(ctx, k, "push", err)
	}
	return p, nil
}

// openForPush opens k's entry for reading, as Fetch does: an entry moved
// away meanwhile (replaced) is looked up again. A corrupt one is left for
// the next Fetch, which removes it; it is not pushed.
func (c *Cache) openForPush(k Key) (*entryReader, error) {
	for range lookAgain {
		r, err := c.openEntry(k)
		var bad corruption
		switch {
		case errors.Is(err, errMoved):
			continue
		case errors.Is(err, errMiss):
			return nil, ErrNotCached
		case errors.As(err, &bad):
			if r != nil {
				r.close()
			}
			return nil, fmt.Errorf("the entry in the cache folder is corrupt: %s", bad.reason)
		case err != nil:
			return nil, err
		}
		return r, nil
	}
	return nil, ErrNotCached // replaced again and again while it was opened
}
