package cache

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// PruneRule says which entries Prune removes. Zero fields do not apply.
type PruneRule struct {
	MaxSize   int64         // remove least recently used entries until the cache holds at most this many bytes
	UnusedFor time.Duration // remove entries not used for this long
}

// slot is an entry as the folder listing sees it, before its metadata is read.
type slot struct {
	key      Key
	size     int64 // entrySize of its engine and metadata
	lastUsed time.Time
}

// Stray is something in the cache's folders that is not the cache's: a
// symbolic link where a shard's folder or an entry's folder belongs. It is
// never followed. cache ls reports it; prune and verify remove it (the
// link itself).
type Stray struct {
	Path   string
	Target string // what the link names
	parent string // its shard's name, or "" for a shard itself
	name   string
}

func (s Stray) String() string {
	return fmt.Sprintf("%s is a symbolic link (to %s), not an entry; trt-action never follows a link inside its cache", s.Path, s.Target)
}

// scan lists every entry folder in root, least recently used first, and
// the strays it met.
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
		return cmp.Or(a.lastUsed.Compare(b.lastUsed), cmp.Compare(a.key, b.key))
	})
	return out, strays, nil
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
		dir, err := shard.sub(n)
		var link *linkError
		switch {
		case errors.As(err, &link):
			strays = append(strays, Stray{Path: link.Path, Target: link.Target, parent: name, name: n})
			continue
		case err != nil:
			continue // a file with a key's name, or gone meanwhile: not an entry
		}
		s := slot{key: k}
		var engine, meta int64
		if st, err := dir.lstat(metaName); err == nil && st.mode.IsRegular() {
			s.lastUsed, meta = st.modTime, st.size
		}
		if st, err := dir.lstat(engineName); err == nil && st.mode.IsRegular() {
			engine = st.size
		}
		dir.close()
		s.size = entrySize(engine, meta)
		out = append(out, s)
	}
	return out, strays, nil
}

// Listing is what List finds in the cache.
type Listing struct {
	Entries []Entry // every entry whose metadata can be read, most recently used first
	Strays  []Stray
	// Leftovers is how many staging folders in tmp/ no live process
	// holds (a store or a removal killed part way); the next build, prune
	// or verify removes them. They are never entries.
	Leftovers int
}

// List returns every entry whose metadata can be read, most recently used
// first, and the strays. Entries that fail their check are left to Verify.
// It changes nothing.
func (c *Cache) List() (Listing, error) {
	root, err := c.openRoot(false)
	if isNotExist(err) {
		return Listing{}, nil
	}
	if err != nil {
		return Listing{}, err
	}
	defer root.close()
	slots, strays, err := c.scan(root)
	if err != nil {
		return Listing{}, err
	}
	l := Listing{Entries: make([]Entry, 0, len(slots)), Strays: strays}
	for i := len(slots) - 1; i >= 0; i-- {
		if e, ok := readEntry(root, slots[i]); ok {
			l.Entries = append(l.Entries, e)
		}
	}
	if tmp, err := root.sub(tmpName); err == nil {
		l.Leftovers = len(c.leftovers(tmp))
		tmp.close()
	}
	return l, nil
}

// readEntry reads a slot's metadata without checking the engine.
func readEntry(root *folder, s slot) (Entry, bool) {
	shard, err := root.sub(string(s.key[:2]))
	if err != nil {
		return Entry{}, false
	}
	defer shard.close()
	dir, err := shard.sub(string(s.key))
	if err != nil {
		return Entry{}, false
	}
	defer dir.close()
	f, err := dir.openRegular(metaName)
	if err != nil {
		return Entry{}, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMetaBytes))
	var m entryFile
	if err != nil || json.Unmarshal(data, &m) != nil || m.Format != FormatVersion || m.Key != s.key {
		return Entry{}, false
	}
	m.Entry.LastUsed, m.Entry.DiskSize = s.lastUsed, s.size
	return m.Entry, true
}

