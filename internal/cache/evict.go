package cache

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/atomicfile"
)

// PruneRule says which entries Prune removes. Zero fields do not apply.
type PruneRule struct {
	MaxSize   int64         // remove least recently used entries until the cache holds at most this many bytes
	UnusedFor time.Duration // remove entries not used for this long
	// OtherFormats removes the folders of older cache formats, which this
	// version never reads (formats.go).
	OtherFormats bool
}

// slot is an entry folder as the listing found it.
type slot struct {
	// entry is what its metadata says (without the original build's
	// phase tree), with Key, LastUsed and DiskSize; for a broken entry
	// what could be read, and Broken.
	entry    Entry
	dev, ino uint64 // the folder listed: eviction removes only this one
}

// Stray is something in the cache's folders that is not the cache's: a
// symbolic link where a shard's folder or an entry's folder belongs, or in
// the staging folder. It is never followed. cache ls reports it; prune and
// verify remove it (the link itself).
type Stray struct {
	Path   string
	Target string // what the link names
	parent string // its shard's name, or "" for a shard itself
	name   string
}

// scan lists every entry folder in root, as a reader checks it but for
// the engine's hash: the one listing behind cache ls, prune and max-size.
// Broken entries (they can never be served) come first, then the rest,
// least recently used first; strays are the links it met.
func (c *Cache) scan(root *folder) ([]slot, []Stray, error) {
	shards, err := root.names()
	if err != nil {
		return nil, nil, err
	}
	var out []slot
	var strays []Stray
	for _, name := range shards {
		if len(name) != 2 || name == tmpName {
			continue // tmp/, and anything that is not ours
		}
		shard, err := root.sub(name)
		var link *linkError
		switch {
		case errors.As(err, &link):
			strays = append(strays, Stray{Path: link.Path, Target: link.Target, name: name})
			continue
		case errors.Is(err, unix.ENOTDIR) || isNotExist(err):
			continue
		case err != nil:
			return nil, nil, err
		}
		s, st, err := c.scanShard(shard, name)
		shard.close()
		if err != nil {
			return nil, nil, err
		}
		out, strays = append(out, s...), append(strays, st...)
	}
	slices.SortFunc(out, func(a, b slot) int {
		return cmp.Or(cmp.Compare(healthy(a), healthy(b)),
			a.entry.LastUsed.Compare(b.entry.LastUsed), cmp.Compare(a.entry.Key, b.entry.Key))
	})
	return out, strays, nil
}

// healthy orders broken entries (0) before the rest (1).
func healthy(s slot) int {
	if s.entry.Broken != "" {
		return 0
	}
	return 1
}

// scanShard lists the entry folders (and strays) of one shard.
func (c *Cache) scanShard(shard *folder, name string) ([]slot, []Stray, error) {
	names, err := shard.names()
	if err != nil {
		return nil, nil, err
	}
	var out []slot
	var strays []Stray
	for _, n := range names {
		k := Key(n)
		if !k.Valid() || string(k[:2]) != name {
			continue
		}
		s, err := c.inspectAgain(shard, k)
		var link *linkError
		switch {
		case errors.As(err, &link):
			strays = append(strays, Stray{Path: link.Path, Target: link.Target, parent: name, name: n})
		case errors.Is(err, errMiss) || errors.Is(err, errMoved):
			// a file with a key's name, gone meanwhile, or replaced again
			// and again while it was looked at: not an entry to list
		case err != nil:
			return nil, nil, err
		default:
			out = append(out, s)
		}
	}
	return out, strays, nil
}

// inspectAgain is inspect, looked at again when the folder was moved
// away (replaced or removed) while it was looked at.
func (c *Cache) inspectAgain(shard *folder, k Key) (s slot, err error) {
	for range lookAgain {
		if s, err = c.inspect(shard, k); !errors.Is(err, errMoved) {
			break
		}
	}
	return s, err
}

