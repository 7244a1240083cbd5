// Package runtmp makes the private temporary folders a run needs (the
// Python hook script builds load, a script build's hook socket) and
// removes those a run left when it died without removing its own (kill -9,
// an out-of-memory kill, a power cut).
//
// Whose folder is whose is known by a lock, not by a process id (which the
// system reuses): each folder holds a file named "lock" on which the run
// that made it holds an exclusive flock(2) for as long as it uses the
// folder. The system releases the lock when the run's process ends, however
// it ends, and the run's children never hold it (the file is opened
// close-on-exec). So a folder whose lock can be taken belongs to no live
// run, and Sweep removes it. The lock file is locked under another name
// and then renamed into place, so a folder a live run is making is never
// found with an unlocked lock; a folder without one is left alone.
//
// Sweep looks only at this user's folders of the names this package
// makes, opens nothing through a link, and never waits for a lock.
package runtmp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The names of trt-action's temporary folders, each followed by a random
// part (os.MkdirTemp).
const (
	HookPrefix   = "trt-action-hook-"   // the Python hook of a run with script builds
	ScriptPrefix = "trt-action-script-" // a script build's hook socket
)

// prefixes are every name Sweep looks for.
var prefixes = []string{HookPrefix, ScriptPrefix}

// lockName is the lock file in each folder; pendingLock is its name until
// it is locked.
const (
	lockName    = "lock"
	pendingLock = "lock.new"
)

// Dir is a private temporary folder this process holds.
type Dir struct {
	Path string
	lock *os.File
}

// Make makes a folder only this user can use (0700), named prefix and a
// random part, in the system's temporary folder, and holds its lock until
// Remove.
func Make(prefix string) (*Dir, error) {
	path, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	lock, err := takeLock(path)
	if err != nil {
		_ = os.RemoveAll(path)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Dir{Path: path, lock: lock}, nil
}

// takeLock makes dir's lock file, locked: under pendingLock, renamed to
// lockName once the lock is held.
func takeLock(dir string) (*os.File, error) {
	pending := filepath.Join(dir, pendingLock)
	f, err := os.OpenFile(pending, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := os.Rename(pending, filepath.Join(dir, lockName)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Remove removes the folder and all in it, then lets go of its lock.
func (d *Dir) Remove() error {
	err := os.RemoveAll(d.Path)
	d.lock.Close()
	return err
}

// Sweep removes the folders of runs that are gone from the system's
// temporary folder, and returns their paths. Only folders (not links) of
// this user named as Make names them are looked at; one whose lock a live
// process holds, or that has no lock file, is left alone. What cannot be
// removed now is left for the next run to try.
func Sweep() []string {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !named(e.Name()) { // IsDir: the entry itself, never where a link points
			continue
		}
		path := filepath.Join(tmp, e.Name())
		if removeAbandoned(path) == nil {
			removed = append(removed, path)
		}
	}
	return removed
}

func named(name string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

var errInUse = errors.New("in use, or not a folder of a run of this user")

// removeAbandoned removes path when it is a folder of this user whose
// lock no live process holds, holding that lock while it does: another
// sweep then finds the lock held, or the folder gone.
func removeAbandoned(path string) error {
	dir, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	uid := uint32(os.Getuid())
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil || st.Uid != uid {
		return errInUse
	}
	lock, err := unix.Openat(dir, lockName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err // none: a folder being made (or not one of ours)
	}
	defer unix.Close(lock)
	if err := unix.Fstat(lock, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Uid != uid {
		return errInUse
	}
	if err := unix.Flock(lock, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return errInUse // its run is alive
	}
	// By its path: only this user can change what is in /tmp at that name
	// (the sticky bit) or in the folder (0700), and RemoveAll removes a
	// link it meets, never what the link points to.
	return os.RemoveAll(path)
}
