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
	"sync"
	"syscall"

	"github.com/trt-action/trt-action/internal/text"
)

// StoreOutcome is what a store did with its entry.
type StoreOutcome int

const (
	// Kept: an entry for the key was there already (another process
	// stored it first, or an earlier run): it stays, and nothing was
	// stored.
	Kept StoreOutcome = iota
	// Added: the entry is new.
	Added
	// Replaced: Replace put the new entry where the old one was.
	Replaced
)

// Stored is what Store or Replace did.
type Stored struct {
	Outcome StoreOutcome
	// EvictedOwn is how many entries this Cache stored that the eviction
	// after this store removed: max-size is too small for one run.
	EvictedOwn int
}

// Store saves the engine file and e as k's entry: StoreFiles with the
// one file of a build without run:.
func (c *Cache) Store(k Key, engine string, e Entry) (Stored, error) {
	return c.StoreFiles(k, EngineDecl(engine, ""), e)
}

// StoreFiles saves the files a build declares (files, in its entry's
// order; each file's SHA-256 given, the build's, must match what is
// copied) and e (its Key and Files are set here from k and the files) as
// k's entry, then evicts least recently used entries over the cache's
// MaxSize. The entry is staged complete in the cache's tmp folder and
// renamed into place: a reader never sees part of it, and when an entry
// for k is there (another process stored it first) it stays and this one
// is dropped (Kept, nil error). Any error is a warning for the caller; the
// build stays ok. An entry (files and metadata) larger than MaxSize is
// refused with a *tooLargeError. A read-only cache returns ErrReadOnly.
func (c *Cache) StoreFiles(k Key, files []Decl, e Entry) (Stored, error) {
	return c.store(k, files, e, false)
}

// Replace is Store for --rebuild: ReplaceFiles with the one file of a
// build without run:.
func (c *Cache) Replace(k Key, engine string, e Entry) (Stored, error) {
	return c.ReplaceFiles(k, EngineDecl(engine, ""), e)
}

// ReplaceFiles is StoreFiles for --rebuild: the new entry takes the place
// of the one there, in one step (renameat2 RENAME_EXCHANGE), so a reader
// that opens k meanwhile reads the old entry whole or the new one whole,
// never a mix and never nothing. Where the file system cannot exchange
// folders, the old entry is moved out and the new one in: between those
// two renames a reader finds no entry.
func (c *Cache) ReplaceFiles(k Key, files []Decl, e Entry) (Stored, error) {
	return c.store(k, files, e, true)
}

func (c *Cache) store(k Key, files []Decl, e Entry, replace bool) (Stored, error) {
	if err := checkKey(k); err != nil {
		return Stored{}, err
	}
	if len(files) == 0 || files[0].Role != RoleEngine {
		return Stored{}, errors.New("cache: not stored: an entry holds an engine first")
	}
	if c.readOnly {
		return Stored{}, ErrReadOnly
	}
	root, err := c.openRoot(true)
	if err != nil {
		return Stored{}, storeError(err)
	}
	defer root.close()
	shard, err := c.ownFolder(root, string(k[:2]))
	if err != nil {
		return Stored{}, storeError(err)
	}
	defer shard.close()
	if !replace && hasEntry(shard, k) {
		return Stored{Outcome: Kept}, nil // already cached (by another shard, or an earlier run)
	}
	var size int64
	for _, f := range files {
		if fi, err := os.Stat(f.Local); err == nil {
			size += fi.Size()
		}
	}
	if err := c.checkFits(files, size); err != nil {
		return Stored{}, err // before copying: the files alone are too large
	}
	st, err := c.newStage(root, "store-")
	if err != nil {
		return Stored{}, storeError(err)
	}
	defer st.remove() // nothing left after a failure, a lost race, or the replaced entry
	if err := c.fill(st, files, &e, k); err != nil {
		return Stored{}, err
	}
	return c.commit(root, shard, st, k, replace)
}