// inspect looks at k's entry folder in shard, with the checks a reader
// makes but for the engine's hash, from the folder's names alone: cheaper
// than a reader's opens (every store under a max-size lists the cache).
// A broken entry is no error: its slot says why (Broken) and what is
// known of it (the sizes of the parts that are regular files, the
// metadata's time, what the metadata says when it could be read). A link
// where the folder belongs is a *linkError; no folder, errMiss; damage
// found in a folder another process moved away meanwhile (to remove it:
// cache.go, rule 4), errMoved.
func (c *Cache) inspect(shard *folder, k Key) (slot, error) {
	dir, err := shard.sub(string(k))
	if err != nil {
		if isNotExist(err) || errors.Is(err, unix.ENOTDIR) {
			return slot{}, errMiss
		}
		return slot{}, err
	}
	defer dir.close()
	dev, ino, _ := identity(dir.f)
	s := slot{dev: dev, ino: ino}
	e, err := c.listParts(dir, k)
	var bad corruption
	switch {
	case err == nil:
		s.entry = e
		return s, nil
	case !errors.As(err, &bad):
		return s, err
	case !shard.same(string(k), dir.f):
		return s, errMoved
	}
	s.entry = e
	s.entry.Key, s.entry.Broken = k, bad.reason
	return s, nil
}

// listParts is readParts for a listing: the files are looked at (lstat)
// rather than opened, the metadata read without an *os.File. On a
// corruption the entry has what is known: what its folder's files hold on
// disk, the metadata's time, and what it says when it decoded.
func (c *Cache) listParts(dir *folder, k Key) (Entry, error) {
	meta, err := dir.lstat(metaName)
	var e Entry
	if err = partError(dir, metaName, meta, err); err == nil {
		var m entryFile
		if m, err = c.heads.decode(dir, meta); err == nil {
			e, err = checkDecoded(m, meta.modTime, meta.size, k)
		}
	} else {
		err = fileCorruption(err, "its metadata")
	}
	for i := 0; err == nil && i < len(e.Files); i++ {
		err = listFile(dir, e.Files[i])
	}
	if err == nil {
		return e, nil
	}
	if _, bad := err.(corruption); !bad {
		return Entry{}, err
	}
	e.Key = k
	e.DiskSize = dir.filesSize() // what it holds, whatever its metadata says
	if meta.mode.IsRegular() {
		e.LastUsed = meta.modTime
	}
	return e, err
}

// listFile checks, with lstat, one file an entry's metadata lists: a
// regular file of the size it gives.
func listFile(dir *folder, f File) error {
	st, err := dir.lstat(f.Name)
	if err = partError(dir, f.Name, st, err); err != nil {
		return fileCorruption(err, "its "+f.Name)
	}
	if reason := sizeMismatch("its "+f.Name, st.size, f.Size); reason != "" {
		return corruption{reason}
	}
	return nil
}

// headMemo remembers what each metadata file decoded to, by its device,
// inode, size and modification time, so the listing every store under a
// max-size makes reads only the metadata that changed since the last
// (most of the listing's cost is JSON: BENCHMARKS.md). trt-action never
// rewrites a metadata file; marking it used changes its time, and so does
// any write to it.
type headMemo struct {
	mu    sync.Mutex
	heads map[metaID]decoded
}

type metaID struct {
	dev, ino uint64
	size     int64
	mtimeNs  int64
}

type decoded struct {
	m   entryFile
	err error
}

// decode returns what the metadata file in dir, which lstat found to be
// st (a regular file), decodes to.
func (h *headMemo) decode(dir *folder, st stat) (entryFile, error) {
	id := metaID{st.dev, st.ino, st.size, st.modTime.UnixNano()}
	h.mu.Lock()
	d, ok := h.heads[id]
	h.mu.Unlock()
	if ok {
		return d.m, d.err
	}
	data, err := readSmall(dir, metaName)
	if err != nil {
		return entryFile{}, fileCorruption(err, "its metadata") // not remembered: it may read next time
	}
	d.m, d.err = decodeMeta(data, false)
	h.mu.Lock()
	if h.heads == nil {
		h.heads = map[metaID]decoded{}
	}
	h.heads[id] = d
	h.mu.Unlock()
	return d.m, d.err
}

// partError is what opening name, which lstat found to be st (or err),
// for reading would say: a *linkError for a link, a *notRegularError for
// anything else that is not a regular file, nil for a regular file.
func partError(dir *folder, name string, st stat, err error) error {
	switch {
	case err != nil:
		return err
	case st.isLink():
		target, _ := readlinkat(dir.fd(), name)
		return &linkError{Path: dir.join(name), Target: target}
	case !st.mode.IsRegular():
		return &notRegularError{Path: dir.join(name), Kind: atomicfile.FileKind(st.mode)}
	}
	return nil
}

