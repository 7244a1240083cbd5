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
//
// An entry replaced or removed by another process while it is read
// (cache.go: "Who may remove what") is read again from k's folder: the
// old entry or the new one is delivered whole, and neither is called
// corrupt for what the other did.
func (c *Cache) Fetch(k Key, dest string) (Entry, bool, error) {
	if err := checkKey(k); err != nil {
		return Entry{}, false, err
	}
	for range lookAgain {
		e, hit, err := c.fetchOnce(k, dest)
		if !errors.Is(err, errMoved) {
			return e, hit, err
		}
	}
	return Entry{}, false, nil // replaced again and again while it was read: a miss
}

// lookAgain bounds how often a reader looks at k's folder again after the
// entry it opened was moved away (replaced or removed) under it.
const lookAgain = 3

func (c *Cache) fetchOnce(k Key, dest string) (Entry, bool, error) {
	r, err := c.openEntry(k)
	var bad corruption
	switch {
	case errors.As(err, &bad):
		return Entry{}, false, c.discard(k, r, bad.reason)
	case errors.Is(err, errMiss):
		return Entry{}, false, nil
	case err != nil:
		return Entry{}, false, err // errMoved among them
	}
	defer r.close()
	tmp, sum, size, err := deliver(r.engine, dest)
	if err != nil {
		return Entry{}, false, err
	}
	defer os.Remove(tmp) // gone already once installed
	if reason := mismatch(sum, size, r.entry); reason != "" {
		return Entry{}, false, c.discard(k, r, reason)
	}
	if err := atomicfile.Install(tmp, dest); err != nil {
		return Entry{}, false, err
	}
	r.entry.LastUsed = c.markUsedIn(r.dir, r.entry.LastUsed)
	return r.entry, true, nil
}

// errMiss is openEntry's "no such entry".
var errMiss = errors.New("cache miss")

// errMoved says the entry folder a reader opened is no longer at its
// key's place: another process replaced or removed it meanwhile. What the
// reader found in it (a file gone, say) is not the entry's damage, and
// the folder now at the key's place is not the one it checked.
var errMoved = errors.New("the entry was replaced or removed while it was read")

// corruption is openEntry's reason an entry is bad.
type corruption struct{ reason string }

func (e corruption) Error() string { return e.reason }

// entryReader is an entry opened for reading: its folder open and
// share-locked (a remover waits for it, eviction skips it), its engine
// open, its metadata read through the same folder, so the engine and the
// metadata are of one entry even when Replace swaps the entry meanwhile.
type entryReader struct {
	dir    *folder
	engine *os.File
	entry  Entry
	meta   []byte // the metadata file's bytes, as read
	closed bool
}

// openEntry opens k's entry folder, share-locks it, opens its engine and
// reads its metadata. A missing entry is errMiss. An entry that is not
// whole, or a link where its folder or one of its files belongs, is a
// corruption; then the reader is returned too, holding the folder it
// checked, for discard (nil when no folder was opened: a link or a file
// where it belongs). Damage found in a folder that is no longer at k's
// place is errMoved: another process moved it away meanwhile.
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
	if err := lockEntry(dir, unix.LOCK_SH); err != nil {
		r.close()
		return nil, fmt.Errorf("cache entry %s: lock: %w", c.entryDir(k), err)
	}
	at(c.hooks.opened, k)
	r.engine, r.entry, r.meta, err = readParts(dir, k)
	var bad corruption
	switch {
	case errors.As(err, &bad) && !shard.same(string(k), dir.f):
		r.close()
		return nil, errMoved
	case errors.As(err, &bad):
		return r, err
	case err != nil:
		r.close()
		return nil, err
	}
	return r, nil
}

// readParts opens the engine in dir (k's entry folder, share-locked by
// the caller), then reads the whole metadata and checks it against k and
// the engine's size. A part that is missing, a link, not a regular file,
// unreadable or inconsistent is a corruption. The engine is returned open
// unless there is an error, with the metadata's bytes as they are on disk.
func readParts(dir *folder, k Key) (*os.File, Entry, []byte, error) {
	engine, fi, err := dir.openRegular(engineName)
	if err != nil {
		return nil, Entry{}, nil, asCorruption(err, "its engine")
	}
	e, data, err := readMeta(dir, k, fi.Size())
	if err != nil {
		engine.Close()
		return nil, Entry{}, nil, err
	}
	return engine, e, data, nil
}

