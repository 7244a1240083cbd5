package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/text"
)

// Store saves the engine file and e (its Key, Size and EngineSHA256 are
// set here from k and the file; an EngineSHA256 given, the build's, must
// match what is copied) as k's entry, then evicts least recently
// used entries over the cache's MaxSize. The entry is staged complete in
// the cache's tmp folder and renamed into place: a reader never sees part
// of it, and when another process stored k first, its entry stays and this
// one is dropped (nil error). Any error is a warning for the caller; the
// build stays ok. An entry (engine and metadata) larger than MaxSize is
// refused with a *tooLargeError. A read-only cache returns ErrReadOnly.
func (c *Cache) Store(k Key, engine string, e Entry) error {
	if err := checkKey(k); err != nil {
		return err
	}
	if c.readOnly {
		return ErrReadOnly
	}
	final := c.entryDir(k)
	if _, err := os.Stat(filepath.Join(final, metaName)); err == nil {
		return nil // already cached (by another shard, or an earlier run)
	}
	if fi, err := os.Stat(engine); err == nil {
		if err := c.checkFits(engine, fi.Size()); err != nil {
			return err // before copying: the engine alone is too large
		}
	}
	stage, err := os.MkdirTemp(filepath.Join(c.root, tmpName), "store-")
	if err != nil {
		return storeError(err)
	}
	defer os.RemoveAll(stage)                      // nothing left after a failure or a lost race
	if err := os.Chmod(stage, 0o755); err != nil { // MkdirTemp's 0700 would hide it from other users
		return storeError(err)
	}
	e.Key = k
	built := e.EngineSHA256
	if e.EngineSHA256, e.Size, err = copyHashing(engine, filepath.Join(stage, engineName)); err != nil {
		return storeError(err)
	}
	if built != "" && built != e.EngineSHA256 {
		return fmt.Errorf("cache: not stored: %s changed since the build (SHA-256 %s, the build made %s)", engine, e.EngineSHA256, built)
	}
	meta := filepath.Join(stage, metaName)
	if err := writeMeta(meta, e); err != nil {
		return storeError(err)
	}
	if fi, err := os.Stat(meta); err == nil {
		if err := c.checkFits(engine, e.Size+fi.Size()); err != nil {
			return err // with its metadata (a long phase tree) it is
		}
	}
	atomicfile.SyncDir(stage)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return storeError(err)
	}
	if err := os.Rename(stage, final); err != nil {
		if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
			return nil // another process stored it first; its entry is as good
		}
		return storeError(err)
	}
	atomicfile.SyncDir(filepath.Dir(final))
	c.markUsed(k, time.Time{}) // on the clock Fetch uses, not the file system's coarser one
	c.stored.add(k)
	if c.maxSize > 0 {
		if _, err := c.Prune(PruneRule{MaxSize: c.maxSize}); err != nil {
			return fmt.Errorf("cache: stored %s, but eviction failed: %w", k, err)
		}
	}
	return nil
}

// tooLargeError is Store's refusal of an entry larger than the cache's
// max-size: eviction would remove it right away, so the cache would keep
// nothing and say nothing.
type tooLargeError struct {
	Engine  string
	Size    int64 // the engine and its metadata
	MaxSize int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("engine %s is %s with its metadata, larger than the cache's max-size %s; not stored (raise max-size)",
		e.Engine, text.Bytes(e.Size), text.Bytes(e.MaxSize))
}

// checkFits refuses an entry of size bytes over the cache's max-size.
func (c *Cache) checkFits(engine string, size int64) error {
	if c.maxSize > 0 && size > c.maxSize {
		return &tooLargeError{Engine: engine, Size: size, MaxSize: c.maxSize}
	}
	return nil
}

// runStores is what one Cache (one run) stored, so that evicting one of
// those entries, which means max-size is too small for the run's own
// engines, is told rather than silent.
type runStores struct {
	mu      sync.Mutex
	keys    map[Key]bool
	evicted int
}

func (r *runStores) add(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = map[Key]bool{}
	}
	r.keys[k] = true
}

// removed counts k if this Cache stored it.
func (r *runStores) removed(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys[k] {
		delete(r.keys, k)
		r.evicted++
	}
}

// EvictedStored is how many entries this Cache stored were evicted since,
// by its own stores or prunes: more than 0 means max-size is too small for
// what one run builds.
func (c *Cache) EvictedStored() int {
	c.stored.mu.Lock()
	defer c.stored.mu.Unlock()
	return c.stored.evicted
}

// storeError says what went wrong storing; a full disk is named as such.
func storeError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("cache: not stored, the disk is full: %w", err)
	}
	return fmt.Errorf("cache: not stored: %w", err)
}

// copyHashing copies src to a new file dst, synced, and returns the
// SHA-256 and size of what it copied.
func copyHashing(src, dst string) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	h := sha256.New()
	n, err := copyInto(dst, io.TeeReader(in, h))
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeMeta writes the metadata file, synced.
func writeMeta(path string, e Entry) error {
	data, err := json.Marshal(entryFile{Format: FormatVersion, Entry: e})
	if err != nil {
		return err
	}
	_, err = copyInto(path, bytes.NewReader(data))
	return err
}
