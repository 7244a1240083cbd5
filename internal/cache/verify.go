package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// Verify checks every entry: its metadata reads, each of its files has the
// size and SHA-256 the metadata gives, and neither they nor its folder is
// a link.
// A bad entry is removed (as Fetch would: a bad entry can only cost a
// build) unless the cache is read-only, and returned; so is every stray
// (a link where an entry or a shard belongs: the link is removed). Entries
// in use by another process are checked under the same shared lock a
// reader takes, and an entry replaced while it is checked is checked
// again: only the folder found bad is ever removed. checked is how many
// entries were checked, good or bad (not those removed, or replaced again
// and again, while Verify went through the cache).
func (c *Cache) Verify() (checked int, bad []*CorruptError, err error) {
	root, err := c.openRoot(false)
	if isNotExist(err) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	defer root.close()
	slots, strays, err := c.scan(root)
	if err != nil {
		return 0, nil, err
	}
	for _, s := range strays {
		e := &CorruptError{Key: Key(s.name), Path: s.Path, Reason: fmt.Sprintf("it is a symbolic link (to %s), never followed", s.Target)}
		if !c.readOnly {
			e.Removed = c.removeStray(root, s) == nil
		}
		bad = append(bad, e)
	}
	for _, s := range slots {
		for range lookAgain {
			err = c.check(s.entry.Key)
			if !errors.Is(err, errMoved) {
				break
			}
		}
		var corrupt *CorruptError
		switch {
		case errors.Is(err, errMiss): // removed since the listing
		case errors.Is(err, errMoved): // replaced again and again while checked: nothing to say of it
		case errors.As(err, &corrupt):
			checked++
			bad = append(bad, corrupt)
		case err != nil:
			return checked, bad, err
		default:
			checked++
		}
	}
	return checked, bad, nil
}

// check checks k's entry and discards it when it is bad: nil when it is
// good, errMiss when it is gone (removed since the listing), a
// *CorruptError when it was bad, errMoved when it was replaced or removed
// while it was checked.
func (c *Cache) check(k Key) error {
	r, err := c.openEntry(k)
	var bad corruption
	switch {
	case errors.Is(err, errMiss):
		return err
	case errors.As(err, &bad):
		return c.discard(k, r, bad.reason)
	case err != nil:
		return err
	}
	defer r.close()
	for i, f := range r.entry.Files {
		h := sha256.New()
		n, err := io.CopyBuffer(h, io.NewSectionReader(r.files[i], 0, 1<<62), make([]byte, copyBuffer))
		if err != nil {
			return c.discard(k, r, fmt.Sprintf("its %s is unreadable: %v", f.Name, err))
		}
		if reason := fileMismatch(f, hex.EncodeToString(h.Sum(nil)), n); reason != "" {
			return c.discard(k, r, reason)
		}
	}
	return nil
}
