package cache

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Staging: every folder in tmp/ is filled (a store) or emptied (a
// removal) by one process, which holds an exclusive flock on it for as
// long as it works there. The lock goes when the process does, kill -9
// included, so a folder nobody holds is a leftover, whatever its age and
// on whatever machine it was made (actions/cache carries tmp/ along): the
// next Open removes it. Where flock does not work on folders (some network
// file systems), a folder untouched for abandonedAfter is taken for a
// leftover instead.

// stage is a staging folder this process holds.
type stage struct {
	tmp  *folder // tmp/
	name string  // the folder's name in tmp/
	dir  *folder // the folder, flocked
}

// newStage makes and locks a fresh folder in tmp/ whose name starts with
// prefix ("store-", "remove-").
func (c *Cache) newStage(root *folder, prefix string) (*stage, error) {
	tmp, err := c.staging(root)
	if err != nil {
		return nil, err
	}
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		name := prefix + hex.EncodeToString(b[:])
		if err := unix.Mkdirat(tmp.fd(), name, 0o755); errors.Is(err, unix.EEXIST) {
			continue
		} else if err != nil {
			tmp.close()
			return nil, tmp.noFollow("mkdir", name, err)
		}
		dir, err := tmp.sub(name)
		if err != nil {
			_ = tmp.removeAll(name)
			tmp.close()
			return nil, err
		}
		at(c.hooks.staged, name)
		// Waiting: no other process works in the folder, but the
		// leftover check of any (unheld: an Open, an ls) may hold its lock
		// this instant, and lets go at once. Not waiting failed the store
		// with EWOULDBLOCK, a --rebuild's with an ls beside it.
		if err := flock(dir, unix.LOCK_EX); err != nil && !lockUnsupported(err) {
			dir.close()
			_ = tmp.removeAll(name)
			tmp.close()
			return nil, err
		}
		return &stage{tmp: tmp, name: name, dir: dir}, nil
	}
}

// remove removes the staging folder and whatever is left in it, then lets
// go of it.
func (s *stage) remove() {
	_ = removeStaged(s.tmp, s.name)
	s.dir.close()
	s.tmp.close()
}

func flock(d *folder, how int) error {
	for {
		err := unix.Flock(d.fd(), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// lockUnsupported is whether flock's error says it does not work here
// (rather than that someone holds the lock).
func lockUnsupported(err error) bool {
	return errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EBADF) ||
		errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS)
}

// abandonedAfter is how old a staging folder must be to be taken for a
// leftover where its lock cannot tell (flock unsupported).
const abandonedAfter = time.Hour

// lockGrace is how old an unlocked staging folder must be to be removed:
// a store locks its folder right after making it, and this keeps that
// moment from being mistaken for a leftover.
const lockGrace = time.Minute

// removeAbandoned removes the staging folders (and stray files) in tmp
// (tmp/, open) that no live process holds. A link in tmp/ is removed as a
// link; nothing is followed.
func (c *Cache) removeAbandoned(tmp *folder) {
	left, links := c.leftovers(tmp)
	for _, l := range left {
		_ = removeStaged(tmp, l)
	}
	for _, l := range links {
		_ = tmp.removeLink(l.name)
	}
}

// leftovers names the entries of tmp/ that no live process works in (a
// folder or a stray file), and the links there, which are never the
// cache's.
func (c *Cache) leftovers(tmp *folder) (left []string, links []Stray) {
	names, err := tmp.names()
	if err != nil {
		return nil, nil
	}
	for _, name := range names {
		st, err := tmp.lstat(name)
		if err != nil {
			continue
		}
		if st.isLink() {
			target, _ := readlinkat(tmp.fd(), name)
			links = append(links, Stray{Path: tmp.join(name), Target: target, name: name})
			continue
		}
		age := c.now().Sub(st.modTime)
		if st.mode.IsDir() {
			if abandoned, known := unheld(tmp, name); known {
				if abandoned && age > lockGrace {
					left = append(left, name)
				}
				continue
			}
		}
		// A file (a probe of a killed process), or a folder whose lock
		// cannot tell: by age.
		if age > abandonedAfter {
			left = append(left, name)
		}
	}
	return left, links
}

// unheld tries the staging folder's lock: abandoned when nobody holds it;
// known is false when flock does not work here. It holds the lock only for
// that look and waits for nothing meanwhile: newStage, which may be taking
// the lock of a folder it has just made, waits for it to let go.
func unheld(tmp *folder, name string) (abandoned, known bool) {
	d, err := tmp.sub(name)
	if err != nil {
		return false, false
	}
	defer d.close() // lets go of the lock taken here
	err = flock(d, unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, true
	case errors.Is(err, unix.EWOULDBLOCK):
		return false, true
	}
	return false, !lockUnsupported(err)
}
