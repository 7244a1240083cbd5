// Package cache is the engine cache: a build whose key (everything that
// decides the engine's bytes, key.go; for a build with run:, scriptkey.go)
// is in the cache is not built again; its engine is put at the build's
// engine path from there (a build with run:'s engines and outputs at
// theirs, all of them or none: files.go). A shared store
// (internal/cache/remote) may stand behind the folder: Pull and Push
// (transfer.go) move entries between the two, by the rules below.
//
// On disk, under Options.Dir:
//
//	CACHEDIR.TAG             marks the folder as a cache (tag): a build's inputs: never walk into it
//	v3/                      v<FormatVersion>: another version's entries are never read (v1/, v2/: formats.go)
//	  ab/abcd…(64 hex)/      one entry, named by its key
//	    engine               the engine
//	    engine-2, output-1   a build with run:'s other engines and outputs (files.go)
//	    entry.json           its metadata (Entry, listing every file); its modification time is the last use
//	  tmp/                   entries being stored, renamed into place when complete
//
// An entry folder is staged complete in tmp/ and renamed into place, so a
// reader sees all of it or nothing, and of two processes storing the same
// key the first rename wins; --rebuild swaps its new entry with the old one
// in one step (store.go). A staging folder is flocked by the process that
// fills it, so one whose process died (kill -9) is known as such and
// removed at the next Open. No link under the cache folder is ever
// followed (folder.go): a link where the cache keeps a folder or a file of
// its own is a stray, reported, and removed as a link by the commands that
// remove entries.
//
// # Who may remove what
//
// Readers (Fetch, Verify, List and the listing prune and max-size use)
// and writers (Store, Replace, the removal of a corrupt entry, eviction,
// the clean-up of staging leftovers), in this process or any other, keep
// to these rules (locks.go), which are what make each pair safe:
//
//  1. A folder is at a key's place only once complete: staged, then
//     renamed or exchanged in.
//  2. What is at a key's place changes only under the exclusive flock of
//     its shard folder (v3/ab/): an install, a replacement, a folder moved
//     out for removal, a link removed. A holder of that lock never waits
//     for another lock but that of a staging folder it has just made,
//     which only a leftover check holds, for an instant, waiting for
//     nothing (staging.go); so nothing waiting for it can be waiting for
//     itself.
//  3. A folder leaves a key's place only by a rename into a staging folder
//     of the remover's, and its files are deleted only there, under the
//     folder's own exclusive flock.
//  4. A reader that serves or checks an entry (Fetch, Verify) holds a
//     shared flock on the entry folder it opened from before it opens the
//     metadata and the files until it is done. By 3, under that lock the
//     folder is whole, or was emptied before the reader got the lock,
//     after it had left the key's place. So damage found in a folder that
//     is no longer at the key's place is never the entry's: the reader
//     looks at the key again (a few times, then it is a miss), and never
//     calls it corrupt. The listing (List, and prune's) looks without the
//     lock, which it does not need to deliver anything, and reads damage
//     the same way.
//  5. A remover removes only the folder it checked: under the shard's lock
//     it compares the device and inode of what is at the key's place with
//     the folder it holds open (which keeps the inode from being reused),
//     and moves nothing when they differ. A corrupt entry's reader
//     (Fetch, Verify) compares with the folder it found bad; eviction
//     with the folder its listing saw, so an entry stored or replaced
//     since the listing is never evicted in its stead.
//  6. Eviction takes the folder's exclusive lock without waiting and skips
//     an entry a reader holds; prunes take turns (prune.lock).
//  7. Links are removed with unlinkat without AT_REMOVEDIR, which refuses
//     a folder: a link seen where a folder belongs, replaced by a real
//     folder since, is never removed in its stead.
//
// So during a replacement a reader gets the old entry whole (it opened it
// first: the old folder's removal waits for it) or the new one whole, and
// neither is ever removed for what the other did. Where flock does not
// work (some network file systems) the locks are not taken and rule 5's
// comparison alone narrows the races.
package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// Options say where the cache is and how large it may grow.
type Options struct {
	Dir     string
	MaxSize int64 // bytes; 0 = no limit
	// Existing opens only a folder that is there: for the commands that
	// look at a cache (ls, prune, verify), where a mistyped folder must be
	// an error, not a new empty cache. It creates no format folder (v3/); prune and
	// verify create the staging folder they remove entries through.
	Existing bool
	// Look opens the cache to read only (ls): it creates, removes and
	// cleans up nothing, and stores nothing.
	Look bool
	// A build's Open (neither Existing nor Look) also keeps a notice for
	// each folder of an older cache format in the folder (formats.go).
}

// noCacheError is Open's error for Options.Existing when the folder is not
// there (or is not a folder).
type noCacheError struct {
	Dir string
	Err error
}

func (e *noCacheError) Error() string { return fmt.Sprintf("no engine cache at %s: %v", e.Dir, e.Err) }
func (e *noCacheError) Unwrap() error { return e.Err }

