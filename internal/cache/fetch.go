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

// Fetch installs a copy of k's engine at dest: FetchFiles with the one
// file of a build without run:.
func (c *Cache) Fetch(k Key, dest string) (Entry, bool, error) {
	return c.FetchFiles(k, EngineDecl(dest, ""))
}

// FetchFiles installs a copy of each of k's files where the build puts
// it (want: the files the build declares, in order, each at its Local
// path), all of them or none: each through a partial file beside its path
// (a link or a folder there is refused, never written through), every
// copy's SHA-256 and size checked against the entry before the first is
// renamed into place, and the renames undone when one fails
// (atomicfile.InstallAll). A copy, never a link to the cache's file:
// editing one must not change the other (a reflink where the file system
// has them costs no space or time; deliver.go). A hit returns (entry,
// true, nil) and marks the entry used; a miss (zero, false, nil). A
// corrupt entry (a file missing, cut short or changed; files that are not
// the ones want declares) is removed and returned as (zero, false,
// *CorruptError): the caller warns and builds. Any other error (a path
// that cannot take its file) leaves the entry as it is, and the paths as
// they were.
//
// An entry replaced or removed by another process while it is read
// (cache.go: "Who may remove what") is read again from k's folder: the
// old entry or the new one is delivered whole, and neither is called
// corrupt for what the other did.
func (c *Cache) FetchFiles(k Key, want []Decl) (Entry, bool, error) {
	if err := checkKey(k); err != nil {
		return Entry{}, false, err
	}
	for range lookAgain {
		e, hit, err := c.fetchOnce(k, want)
		if !errors.Is(err, errMoved) {
			return e, hit, err
		}
	}
	return Entry{}, false, nil // replaced again and again while it was read: a miss
}

// lookAgain bounds how often a reader looks at k's folder again after the
// entry it opened was moved away (replaced or removed) under it.
const lookAgain = 3