// Pruned is what Prune removed.
type Pruned struct {
	Entries []Entry // by rule, least recently used first
	Strays  []Stray // links where entries belong, always removed
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
	root, err := c.openRoot(false)
	if isNotExist(err) {
		return Pruned{}, 0, nil
	}
	if err != nil {
		return Pruned{}, 0, err
	}
	defer root.close()
	unlock, err := c.lockPrune(root)
	if err != nil {
		return Pruned{}, 0, err
	}
	defer unlock()
	slots, strays, err := c.scan(root)
	if err != nil {
		return Pruned{}, 0, err
	}
	for _, s := range strays {
		if err := c.removeStray(root, s); err != nil {
			return done, own, err
		}
		done.Strays = append(done.Strays, s)
	}
	var total int64
	for _, s := range slots {
		total += s.size
	}
	for _, s := range slots {
		tooOld := rule.UnusedFor > 0 && c.now().Sub(s.lastUsed) > rule.UnusedFor
		tooBig := rule.MaxSize > 0 && total > rule.MaxSize
		if !tooOld && !tooBig {
			continue
		}
		e, ok := readEntry(root, s)
		if !ok {
			e = Entry{Key: s.key, LastUsed: s.lastUsed, DiskSize: s.size}
		}
		result, err := c.evict(root, s)
		if err != nil {
			return done, own, err
		}
		switch result {
		case evicted:
			if c.stored.removed(s.key) {
				own++
			}
			total -= s.size
			done.Entries = append(done.Entries, e)
		case goneAlready:
			// Another prune (a store of another build or process) took
			// it: it counts no more, or two prunes that listed the same
			// entries would each remove enough for the whole excess.
			total -= s.size
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
		if err := root.removeAll(pruneLock); err != nil {
			return nil, err
		}
		c.notify(fmt.Sprintf("removed %s", link.Error()))
		f, err = root.open(pruneLock, unix.O_RDWR|unix.O_CREAT, 0o644)
	}
	if err != nil {
		return nil, err
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

// removeStray removes a stray link (the link only).
func (c *Cache) removeStray(root *folder, s Stray) error {
	if s.parent == "" {
		return root.removeAll(s.name)
	}
	shard, err := root.sub(s.parent)
	if err != nil {
		return err
	}
	defer shard.close()
	st, err := shard.lstat(s.name)
	if err != nil || !st.isLink() {
		return nil // gone, or replaced by a real entry meanwhile
	}
	return shard.removeAll(s.name)
}

// evictResult is what evict did with one entry.
type evictResult int

const (
	inUse       evictResult = iota // a reader holds it: kept
	evicted                        // removed here
	goneAlready                    // removed or replaced by someone else since the listing
)

// evict removes one entry unless a reader holds it: it takes the engine's
// lock exclusively without waiting, and moves the folder away while it
// holds it.
func (c *Cache) evict(root *folder, s slot) (evictResult, error) {
	shard, err := root.sub(string(s.key[:2]))
	if err != nil {
		return goneAlready, nil
	}
	defer shard.close()
	dir, err := shard.sub(string(s.key))
	if err != nil {
		return goneAlready, nil
	}
	defer dir.close()
	f, err := dir.open(engineName, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	switch {
	case isNotExist(err) || errors.As(err, new(*linkError)):
		// No engine (or a link in its place): a broken entry nobody can
		// be reading.
		if err := c.removeEntry(root, shard, string(s.key)); err != nil {
			if isNotExist(err) {
				return goneAlready, nil
			}
			return inUse, err
		}
		return evicted, nil
	case err != nil:
		return inUse, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return inUse, nil
		}
		return inUse, err
	}
	if !shard.same(string(s.key), dir.f) || !dir.same(engineName, f) {
		return goneAlready, nil // replaced or removed meanwhile
	}
	if err := c.removeEntry(root, shard, string(s.key)); err != nil {
		if isNotExist(err) {
			return goneAlready, nil
		}
		return inUse, err
	}
	return evicted, nil
}