// asCorruption sorts an error opening part of an entry: a folder not
// there is a miss, a file not there a corruption; a link, or a file where
// a folder belongs, is a corruption; the rest stays an error.
func asCorruption(err error, what string) error {
	var link *linkError
	var odd *notRegularError
	switch {
	case isNotExist(err) && what == "its engine":
		return corruption{"its engine file is missing"}
	case isNotExist(err) && what == "its metadata":
		return corruption{"its metadata file (" + metaName + ") is missing"}
	case isNotExist(err):
		return errMiss
	case errors.As(err, &link):
		return corruption{fmt.Sprintf("%s is a symbolic link (to %s), never followed", what, link.Target)}
	case errors.Is(err, unix.ENOTDIR):
		return corruption{what + " is not a folder"}
	case errors.As(err, &odd):
		return corruption{fmt.Sprintf("%s is %s, not a file", what, odd.Kind)}
	}
	return err // no permission, too many open files: the entry may be fine
}

// entryHead is the metadata file without the original build's report
// entry: json skips over it rather than building its phase tree.
type entryHead struct {
	entryFile
	Original json.RawMessage `json:"original,omitempty"`
}

// readMeta reads the metadata in dir whole and checks it against k and
// the size of its engine file (engineSize); it returns the bytes it read
// too.
func readMeta(dir *folder, k Key, engineSize int64) (Entry, []byte, error) {
	f, fi, err := dir.openRegular(metaName)
	if err != nil {
		return Entry{}, nil, asCorruption(err, "its metadata")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetaBytes))
	if err != nil {
		return Entry{}, nil, corruption{fmt.Sprintf("its metadata is unreadable: %v", err)}
	}
	m, err := decodeMeta(data, true)
	if err != nil {
		return Entry{}, nil, err
	}
	e, err := checkDecoded(m, fi.ModTime(), fi.Size(), k, engineSize)
	return e, data, err
}

// decodeMeta decodes the metadata file's content: whole, or without the
// original build's report entry.
func decodeMeta(data []byte, whole bool) (entryFile, error) {
	var m entryFile
	var err error
	if whole {
		err = json.Unmarshal(data, &m)
	} else {
		var head entryHead
		err = json.Unmarshal(data, &head)
		m = head.entryFile
	}
	if err != nil {
		return entryFile{}, corruption{fmt.Sprintf("its metadata is not valid JSON: %v", err)}
	}
	return m, nil
}

// checkDecoded checks decoded metadata (its file modified at modTime,
// metaSize bytes) against k and the engine's size (below 0: not known, as
// when a listing finds no engine file). A corruption comes with what the
// metadata says.
func checkDecoded(m entryFile, modTime time.Time, metaSize int64, k Key, engineSize int64) (Entry, error) {
	e := m.Entry
	e.Key, e.LastUsed, e.DiskSize = k, modTime, entrySize(max(engineSize, 0), metaSize)
	switch {
	case m.Format != FormatVersion:
		return e, corruption{fmt.Sprintf("its metadata has format %d, not %d", m.Format, FormatVersion)}
	case m.Key != k:
		return e, corruption{fmt.Sprintf("its metadata names key %s", m.Key)}
	}
	if engineSize >= 0 {
		if reason := sizeMismatch(engineSize, m.Size); reason != "" {
			return e, corruption{reason}
		}
	}
	return e, nil
}

// sizeMismatch says how an engine's size differs from the one its
// metadata records, or "".
func sizeMismatch(engine, recorded int64) string {
	switch {
	case engine < recorded:
		return fmt.Sprintf("its engine has %d bytes, the entry says %d (cut short)", engine, recorded)
	case engine > recorded:
		return fmt.Sprintf("its engine has %d bytes, the entry says %d (longer: bytes were added)", engine, recorded)
	}
	return ""
}

// maxMetaBytes bounds what is read of a metadata file: one with a long
// phase tree is tens of kilobytes; anything near this is not ours.
const maxMetaBytes = 64 << 20

// close lets go of the entry: its engine, and its folder and the lock on
// it. Closing twice is no error.
func (r *entryReader) close() {
	if r.closed {
		return
	}
	r.closed = true
	if r.engine != nil {
		r.engine.Close()
	}
	r.dir.close() // releases the lock
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
// *CorruptError that says so; r holds the folder that was checked (nil
// when the check found a link, or a file, where a folder belongs). Only
// that folder is removed: when k's place holds another folder by now
// (another process replaced or removed it), nothing is, and the error is
// errMoved, for the caller to look again. A link in its place (or in its
// shard's) is removed as a link. r is closed.
func (c *Cache) discard(k Key, r *entryReader, reason string) error {
	if r != nil {
		defer r.close()
		at(c.hooks.bad, k)
	}
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
		e.Removed = root.removeLink(string(k[:2])) == nil
		return e
	}
	if err != nil {
		return e
	}
	defer shard.close()
	if r == nil { // a link or a file where the entry's folder belongs
		unlock := lockShard(shard)
		e.Removed = shard.removeLink(string(k)) == nil
		unlock()
		return e
	}
	st, err := c.moveOut(root, shard, string(k), r.dir)
	if errors.Is(err, errMoved) {
		return errMoved
	}
	r.close() // its shared lock: the removal waits for every reader's
	if err == nil {
		st.remove()
	}
	e.Removed = err == nil
	return e
}
