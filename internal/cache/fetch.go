package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/atomicfile"
)

// Fetch installs a copy of k's engine at dest, through a partial file
// beside dest and a rename (atomicfile.Install: a link or a folder at dest
// is refused, never written through). A copy, never a link to the cache's
// file: editing one must not change the other (a reflink where the file
// system has them costs no space or time; deliver.go). The copy's SHA-256
// and size are checked against the entry's before the rename. A hit
// returns (entry, true, nil) and marks the entry used; a miss (zero,
// false, nil). A corrupt entry is removed and returned as (zero, false,
// *CorruptError): the caller warns and builds. Any other error (dest
// cannot take the engine) leaves the entry as it is.
func (c *Cache) Fetch(k Key, dest string) (Entry, bool, error) {
	if err := checkKey(k); err != nil {
		return Entry{}, false, err
	}
	r, err := c.openEntry(k)
	if err != nil {
		return Entry{}, false, c.missOrCorrupt(k, err)
	}
	defer r.close()
	tmp, sum, size, err := deliver(r.engine, dest)
	if err != nil {
		return Entry{}, false, err
	}
	defer os.Remove(tmp) // gone already once installed
	if reason := mismatch(sum, size, r.entry); reason != "" {
		return Entry{}, false, c.discard(k, reason)
	}
	if err := atomicfile.Install(tmp, dest); err != nil {
		return Entry{}, false, err
	}
	r.entry.LastUsed = c.markUsedIn(r.dir, r.entry.LastUsed)
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

// entryReader is an entry opened for reading: its folder open, its engine
// open and share-locked (eviction skips it meanwhile), its metadata read
// through the same folder, so the engine and the metadata are of one entry
// even when Replace swaps the entry meanwhile.
type entryReader struct {
	dir    *folder
	engine *os.File
	entry  Entry
}

// openEntry opens and share-locks k's engine and reads its metadata. A
// missing entry is errMiss; an entry that is not whole, or a link where
// its folder or one of its files belongs, is a corruption.
func (c *Cache) openEntry(k Key) (*entryReader, error) {
	root, err := c.openRoot(false)
	if err != nil {
		return nil, asCorruption(err, "the cache's version folder")
	}
	defer root.close()
	shard, err := root.sub(string(k[:2]))
	if err != nil {
		return nil, asCorruption(err, "the folder of its shard")
	}
	defer shard.close()
	dir, err := shard.sub(string(k))
	if err != nil {
		return nil, asCorruption(err, "its folder")
	}
	r := &entryReader{dir: dir}
	if r.engine, err = dir.openRegular(engineName); err != nil {
		r.close()
		if isNotExist(err) {
			return nil, corruption{"its engine file is missing"}
		}
		return nil, asCorruption(err, "its engine")
	}
	if err := unix.Flock(int(r.engine.Fd()), unix.LOCK_SH); err != nil {
		r.close()
		return nil, fmt.Errorf("cache entry %s: lock: %w", c.entryDir(k), err)
	}
	if err := r.readMeta(k); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// asCorruption sorts an error opening part of an entry: not there is a
// miss; a link, or a file where a folder belongs, is a corruption; the
// rest stays an error.
func asCorruption(err error, what string) error {
	var link *linkError
	switch {
	case isNotExist(err):
		return errMiss
	case errors.As(err, &link):
		return corruption{fmt.Sprintf("%s is a symbolic link (to %s), never followed", what, link.Target)}
	case errors.Is(err, unix.ENOTDIR):
		return corruption{what + " is not a folder"}
	}
	var odd *notRegularError
	if errors.As(err, &odd) {
		return corruption{fmt.Sprintf("%s is a %s, not a file", what, odd.Type)}
	}
	return err // no permission, too many open files: the entry may be fine
}

// readMeta reads and checks the entry's metadata against its engine file.
func (r *entryReader) readMeta(k Key) error {
	f, err := r.dir.openRegular(metaName)
	if err != nil {
		var link *linkError
		if errors.As(err, &link) {
			return corruption{fmt.Sprintf("its metadata is a symbolic link (to %s), never followed", link.Target)}
		}
		return corruption{fmt.Sprintf("its metadata is unreadable: %v", err)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return corruption{fmt.Sprintf("its metadata is unreadable: %v", err)}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMetaBytes))
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
		return fmt.Errorf("%s: %w", r.engine.Name(), err)
	}
	if engine.Size() != m.Size {
		return corruption{fmt.Sprintf("its engine has %d bytes, the entry says %d (truncated)", engine.Size(), m.Size)}
	}
	r.entry = m.Entry
	r.entry.LastUsed = fi.ModTime()
	r.entry.DiskSize = entrySize(engine.Size(), fi.Size())
	return nil
}

// maxMetaBytes bounds what is read of a metadata file: one with a long
// phase tree is tens of kilobytes; anything near this is not ours.
const maxMetaBytes = 64 << 20

func (r *entryReader) close() {
	if r.engine != nil {
		r.engine.Close() // releases the lock
	}
	r.dir.close()
}

// markUsedIn sets the entry's last use to now (the metadata file's
// modification time, so the metadata itself is never rewritten). A
// read-only cache keeps the old time.
func (c *Cache) markUsedIn(dir *folder, old time.Time) time.Time {
	if c.readOnly {
		return old
	}
	now := c.now()
	if dir.chtimes(metaName, now) != nil {
		return old
	}
	return now
}

// markUsed is markUsedIn for k's entry in shard.
func (c *Cache) markUsed(shard *folder, k Key) {
	dir, err := shard.sub(string(k))
	if err != nil {
		return
	}
	defer dir.close()
	c.markUsedIn(dir, time.Time{})
}

// discard removes k's entry, which failed a check, and returns the
// *CorruptError that says so. The folder is first moved out of place, so
// no reader finds half of it; a link in its place (or in its shard's) is
// removed as a link.
func (c *Cache) discard(k Key, reason string) *CorruptError {
	e := &CorruptError{Key: k, Path: c.entryDir(k), Reason: reason}
	if c.readOnly {
		return e
	}
	root, err := c.openRoot(false)
	if err != nil {
		return e
	}
	defer root.close()
	shard, err := root.sub(string(k[:2]))
	var link *linkError
	if errors.As(err, &link) { // the shard itself is a link: nothing under it is the cache's
		e.Path = link.Path
		e.Removed = root.removeAll(string(k[:2])) == nil
		return e
	}
	if err != nil {
		return e
	}
	defer shard.close()
	e.Removed = c.removeEntry(root, shard, string(k)) == nil
	return e
}

// removeEntry moves name (an entry folder, or a link in its place) out of
// shard into a locked staging folder and removes it there.
func (c *Cache) removeEntry(root, shard *folder, name string) error {
	st, err := c.newStage(root, "remove-")
	if err != nil {
		return err
	}
	defer st.remove()
	return shard.rename(name, st.dir, stagedName)
}
