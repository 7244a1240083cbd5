// Package cache is the engine cache: a build whose key (everything that
// decides the engine's bytes, key.go) is in the cache is not built again;
// its engine is put at the build's engine path from there.
//
// On disk, under Options.Dir:
//
//	v2/                      v<FormatVersion>: another version's entries are never read
//	  ab/abcd…(64 hex)/      one entry, named by its key
//	    engine               the engine
//	    entry.json           its metadata (Entry); its modification time is the last use
//	  tmp/                   entries being stored, renamed into place when complete
//
// An entry folder is staged complete in tmp/ and renamed into place, so a
// reader sees all of it or nothing, and of two processes storing the same
// key the first rename wins. A reader holds a shared flock on the engine
// while it reads; eviction takes an exclusive one without waiting and skips
// an entry it cannot lock.
package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// Options say where the cache is and how large it may grow.
type Options struct {
	Dir     string
	MaxSize int64 // bytes; 0 = no limit
	// Existing opens only a folder that is there and creates nothing in
	// it: for commands that look at a cache (ls, prune, verify), where a
	// mistyped folder must be an error, not a new empty cache.
	Existing bool
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
	root     string // dir/v<FormatVersion>
	maxSize  int64
	readOnly bool
	now      func() time.Time
	stored   runStores // what this Cache stored, to tell their eviction
}

// Entry is one cached engine's metadata.
type Entry struct {
	Key          Key           `json:"key"`
	Build        string        `json:"build"` // the name of the build that stored it
	Backend      string        `json:"backend"`
	Library      string        `json:"library,omitempty"`
	Target       string        `json:"target,omitempty"`
	BuiltAt      time.Time     `json:"built_at"`    // when the original build ended
	Duration     time.Duration `json:"duration_ns"` // how long the original build took
	EngineSHA256 string        `json:"engine_sha256"`
	Size         int64         `json:"size"` // the engine's bytes
	// LastUsed is when the entry was last stored or fetched (the metadata
	// file's modification time; not in the JSON).
	LastUsed time.Time `json:"-"`
	// Original is the original build's report entry: its phase tree,
	// slowest phases and log, for a report of a hit to show.
	Original *report.Build `json:"original,omitempty"`
}

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
// truncated engine, unreadable metadata). It was removed when it could be.
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
// o.Existing). A folder that exists but cannot be written opens read-only
// (ReadOnly).
func Open(o Options) (*Cache, error) {
	if o.Dir == "" {
		return nil, errors.New("cache: no folder given")
	}
	if o.MaxSize < 0 {
		return nil, fmt.Errorf("cache: max size %d is negative", o.MaxSize)
	}
	c := &Cache{dir: o.Dir, root: filepath.Join(o.Dir, "v"+strconv.Itoa(FormatVersion)), maxSize: o.MaxSize, now: time.Now}
	if o.Existing {
		if err := c.openExisting(); err != nil {
			return nil, err
		}
		return c, nil
	}
	err := os.MkdirAll(filepath.Join(c.root, tmpName), 0o755)
	if err == nil {
		err = probeWritable(filepath.Join(c.root, tmpName))
	}
	if err != nil {
		fi, statErr := os.Stat(o.Dir)
		if statErr != nil || !fi.IsDir() {
			return nil, fmt.Errorf("cache folder %s: %w", o.Dir, err)
		}
		c.readOnly = true
		return c, nil
	}
	c.removeAbandoned()
	return c, nil
}

// openExisting opens a cache folder that must be there, creating nothing.
// Whether it is writable is asked of the staging folder, where a store
// would write first; a folder that has none yet holds no entries to remove.
func (c *Cache) openExisting() error {
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
	tmp := filepath.Join(c.root, tmpName)
	if _, err := os.Stat(tmp); err != nil {
		return nil
	}
	if probeWritable(tmp) != nil {
		c.readOnly = true
		return nil
	}
	c.removeAbandoned()
	return nil
}

// probeWritable tries to create a file in dir: permission bits do not
// tell (root writes anyway; a read-only mount refuses anyone).
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, "probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// ReadOnly reports whether the cache is only read from: Store does
// nothing and returns ErrReadOnly.
func (c *Cache) ReadOnly() bool { return c.readOnly }

// MaxSize is the size Store keeps the cache under; 0 = no limit.
func (c *Cache) MaxSize() int64 { return c.maxSize }

// Dir is the folder the cache was opened at.
func (c *Cache) Dir() string { return c.dir }

// entryDir is where k's entry lives.
func (c *Cache) entryDir(k Key) string {
	return filepath.Join(c.root, string(k[:2]), string(k))
}

// abandonedAfter is how old a staging folder must be to be taken for the
// leftover of a killed process. Not a process id: the cache folder travels
// between machines (actions/cache), where ids mean nothing.
const abandonedAfter = time.Hour

// removeAbandoned removes staging folders left by killed processes.
func (c *Cache) removeAbandoned() {
	tmp := filepath.Join(c.root, tmpName)
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && c.now().Sub(info.ModTime()) > abandonedAfter {
			_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
		}
	}
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
