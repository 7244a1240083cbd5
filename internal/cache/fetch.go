package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/atomicfile"
)

// Fetch installs k's engine at dest: a hard link when dest is on the
// cache's file system, else a copy, through a partial file beside dest and
// a rename (atomicfile.Install: a link or a folder at dest is refused,
// never written through). The engine's SHA-256 and size are checked
// against the entry's before the rename. A hit returns (entry, true, nil)
// and marks the entry used; a miss (zero, false, nil). A corrupt entry is
// removed and returned as (zero, false, *CorruptError): the caller warns
// and builds. Any other error (dest cannot take the engine) leaves the
// entry as it is.
func (c *Cache) Fetch(k Key, dest string) (Entry, bool, error) {
	if err := checkKey(k); err != nil {
		return Entry{}, false, err
	}
	r, err := c.openEntry(k)
	if err != nil {
		return Entry{}, false, c.missOrCorrupt(k, err)
	}
	defer r.close()
	sum, size, err := r.installAt(dest)
	if err != nil {
		return Entry{}, false, err
	}
	if reason := mismatch(sum, size, r.entry); reason != "" {
		return Entry{}, false, c.discard(k, reason)
	}
	if r.tmp != "" {
		if err := atomicfile.Install(r.tmp, dest); err != nil {
			return Entry{}, false, err
		}
		r.tmp = ""
	}
	r.entry.LastUsed = c.markUsed(k, r.entry.LastUsed)
	return r.entry, true, nil
}

// errMiss is openEntry's "no such entry".
var errMiss = errors.New("cache miss")

// corruption is openEntry's reason an entry is bad.
type corruption struct{ reason string }

func (e corruption) Error() string { return e.reason }

// missOrCorrupt turns openEntry's error into Fetch's: nil for a miss, a
// *CorruptError after removing a bad entry, any other error as it is.
func (c *Cache) missOrCorrupt(k Key, err error) error {
	var bad corruption
	switch {
	case errors.Is(err, errMiss):
		return nil
	case errors.As(err, &bad):
		return c.discard(k, bad.reason)
	}
	return err
}

// entryReader is an entry opened for reading: its engine open and
// share-locked (eviction skips it meanwhile), its metadata read.
type entryReader struct {
	engine *os.File
	path   string // the engine's path in the cache
	entry  Entry
	tmp    string // a partial file beside dest, removed by close unless installed
}

// openEntry opens and share-locks k's engine and reads its metadata. A
// missing entry is errMiss; an entry that is not whole is a corruption.
func (c *Cache) openEntry(k Key) (*entryReader, error) {
	dir := c.entryDir(k)
	r := &entryReader{path: filepath.Join(dir, engineName)}
	f, err := os.Open(r.path)
	if isNotExist(err) {
		if _, statErr := os.Stat(dir); statErr == nil {
			return nil, corruption{"its engine file is missing"}
		}
		return nil, errMiss
	}
	if err != nil {
		return nil, fmt.Errorf("cache entry %s: %w", dir, err)
	}
	r.engine = f
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		r.close()
		return nil, fmt.Errorf("cache entry %s: lock: %w", dir, err)
	}
	if !sameFile(f, r.path) { // evicted between the open and the lock
		r.close()
		return nil, errMiss
	}
	if err := r.readMeta(k, filepath.Join(dir, metaName)); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// sameFile reports whether the open file f is still the one at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// readMeta reads and checks the entry's metadata against its engine file.
func (r *entryReader) readMeta(k Key, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return corruption{fmt.Sprintf("its metadata is unreadable: %v", err)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return corruption{fmt.Sprintf("its metadata is unreadable: %v", err)}
	}
	var m entryFile
	if err := json.Unmarshal(data, &m); err != nil {
		return corruption{fmt.Sprintf("its metadata is not valid JSON: %v", err)}
	}
	switch {
	case m.Format != FormatVersion:
		return corruption{fmt.Sprintf("its metadata has format %d, not %d", m.Format, FormatVersion)}
	case m.Key != k:
		return corruption{fmt.Sprintf("its metadata names key %s", m.Key)}
	}
	engine, err := r.engine.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	if engine.Size() != m.Size {
		return corruption{fmt.Sprintf("its engine has %d bytes, the entry says %d (truncated)", engine.Size(), m.Size)}
	}
	r.entry = m.Entry
	r.entry.LastUsed = fi.ModTime()
	return nil
}

// installAt puts the engine in a partial file beside dest (a hard link,
// else a copy; nothing when dest is already linked to it) and returns the SHA-256 and size read from the cache's
// file. dest must be able to take it (atomicfile.CheckInstall).
func (r *entryReader) installAt(dest string) (string, int64, error) {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", 0, err
	}
	if err := atomicfile.CheckInstall(dest); err != nil {
		return "", 0, err
	}
	_, _ = atomicfile.RemoveStale(dest) // best effort, as a build does
	h := sha256.New()
	var n int64
	var err error
	if r.linkedAt(dest) {
		// An earlier hit linked it: renaming another link over it would do
		// nothing (rename(2) on two links to one file) and leave the
		// partial file behind. The check is all there is to do.
		n, err = io.Copy(h, r.engine)
	} else if r.tmp = atomicfile.PartialName(dest); link(r.path, r.tmp) == nil {
		n, err = io.Copy(h, r.engine) // the same file: one read checks both
	} else {
		n, err = copyInto(r.tmp, io.TeeReader(r.engine, h))
	}
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// link makes a hard link; a variable so a test can take the copy path
// without a second file system.
var link = os.Link

// linkedAt reports whether dest is already the cache's engine file.
func (r *entryReader) linkedAt(dest string) bool {
	a, err := os.Lstat(dest)
	if err != nil || !a.Mode().IsRegular() {
		return false
	}
	b, err := r.engine.Stat()
	return err == nil && os.SameFile(a, b)
}

// copyInto writes a new file at path from src, synced.
func copyInto(path string, src io.Reader) (int64, error) {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, src)
	if err == nil {
		err = out.Sync()
	}
	if closeErr := out.Close(); err == nil {
		err = closeErr
	}
	return n, err
}

func (r *entryReader) close() {
	if r.tmp != "" {
		_ = os.Remove(r.tmp)
	}
	if r.engine != nil {
		r.engine.Close() // releases the lock
	}
}

// markUsed sets the entry's last use to now (the metadata file's
// modification time, so the metadata itself is never rewritten). A
// read-only cache keeps the old time.
func (c *Cache) markUsed(k Key, old time.Time) time.Time {
	if c.readOnly {
		return old
	}
	now := c.now()
	if err := os.Chtimes(filepath.Join(c.entryDir(k), metaName), now, now); err != nil {
		return old
	}
	return now
}

// discard removes k's entry, which failed a check, and returns the
// *CorruptError that says so. The folder is first renamed out of place,
// so no reader finds half of it.
func (c *Cache) discard(k Key, reason string) *CorruptError {
	dir := c.entryDir(k)
	e := &CorruptError{Key: k, Path: dir, Reason: reason}
	if c.readOnly {
		return e
	}
	e.Removed = c.removeEntryDir(dir) == nil
	return e
}

// removeEntryDir renames an entry's folder into tmp/ and removes it there.
func (c *Cache) removeEntryDir(dir string) error {
	trash, err := os.MkdirTemp(filepath.Join(c.root, tmpName), "remove-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(trash)
	return os.Rename(dir, filepath.Join(trash, "entry"))
}