func (c *Cache) fetchOnce(k Key, want []Decl) (Entry, bool, error) {
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
	if reason := otherFiles(r.entry.Files, want); reason != "" {
		return Entry{}, false, c.discard(k, r, reason)
	}
	staged := make([]atomicfile.Staged, 0, len(want))
	defer func() {
		for _, s := range staged {
			os.Remove(s.Tmp) // gone already once installed
		}
	}()
	for i, f := range r.entry.Files {
		tmp, sum, size, err := deliver(r.files[i], want[i].Local)
		if err != nil {
			return Entry{}, false, err
		}
		staged = append(staged, atomicfile.Staged{Tmp: tmp, Path: want[i].Local})
		if reason := fileMismatch(f, sum, size); reason != "" {
			return Entry{}, false, c.discard(k, r, reason)
		}
	}
	if err := atomicfile.InstallAll(staged); err != nil {
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
// share-locked (a remover waits for it, eviction skips it), its files
// open, its metadata read through the same folder, so the files and the
// metadata are of one entry even when Replace swaps the entry meanwhile.
type entryReader struct {
	dir    *folder
	files  []*os.File // entry.Files, in order
	entry  Entry
	meta   []byte // the metadata file's bytes, as read
	closed bool
}

// openEntry opens k's entry folder, share-locks it, reads its metadata
// and opens its files. A missing entry is errMiss. An entry that is not
// whole, or a link where its folder or one of its files belongs, is a
// corruption; then the reader is returned too, holding the folder it
// checked, for discard (nil when no folder was opened: a link or a file
// where it belongs). Damage found in a folder that is no longer at k's
// place is errMoved: another process moved it away meanwhile.
func (c *Cache) openEntry(k Key) (*entryReader, error) {
	root, err := c.openRoot(false)
	if err != nil {
		return nil, folderCorruption(err, "the cache's version folder")
	}
	defer root.close()
	shard, err := root.sub(string(k[:2]))
	if err != nil {
		return nil, folderCorruption(err, "the folder of its shard")
	}
	defer shard.close()
	dir, err := shard.sub(string(k))
	if err != nil {
		return nil, folderCorruption(err, "its folder")
	}
	r := &entryReader{dir: dir}
	if err := lockEntry(dir, unix.LOCK_SH); err != nil {
		r.close()
		return nil, fmt.Errorf("cache entry %s: lock: %w", c.entryDir(k), err)
	}
	at(c.hooks.opened, k)
	r.files, r.entry, r.meta, err = readParts(dir, k)
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

// readParts reads the whole metadata in dir (k's entry folder,
// share-locked by the caller) and checks it against k, then opens every
// file it lists and checks its size. A part that is missing, a link, not
// a regular file, unreadable or inconsistent is a corruption. The files
// are returned open unless there is an error, with the metadata's bytes
// as they are on disk.
func readParts(dir *folder, k Key) ([]*os.File, Entry, []byte, error) {
	e, data, err := readMeta(dir, k)
	if err != nil {
		return nil, Entry{}, nil, err
	}
	files := make([]*os.File, 0, len(e.Files))
	for _, f := range e.Files {
		file, fi, err := dir.openRegular(f.Name)
		if err == nil {
			if reason := sizeMismatch("its "+f.Name, fi.Size(), f.Size); reason != "" {
				file.Close()
				err = corruption{reason}
			}
		}
		if err != nil {
			closeAll(files)
			return nil, Entry{}, nil, fileCorruption(err, "its "+f.Name)
		}
		files = append(files, file)
	}
	return files, e, data, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// folderCorruption sorts an error opening a folder of an entry's path: a
// folder not there is a miss; a link, or a file where a folder belongs,
// is a corruption; the rest stays an error.
func folderCorruption(err error, what string) error {
	if isNotExist(err) {
		return errMiss
	}
	return asCorruption(err, what)
}

// fileCorruption sorts an error opening a file of an entry (what: "its
// engine", "its metadata"): a file not there is a corruption, and so is a
// link, a folder or anything else where a file belongs; the rest stays an
// error.
func fileCorruption(err error, what string) error {
	switch {
	case isNotExist(err) && what == "its metadata":
		return corruption{"its metadata file (" + metaName + ") is missing"}
	case isNotExist(err):
		return corruption{what + " file is missing"}
	}
	return asCorruption(err, what)
}

// asCorruption sorts an error opening part of an entry: a link, or a file
// where a folder belongs, is a corruption; the rest stays an error.
func asCorruption(err error, what string) error {
	var link *linkError
	var odd *notRegularError
	var bad corruption
	switch {
	case errors.As(err, &bad):
		return bad
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

// readMeta reads the metadata in dir whole and checks it against k; it
// returns the bytes it read too.
func readMeta(dir *folder, k Key) (Entry, []byte, error) {
	f, fi, err := dir.openRegular(metaName)
	if err != nil {
		return Entry{}, nil, fileCorruption(err, "its metadata")
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
	e, err := checkDecoded(m, fi.ModTime(), fi.Size(), k)
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
// metaSize bytes) against k: this format, this key, and a list of files
// an entry can have (checkFileList). A corruption comes with what the
// metadata says. The files' own sizes are the caller's to compare.
func checkDecoded(m entryFile, modTime time.Time, metaSize int64, k Key) (Entry, error) {
	e := m.Entry
	e.Key, e.LastUsed, e.DiskSize = k, modTime, entrySize(e.Bytes(), metaSize)
	switch {
	case m.Format != FormatVersion:
		return e, corruption{fmt.Sprintf("its metadata has format %d, not %d", m.Format, FormatVersion)}
	case m.Key != k:
		return e, corruption{fmt.Sprintf("its metadata names key %s", m.Key)}
	}
	if reason := checkFileList(m.Files); reason != "" {
		return e, corruption{reason}
	}
	return e, nil
}

// sizeMismatch says how a file's size differs from the one its metadata
// records (what: "its engine"), or "".
func sizeMismatch(what string, size, recorded int64) string {
	switch {
	case size < recorded:
		return fmt.Sprintf("%s has %d bytes, the entry says %d (cut short)", what, size, recorded)
	case size > recorded:
		return fmt.Sprintf("%s has %d bytes, the entry says %d (longer: bytes were added)", what, size, recorded)
	}
	return ""
}

// maxMetaBytes bounds what is read of a metadata file: one with a long
// phase tree is tens of kilobytes; anything near this is not ours.
const maxMetaBytes = 64 << 20

// close lets go of the entry: its files, and its folder and the lock on
// it. Closing twice is no error.
func (r *entryReader) close() {
	if r.closed {
		return
	}
	r.closed = true
	closeAll(r.files)
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