// commit installs the entry filled in the staging folder st at k's place
// (replacing the one there when replace), then evicts least recently used
// entries over max-size: the end of a store, and of a pull's backfill.
func (c *Cache) commit(root, shard *folder, st *stage, k Key, replace bool) (Stored, error) {
	// Counted as this run's before it is in place: a prune of another
	// store may evict it at once, and that must count.
	added := c.stored.add(k)
	outcome, olds, err := c.install(root, st, shard, k, replace)
	if outcome == Replaced {
		at(c.hooks.swapped, k)
	}
	for _, old := range olds {
		old.remove() // after the shard's lock: a removal waits for the old entry's readers
	}
	if err != nil || outcome == Kept {
		if added {
			c.stored.forget(k)
		}
		return Stored{Outcome: outcome}, err
	}
	shard.sync()
	c.markUsed(shard, k) // on the clock Fetch uses, not the file system's coarser one
	done := Stored{Outcome: outcome}
	if c.maxSize > 0 {
		var err error
		_, done.EvictedOwn, err = c.prune(PruneRule{MaxSize: c.maxSize})
		if err != nil {
			return done, fmt.Errorf("cache: stored %s, but eviction failed: %w", k, err)
		}
	}
	return done, nil
}

// stagedName is the entry's folder inside its staging folder: the staging
// folder stays locked around it, and what a replacement pushes out lands
// there too.
const stagedName = "entry"

// fill writes the entry (its files and metadata) into the staging folder.
func (c *Cache) fill(st *stage, files []Decl, e *Entry, k Key) error {
	dir, err := st.dir.makeSub(stagedName)
	if err != nil {
		return storeError(err)
	}
	defer dir.close()
	e.Key, e.Files = k, nil
	roles := make([]string, len(files))
	for i, f := range files {
		roles[i] = f.Role
	}
	for i, name := range fileNames(roles) {
		f := files[i]
		sum, n, err := copyHashing(f.Local, dir, name)
		if err != nil {
			return storeError(err)
		}
		if f.SHA256 != "" && f.SHA256 != sum {
			return fmt.Errorf("cache: not stored: %s changed since the build (SHA-256 %s, the build made %s)", f.Local, sum, f.SHA256)
		}
		e.Files = append(e.Files, File{Name: name, Role: f.Role, Path: f.Path, Size: n, SHA256: sum})
	}
	metaSize, err := writeMeta(dir, *e)
	if err != nil {
		return storeError(err)
	}
	if err := c.checkFits(files, entrySize(e.Bytes(), metaSize)); err != nil {
		return err // with its metadata (a long phase tree) it is
	}
	// In use from the moment it is in place: a prune running meanwhile for
	// another store must not take the new entry for the least recently
	// used by the time its metadata was written.
	_ = dir.chtimes(metaName, c.now())
	dir.sync()
	return nil
}

// hasEntry reports whether k has an entry folder with metadata in shard.
func hasEntry(shard *folder, k Key) bool {
	dir, err := shard.sub(string(k))
	if err != nil {
		return false
	}
	defer dir.close()
	st, err := dir.lstat(metaName)
	return err == nil && st.mode.IsRegular()
}

// install moves the staged entry to k's place, under the shard's lock. A
// link (or a stray file) there is removed first; it is not the cache's.
// With replace, an entry there is exchanged with the staged one, which
// leaves the old entry in the staging folder for its removal; where the
// file system cannot exchange, the old entry is moved out first, into a
// stage of its own that is returned (in olds) to remove once the lock is
// let go: a removal waits for the entry's readers, which the shard's lock
// must never do.
func (c *Cache) install(root *folder, st *stage, shard *folder, k Key, replace bool) (outcome StoreOutcome, olds []*stage, err error) {
	unlock := lockShard(shard)
	defer unlock()
	name := string(k)
	for range 3 { // without a working lock, another process can come between a look and a rename
		there, err := shard.lstat(name)
		exists := err == nil
		if exists && !there.mode.IsDir() {
			if err := shard.removeLink(name); err != nil {
				return Kept, olds, storeError(err)
			}
			if there.isLink() {
				c.notify(fmt.Sprintf("removed the symbolic link %s where an entry belongs; trt-action never follows a link inside its cache", shard.join(name)))
			}
			exists = false
		}
		if replace && exists {
			err := st.dir.exchange(stagedName, shard, name)
			switch {
			case err == nil:
				return Replaced, olds, nil
			case exchangeUnsupported(err):
				old, err := c.moveOutLocked(root, shard, name, nil)
				if err != nil && !isNotExist(err) {
					return Kept, olds, storeError(err)
				}
				if old != nil {
					olds = append(olds, old)
				}
			case !isNotExist(err):
				return Kept, olds, storeError(err)
			}
		}
		err = st.dir.rename(stagedName, shard, name)
		switch {
		case err == nil && exists && replace:
			return Replaced, olds, nil // without an exchange: the old entry was moved out first
		case err == nil:
			return Added, olds, nil
		case errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY):
			if !replace {
				return Kept, olds, nil // another process stored it first; its entry is as good
			}
		default:
			return Kept, olds, storeError(err)
		}
	}
	return Kept, olds, storeError(fmt.Errorf("%s kept changing while the entry was replaced", c.entryDir(k)))
}

