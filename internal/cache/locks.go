package cache

import (
	"errors"

	"golang.org/x/sys/unix"
)

// The locks that keep readers and removers of entries apart; cache.go
// says which operation takes which and why that is enough.

// lockShard takes the shard folder's exclusive lock, waiting for it, and
// returns its release. Whoever changes what is at an entry's place in the
// shard (an install, a replacement, a removal) holds it, and never waits
// for another lock while it does. Where flock does not work on folders
// (some network file systems) it is not taken.
func lockShard(shard *folder) (unlock func()) {
	if err := flock(shard, unix.LOCK_EX); err != nil {
		return func() {}
	}
	return func() { _ = flock(shard, unix.LOCK_UN) }
}

// lockEntry takes how (unix.LOCK_SH for a reader, LOCK_EX for a remover,
// with LOCK_NB not to wait) on an entry folder. Where flock does not work
// it is no error: the entry is used without it.
func lockEntry(dir *folder, how int) error {
	if err := flock(dir, how); err != nil && !lockUnsupported(err) {
		return err
	}
	return nil
}

// moveOut moves the entry folder name out of shard into a new staging
// folder of its own, under the shard's lock, and returns that stage for
// the caller to remove (stage.remove) once it has let go of its own lock
// on the folder. With opened, only that folder is moved: when name is
// another folder by now (replaced, or removed and stored again), nothing
// is, and the error is errMoved.
func (c *Cache) moveOut(root, shard *folder, name string, opened *folder) (*stage, error) {
	unlock := lockShard(shard)
	defer unlock()
	return c.moveOutLocked(root, shard, name, opened)
}

// moveOutLocked is moveOut for a caller that holds the shard's lock.
func (c *Cache) moveOutLocked(root, shard *folder, name string, opened *folder) (*stage, error) {
	if opened != nil && !shard.same(name, opened.f) {
		return nil, errMoved
	}
	st, err := c.newStage(root, "remove-")
	if err != nil {
		return nil, err
	}
	if err := shard.rename(name, st.dir, stagedName); err != nil {
		st.remove()
		return nil, err
	}
	return st, nil
}

// removeStaged removes the staging folder name in tmp and all in it. An
// entry in it (one replaced, evicted or found corrupt) is locked
// exclusively first: a reader that opened it at its key's place before it
// was moved here reads it whole, and the removal waits for it.
func removeStaged(tmp *folder, name string) error {
	if st, err := tmp.sub(name); err == nil {
		if entry, err := st.sub(stagedName); err == nil {
			_ = lockEntry(entry, unix.LOCK_EX)
			err := st.removeAll(stagedName)
			entry.close()
			if err != nil && !errors.Is(err, unix.ENOENT) {
				st.close()
				return err
			}
		}
		st.close()
	}
	return tmp.removeAll(name)
}
