package cache

import (
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
	dir      string
	size     int64 // engine and metadata
	lastUsed time.Time
}

// slots lists every entry folder, least recently used first.
func (c *Cache) slots() ([]slot, error) {
	shards, err := os.ReadDir(c.root)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []slot
	for _, shard := range shards {
		if !shard.IsDir() || len(shard.Name()) != 2 {
			continue // tmp/, and anything that is not ours
		}
		entries, err := os.ReadDir(filepath.Join(c.root, shard.Name()))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			k := Key(e.Name())
			if !e.IsDir() || !k.Valid() || string(k[:2]) != shard.Name() {
				continue
			}
			s := slot{key: k, dir: filepath.Join(c.root, shard.Name(), e.Name())}
			if fi, err := os.Stat(filepath.Join(s.dir, metaName)); err == nil {
				s.lastUsed, s.size = fi.ModTime(), fi.Size()
			}
			if fi, err := os.Stat(filepath.Join(s.dir, engineName)); err == nil {
				s.size += fi.Size()
			}
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b slot) int {
		return cmp.Or(a.lastUsed.Compare(b.lastUsed), cmp.Compare(a.key, b.key))
	})
	return out, nil
}

// List returns every entry whose metadata can be read, most recently used
// first. Entries that fail their check are left to Verify.
func (c *Cache) List() ([]Entry, error) {
	slots, err := c.slots()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(slots))
	for i := len(slots) - 1; i >= 0; i-- {
		if e, ok := readEntry(slots[i]); ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// readEntry reads a slot's metadata without checking the engine.
func readEntry(s slot) (Entry, bool) {
	data, err := os.ReadFile(filepath.Join(s.dir, metaName))
	if err != nil {
		return Entry{}, false
	}
	var m entryFile
	if json.Unmarshal(data, &m) != nil || m.Format != FormatVersion || m.Key != s.key {
		return Entry{}, false
	}
	m.Entry.LastUsed = s.lastUsed
	return m.Entry, true
}

// Prune removes entries by rule, least recently used first, and returns
// them. An entry another process is reading (its engine share-locked) is
// skipped, never removed; the cache may then stay above MaxSize until the
// next prune. A read-only cache returns ErrReadOnly.
func (c *Cache) Prune(rule PruneRule) ([]Entry, error) {
	if c.readOnly {
		return nil, ErrReadOnly
	}
	slots, err := c.slots()
	if err != nil {
		return nil, err
	}
	var total int64
	for _, s := range slots {
		total += s.size
	}
	var removed []Entry
	for _, s := range slots {
		tooOld := rule.UnusedFor > 0 && c.now().Sub(s.lastUsed) > rule.UnusedFor
		tooBig := rule.MaxSize > 0 && total > rule.MaxSize
		if !tooOld && !tooBig {
			continue
		}
		e, ok := readEntry(s)
		if !ok {
			e = Entry{Key: s.key, Size: s.size, LastUsed: s.lastUsed}
		}
		gone, err := c.evict(s)
		if err != nil {
			return removed, err
		}
		if gone {
			c.stored.removed(s.key)
			total -= s.size
			removed = append(removed, e)
		}
	}
	return removed, nil
}

// evict removes one entry unless a reader holds it: it takes the engine's
// lock exclusively without waiting, and renames the folder away while it
// holds it. false when the entry is in use (or already gone).
func (c *Cache) evict(s slot) (bool, error) {
	f, err := os.Open(filepath.Join(s.dir, engineName))
	switch {
	case isNotExist(err):
		// No engine: a broken entry nobody can be reading.
		if err := c.removeEntryDir(s.dir); err != nil && !isNotExist(err) {
			return false, err
		}
		return true, nil
	case err != nil:
		return false, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	if !sameFile(f, filepath.Join(s.dir, engineName)) {
		return false, nil // someone else removed it meanwhile
	}
	if err := c.removeEntryDir(s.dir); err != nil {
		if isNotExist(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