// exchangeUnsupported is whether renameat2's error says the file system
// (or kernel) cannot exchange.
func exchangeUnsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP)
}

// tooLargeError is Store's refusal of an entry larger than the cache's
// max-size: eviction would remove it right away, so the cache would keep
// nothing and say nothing.
type tooLargeError struct {
	Engine  string // the (first) engine
	Others  int    // how many more files the entry has
	Size    int64  // the files and the metadata
	MaxSize int64
}

func (e *tooLargeError) Error() string {
	what := fmt.Sprintf("engine %s is %s with its metadata", e.Engine, text.Bytes(e.Size))
	if e.Others > 0 {
		what = fmt.Sprintf("engine %s and %s are %s with their metadata", e.Engine, text.Count(e.Others, "other file"), text.Bytes(e.Size))
	}
	return what + fmt.Sprintf(", larger than the cache's max-size %s; not stored (raise max-size)", text.Bytes(e.MaxSize))
}

// checkFits refuses an entry of files, size bytes, over the cache's
// max-size.
func (c *Cache) checkFits(files []Decl, size int64) error {
	if c.maxSize > 0 && size > c.maxSize {
		return &tooLargeError{Engine: files[0].Local, Others: len(files) - 1, Size: size, MaxSize: c.maxSize}
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

// add records k as stored by this Cache; false when it was already.
func (r *runStores) add(k Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = map[Key]bool{}
	}
	if r.keys[k] {
		return false
	}
	r.keys[k] = true
	return true
}

// forget drops k, which was not stored after all.
func (r *runStores) forget(k Key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.keys, k)
}

// removed counts k if this Cache stored it, and says whether it did.
func (r *runStores) removed(k Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys[k] {
		delete(r.keys, k)
		r.evicted++
		return true
	}
	return false
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

// copyHashing copies src to a new file name in dir, synced, and returns
// the SHA-256 and size of what it copied.
func copyHashing(src string, dir *folder, name string) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	h := sha256.New()
	n, err := createIn(dir, name, io.TeeReader(in, h))
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeMeta writes the metadata file into dir, synced, and returns its size.
func writeMeta(dir *folder, e Entry) (int64, error) {
	data, err := encodeMeta(e)
	if err != nil {
		return 0, err
	}
	return createIn(dir, metaName, bytes.NewReader(data))
}

// encodeMeta is the metadata file's content for e.
func encodeMeta(e Entry) ([]byte, error) {
	return json.Marshal(entryFile{Format: FormatVersion, Entry: e})
}

// createIn writes a new file name in dir from src, synced.
func createIn(dir *folder, name string, src io.Reader) (int64, error) {
	out, err := dir.open(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	return writeSynced(out, src)
}

// writeSynced copies src into out, syncs and closes it.
func writeSynced(out *os.File, src io.Reader) (int64, error) {
	n, err := io.Copy(out, src)
	if err == nil {
		err = out.Sync()
	}
	if closeErr := out.Close(); err == nil {
		err = closeErr
	}
	return n, err
}