// readSmall reads the regular file name in dir whole (at most
// maxMetaBytes), without following a link and without an *os.File.
func readSmall(dir *folder, name string) ([]byte, error) {
	fd, err := unix.Openat(dir.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, dir.noFollow("open", name, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: dir.join(name), Err: err}
	}
	if s := statOf(&st); !s.mode.IsRegular() {
		return nil, &notRegularError{Path: dir.join(name), Kind: atomicfile.FileKind(s.mode)}
	}
	buf := make([]byte, 0, min(st.Size+1, maxMetaBytes))
	for int64(len(buf)) < maxMetaBytes {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: dir.join(name), Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}

// Listing is what List finds in the cache.
type Listing struct {
	// Entries are every entry folder, most recently used first, then the
	// broken ones (Broken says why: they can never be served). DiskSize
	// is what each counts against max-size.
	Entries []Entry
	Strays  []Stray // links where a shard's or an entry's folder belongs
	// Leftovers is how many staging folders in tmp/ no live process
	// holds (a store or a removal killed part way); the next build, prune
	// or verify removes them. They are never entries.
	Leftovers int
	// StagingLinks are links in tmp/: never the cache's, removed (the
	// link) by the next build, prune or verify.
	StagingLinks []Stray
	// OtherFormats are the folders of other cache formats beside this
	// one's, never read; prune --other-formats removes the older ones.
	OtherFormats []OtherFormat
}

// List returns every entry, most recently used first, then the broken
// ones, and the strays: what prune and max-size count. It changes
// nothing.
func (c *Cache) List() (Listing, error) {
	top, err := openTop(c.dir)
	if err != nil {
		return Listing{}, err
	}
	defer top.close()
	others, err := otherFormats(top, false)
	if err != nil {
		return Listing{}, err
	}
	root, err := top.sub(versionName)
	if isNotExist(err) {
		return Listing{OtherFormats: others}, nil
	}
	if err != nil {
		return Listing{}, err
	}
	defer root.close()
	slots, strays, err := c.scan(root)
	if err != nil {
		return Listing{}, err
	}
	l := Listing{Entries: make([]Entry, 0, len(slots)), Strays: strays, OtherFormats: others}
	for i := len(slots) - 1; i >= 0; i-- {
		if slots[i].entry.Broken == "" {
			l.Entries = append(l.Entries, slots[i].entry)
		}
	}
	for _, s := range slots {
		if s.entry.Broken != "" {
			l.Entries = append(l.Entries, s.entry)
		}
	}
	if tmp, err := root.sub(tmpName); err == nil {
		left, links := c.leftovers(tmp)
		l.Leftovers, l.StagingLinks = len(left), links
		tmp.close()
	}
	return l, nil
}

// Pruned is what Prune removed.
type Pruned struct {
	Entries []Entry       // by rule, least recently used first
	Strays  []Stray       // links where entries belong, always removed
	Formats []OtherFormat // folders of older formats, for PruneRule.OtherFormats
}

// Prune removes entries by rule, least recently used first, and every
// stray (the link, never what it names). An entry another process is
// reading (its engine share-locked) is skipped, never removed; the cache
// may then stay above MaxSize until the next prune. A read-only cache
// returns ErrReadOnly.
func (c *Cache) Prune(rule PruneRule) (Pruned, error) {
	done, _, err := c.prune(rule)
	return done, err
}

// prune is Prune, which also counts the entries it removed that this
// Cache stored.
func (c *Cache) prune(rule PruneRule) (done Pruned, own int, err error) {
	if c.readOnly {
		return Pruned{}, 0, ErrReadOnly
	}
	if rule.OtherFormats {
		if done.Formats, err = c.pruneFormats(); err != nil {
			return done, 0, err
		}
	}
	root, err := c.openRoot(false)
	if isNotExist(err) {
		return done, 0, nil
	}
	if err != nil {
		return done, 0, err
	}
	defer root.close()
	unlock, err := c.lockPrune(root)
	if err != nil {
		return done, 0, err
	}
	defer unlock()
	slots, strays, err := c.scan(root)
	if err != nil {
		return done, 0, err
	}
	at(c.hooks.listed, struct{}{})
	for _, s := range strays {
		if err := c.removeStray(root, s); err != nil {
			return done, own, err
		}
		done.Strays = append(done.Strays, s)
	}
	var total int64
	for _, s := range slots {
		total += s.entry.DiskSize
	}
	for _, s := range slots {
		broken := s.entry.Broken != "" // it can never be served: first to go, whatever the rule
		tooOld := rule.UnusedFor > 0 && c.now().Sub(s.entry.LastUsed) > rule.UnusedFor
		tooBig := rule.MaxSize > 0 && total > rule.MaxSize
		if !broken && !tooOld && !tooBig {
			continue
		}
		result, err := c.evict(root, s)
		if err != nil {
			return done, own, err
		}
		switch result {
		case evicted:
			if c.stored.removed(s.entry.Key) {
				own++
			}
			total -= s.entry.DiskSize
			done.Entries = append(done.Entries, s.entry)
		case goneAlready:
			// Another prune (a store of another build or process) took
			// it: it counts no more, or two prunes that listed the same
			// entries would each remove enough for the whole excess.
			total -= s.entry.DiskSize
		}
	}
	return done, own, nil
}

// pruneLock is the file whose flock makes prunes take turns, in this
// process and across processes: two prunes that each listed the cache
// before the other removed anything would each remove the whole excess,
// and stores that run side by side would empty a cache that has room for
// one of them.
const pruneLock = "prune.lock"

// lockPrune waits for the prune lock and returns its release. Where flock
// does not work, prunes go on without it.
func (c *Cache) lockPrune(root *folder) (func(), error) {
	f, err := root.open(pruneLock, unix.O_RDWR|unix.O_CREAT, 0o644)
	var link *linkError
	if errors.As(err, &link) { // not the cache's: remove the link, make the file
		if err := root.removeLink(pruneLock); err != nil {
			return nil, err
		}
		c.notify(link.removed("lock file"))
		f, err = root.open(pruneLock, unix.O_RDWR|unix.O_CREAT, 0o644)
	}
	if err != nil {
		// Something other than a file or a link is there (a folder, say):
		// not the cache's, and not for a prune to remove.
		return nil, fmt.Errorf("cache: cannot take the prune lock %s: %w; remove what is there (trt-action makes the file again)",
			filepath.Join(c.root, pruneLock), err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil && !lockUnsupported(err) {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// removeStray removes a stray link (the link only; a folder made in its
// place meanwhile stays).
func (c *Cache) removeStray(root *folder, s Stray) error {
	if s.parent == "" {
		return ignoreFolder(root.removeLink(s.name))
	}
	shard, err := root.sub(s.parent)
	if err != nil {
		return err
	}
	defer shard.close()
	unlock := lockShard(shard)
	defer unlock()
	return ignoreFolder(shard.removeLink(s.name))
}

// ignoreFolder is removeLink's error, but for a folder found where a link
// was (a real entry or shard made there since): it stays, and that is no
// error.
func ignoreFolder(err error) error {
	if errors.Is(err, unix.EISDIR) {
		return nil
	}
	return err
}

// evictResult is what evict did with one entry.
type evictResult int

const (
	inUse       evictResult = iota // a reader holds it: kept
	evicted                        // removed here
	goneAlready                    // removed or replaced by someone else since the listing
)

// evict removes the entry folder the listing found (s), unless a reader
// holds it: it takes the folder's lock exclusively without waiting, and
// moves the folder out of its key's place only while that place is still
// this very folder (moveOut), so an entry stored or replaced since the
// listing is never evicted in its stead.
func (c *Cache) evict(root *folder, s slot) (evictResult, error) {
	k := string(s.entry.Key)
	shard, err := root.sub(k[:2])
	if err != nil {
		return goneAlready, nil
	}
	defer shard.close()
	dir, err := shard.sub(k)
	if err != nil {
		return goneAlready, nil
	}
	if dev, ino, ok := identity(dir.f); !ok || dev != s.dev || ino != s.ino {
		dir.close()
		return goneAlready, nil // replaced since the listing
	}
	if err := lockEntry(dir, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		dir.close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return inUse, nil
		}
		return inUse, err
	}
	st, err := c.moveOut(root, shard, k, dir)
	dir.close() // its lock: the removal takes it again, after readers that opened it before the move
	switch {
	case errors.Is(err, errMoved) || isNotExist(err):
		return goneAlready, nil
	case err != nil:
		return inUse, err
	}
	st.remove()
	return evicted, nil
}