// Cache is an opened cache folder.
type Cache struct {
	dir      string // Options.Dir
	root     string // dir/v<FormatVersion>, for messages: it is reached through folder
	maxSize  int64
	readOnly bool // Options.Look, or a folder that cannot be written
	now      func() time.Time
	stored   runStores // what this Cache stored, to tell their eviction
	notices  []string  // what Open found and did that the user should hear of
	heads    headMemo  // the listing's decoded metadata files
	hooks    hooks
}

// hooks let a test stop an operation between two of its steps, to put
// another process's operation there; all nil in use.
type hooks struct {
	staged  func(string)   // newStage made a staging folder (its name in tmp/), before locking it
	opened  func(Key)      // a reader opened and share-locked the entry's folder, before reading its files
	bad     func(Key)      // a reader found the entry it holds bad, before discarding it
	swapped func(Key)      // Replace put the new entry in place, before removing the old one
	listed  func(struct{}) // prune listed the cache, before evicting
}

// at runs a hook when a test set one.
func at[T any](hook func(T), arg T) {
	if hook != nil {
		hook(arg)
	}
}

// Entry is one entry's metadata: what built its files, and the files.
type Entry struct {
	Key      Key           `json:"key"`
	Build    string        `json:"build"` // the name of the build that stored it
	Backend  string        `json:"backend"`
	Library  string        `json:"library,omitempty"`
	Target   string        `json:"target,omitempty"`
	BuiltAt  time.Time     `json:"built_at"`    // when the original build ended
	Duration time.Duration `json:"duration_ns"` // how long the original build took
	// Files are the entry's files, in order: its engines, then a build
	// with run:'s outputs (files.go).
	Files []File `json:"files"`
	// LastUsed is when the entry was last stored or fetched (the metadata
	// file's modification time; not in the JSON).
	LastUsed time.Time `json:"-"`
	// DiskSize is what the entry counts against max-size (entrySize: its
	// files and its metadata file); set by List and Prune, not in the JSON.
	DiskSize int64 `json:"-"`
	// Broken says why a listed entry can never be served (List, Prune):
	// its metadata or one of its files is missing, unreadable, a link or
	// not a regular file, or they disagree. Not in the JSON.
	Broken string `json:"-"`
	// Original is the original build's report entry: its phase tree,
	// slowest phases and log, for a report of a hit to show.
	Original *report.Build `json:"original,omitempty"`
}

// entrySize is the one measure of an entry that max-size, eviction, the
// too-large check and cache ls all use: the bytes of its files and of its
// metadata file (folders and file-system blocks are not counted).
func entrySize(files, meta int64) int64 { return files + meta }

// entryFile is the metadata file's content: the entry and the format it
// was written in.
type entryFile struct {
	Format int `json:"format"`
	Entry
}

const (
	engineName = "engine"
	metaName   = "entry.json"
	tmpName    = "tmp"
)

// ErrReadOnly is Store's error in a cache that cannot be written: it is
// used for hits, and nothing is stored (a notice for the caller, not a
// failure).
var ErrReadOnly = errors.New("the cache folder is read-only: entries are used but none is stored")

// CorruptError is an entry that failed its check (a wrong hash, a
// truncated file, unreadable metadata, a link where its folder or a file
// of it belongs). It was removed when it could be.
type CorruptError struct {
	Key     Key
	Path    string // the entry's folder
	Reason  string
	Removed bool
}

func (e *CorruptError) Error() string {
	what := "removed"
	if !e.Removed {
		what = "not removed (a read-only cache, or no permission)"
	}
	return fmt.Sprintf("cache entry %s is corrupt: %s; %s", e.Path, e.Reason, what)
}

// Open opens the cache at o.Dir, creating the folder when it can (unless
// o.Existing or o.Look). A folder that exists but cannot be written opens
// read-only (ReadOnly). Staging folders of processes that died are
// removed (unless o.Look).
func Open(o Options) (*Cache, error) {
	if o.Dir == "" {
		return nil, errors.New("cache: no folder given")
	}
	if o.MaxSize < 0 {
		return nil, fmt.Errorf("cache: max size %d is negative", o.MaxSize)
	}
	c := &Cache{dir: o.Dir, root: filepath.Join(o.Dir, versionName), maxSize: o.MaxSize, readOnly: o.Look, now: time.Now}
	if o.Existing || o.Look {
		if err := c.checkExisting(); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache folder %s: %w", o.Dir, err)
	}
	if o.Look {
		return c, c.lookAtStaging()
	}
	root, err := c.openRoot(!o.Existing)
	switch {
	case errors.As(err, new(*linkError)):
		return nil, err
	case errors.Is(err, fs.ErrNotExist) && o.Existing:
		return c, nil // no entries, and none to remove
	case err != nil:
		c.readOnly = true // the folder is there (checked or created) but the format folder cannot be made
		return c, nil
	}
	defer root.close()
	tmp, err := c.staging(root)
	if err != nil {
		c.readOnly = true
		return c, nil
	}
	defer tmp.close()
	if err := probeWritable(tmp); err != nil {
		c.readOnly = true
		return c, nil
	}
	c.removeAbandoned(tmp)
	c.tag()
	if !o.Existing {
		c.noteOlderFormats()
	}
	return c, nil
}

// tag marks the cache folder as a cache, as the Cache Directory Tagging
// Specification says (runfiles.CacheTag, CACHEDIR.TAG): a build's inputs:
// never walk into a tagged folder (runfiles.Glob), so no key ever reads
// the entries stored here, which change with every store, and backup and
// archive tools leave it out. A tag there is kept as it is; a file there
// that is not one (a write cut short) is replaced, by a rename of a
// complete one; a link there is not the cache's and is never followed.
// Best effort: a folder that cannot take it is still a cache.
func (c *Cache) tag() {
	top, err := openTop(c.dir)
	if err != nil {
		return
	}
	defer top.close()
	if f, err := top.open(runfiles.CacheTagName, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
		head, _ := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		if runfiles.IsCacheTag(head) {
			return
		}
	} else if !isNotExist(err) {
		return // a link, or what cannot be read
	}
	tmp := runfiles.CacheTagName + ".tmp-" + strconv.Itoa(os.Getpid())
	if _, err := createIn(top, tmp, bytes.NewReader(runfiles.CacheTag)); err != nil {
		_ = top.removeAll(tmp)
		return
	}
	if err := top.rename(tmp, top, runfiles.CacheTagName); err != nil {
		_ = top.removeAll(tmp)
		return
	}
	top.sync()
}

// versionName is the folder of this FormatVersion's entries.
var versionName = "v" + strconv.Itoa(FormatVersion)

// checkExisting checks that the cache folder is there, creating nothing.
func (c *Cache) checkExisting() error {
	fi, err := os.Stat(c.dir)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a folder")
	}
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err // the path is in noCacheError already
		}
		return &noCacheError{Dir: c.dir, Err: err}
	}
	return nil
}

// openRoot opens the format folder, v3/ (creating it when create), never through a link.
func (c *Cache) openRoot(create bool) (*folder, error) {
	top, err := openTop(c.dir)
	if err != nil {
		return nil, err
	}
	defer top.close()
	if create {
		return top.makeSub(versionName)
	}
	return top.sub(versionName)
}

// staging opens tmp/ in root, creating it when it is missing: tools that
// drop empty folders (artifact uploads, s3 sync) leave caches without
// one. A link there is removed (the link, not what it names) and a folder
// made instead, with a notice.
func (c *Cache) staging(root *folder) (*folder, error) {
	return c.ownFolder(root, tmpName)
}

// ownFolder opens the folder name in parent that the cache keeps there,
// creating it when it is missing. A link in its place is not the cache's:
// it is removed (with a notice) and a folder made instead.
func (c *Cache) ownFolder(parent *folder, name string) (*folder, error) {
	d, err := parent.makeSub(name)
	var link *linkError
	if !errors.As(err, &link) || c.readOnly {
		return d, err
	}
	if err := parent.removeLink(name); err != nil {
		return nil, err
	}
	c.notify(link.removed("folder"))
	return parent.makeSub(name)
}

// notify keeps a notice for Notices.
func (c *Cache) notify(msg string) {
	c.stored.mu.Lock()
	defer c.stored.mu.Unlock()
	c.notices = append(c.notices, msg)
}

// Notices are what the cache found and did that the user should hear of
// (a link where its staging folder belongs, removed), each once; the
// caller shows them.
func (c *Cache) Notices() []string {
	c.stored.mu.Lock()
	defer c.stored.mu.Unlock()
	out := c.notices
	c.notices = nil
	return out
}

// lookAtStaging is Open's check of tmp/ for a cache opened only to look:
// a link there is told, never followed or removed.
func (c *Cache) lookAtStaging() error {
	root, err := c.openRoot(false)
	var link *linkError
	switch {
	case errors.As(err, &link):
		return err
	case err != nil:
		return nil // no format folder: an empty cache
	}
	defer root.close()
	if _, err := root.sub(tmpName); errors.As(err, &link) {
		c.notify(fmt.Sprintf("%s is a symbolic link (to %s), not the cache's own: left alone and never followed (a build, prune or verify removes the link)", link.Path, link.Target))
	}
	return nil
}

// probeWritable tries to create a file in dir: permission bits do not
// tell (root writes anyway; a read-only mount refuses anyone).
func probeWritable(dir *folder) error {
	name := "probe-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
	f, err := dir.open(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return unix.Unlinkat(dir.fd(), name, 0)
}

// ReadOnly reports whether the cache is only read from: Store does
// nothing and returns ErrReadOnly.
func (c *Cache) ReadOnly() bool { return c.readOnly }

// MaxSize is the size Store keeps the cache under; 0 = no limit.
func (c *Cache) MaxSize() int64 { return c.maxSize }

// Dir is the folder the cache was opened at.
func (c *Cache) Dir() string { return c.dir }

// entryDir is where k's entry lives, for messages.
func (c *Cache) entryDir(k Key) string {
	return filepath.Join(c.root, string(k[:2]), string(k))
}

// checkKey refuses anything but a key as a folder name.
func checkKey(k Key) error {
	if !k.Valid() {
		return fmt.Errorf("cache: %q is not a key (64 lowercase hex digits)", string(k))
	}
	return nil
}

// isNotExist is whether err says a file is not there.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
