package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/atomicfile"
)

// Nothing under the cache folder is reached through a symbolic link. The
// folder the user names is opened as given (following links: it is theirs
// to point anywhere); every name below it is opened relative to its
// parent's descriptor with O_NOFOLLOW, renamed with renameat and removed
// with unlinkat, all of which act on a link itself, never on what it names.
// So a link planted under the cache, even one swapped in between a check
// and a use, is never followed out of it: the open fails with ELOOP (or
// ENOTDIR), which is reported as a *linkError. os.Root is not enough here:
// it follows links that stay inside the root, and a link from tmp/ to an
// entry folder would still let staging clean-up remove entries.

// folder is an open folder of the cache, reached without following a link.
type folder struct {
	f    *os.File
	path string // for messages only; never used to reach the folder
}

// linkError is a symbolic link found where the cache expects its own
// folder or file. It is not the cache's: never followed, reported, and
// removed (the link itself) by the commands that remove entries.
type linkError struct {
	Path   string
	Target string
}

func (e *linkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link (to %s), not the cache's own; trt-action never follows a link inside its cache", e.Path, e.Target)
}

// removed is the notice for the link, once removed, where the cache
// keeps a what ("folder", "lock file") of its own: one sentence.
func (e *linkError) removed(what string) string {
	return fmt.Sprintf("removed the symbolic link %s (to %s): the cache keeps a %s of its own there and never follows a link inside it", e.Path, e.Target, what)
}

// openTop opens the cache folder itself.
func openTop(path string) (*folder, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &folder{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

func (d *folder) close() { d.f.Close() }

func (d *folder) fd() int { return int(d.f.Fd()) }

// join is the path of name in d, for messages.
func (d *folder) join(name string) string { return filepath.Join(d.path, name) }

// noFollow turns the error of an O_NOFOLLOW open of name into a
// *linkError when name is a link (ELOOP for a file; ENOTDIR for a folder
// opened with O_DIRECTORY), else a *fs.PathError.
func (d *folder) noFollow(op, name string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK) {
		if target, lerr := readlinkat(d.fd(), name); lerr == nil {
			return &linkError{Path: d.join(name), Target: target}
		}
	}
	return &fs.PathError{Op: op, Path: d.join(name), Err: err}
}

func readlinkat(dirfd int, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// sub opens the folder name in d. A link there is a *linkError; a file
// there is a *fs.PathError wrapping ENOTDIR.
func (d *folder) sub(name string) (*folder, error) {
	for {
		fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, d.noFollow("open", name, err)
		}
		return &folder{f: os.NewFile(uintptr(fd), d.join(name)), path: d.join(name)}, nil
	}
}

// makeSub creates the folder name in d when it is not there, and opens it.
func (d *folder) makeSub(name string) (*folder, error) {
	if err := unix.Mkdirat(d.fd(), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &fs.PathError{Op: "mkdir", Path: d.join(name), Err: err}
	}
	return d.sub(name)
}

// open opens the file name in d with flag (O_NOFOLLOW is added). A link
// there is a *linkError.
func (d *folder) open(name string, flag int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Openat(d.fd(), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, d.noFollow("open", name, err)
		}
		return os.NewFile(uintptr(fd), d.join(name)), nil
	}
}

// openRegular opens name for reading and checks it is a regular file (a
// FIFO would block a reader for ever; a device is nobody's engine). It
// returns what it checked, the open file's size and modification time
// among it.
func (d *folder) openRegular(name string) (*os.File, fs.FileInfo, error) {
	f, err := d.open(name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &notRegularError{Path: d.join(name), Kind: atomicfile.FileKind(fi.Mode())}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// notRegularError is a FIFO, a device or a folder where the cache keeps a
// file.
type notRegularError struct{ Path, Kind string }

func (e *notRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.Kind)
}

// stat is what lstat tells of one name in a folder.
type stat struct {
	mode     fs.FileMode
	size     int64
	modTime  time.Time
	dev, ino uint64
}

func (s stat) isLink() bool { return s.mode&fs.ModeSymlink != 0 }

// lstat looks at name in d without following it.
func (d *folder) lstat(name string) (stat, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return stat{}, &fs.PathError{Op: "lstat", Path: d.join(name), Err: err}
	}
	return statOf(&st), nil
}

func statOf(st *unix.Stat_t) stat {
	s := stat{size: st.Size, modTime: time.Unix(st.Mtim.Unix()), dev: uint64(st.Dev), ino: st.Ino}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		s.mode = fs.ModeDir
	case unix.S_IFLNK:
		s.mode = fs.ModeSymlink
	case unix.S_IFIFO:
		s.mode = fs.ModeNamedPipe
	case unix.S_IFCHR:
		s.mode = fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		s.mode = fs.ModeDevice
	case unix.S_IFSOCK:
		s.mode = fs.ModeSocket
	case unix.S_IFREG:
	default:
		s.mode = fs.ModeIrregular
	}
	return s
}

// identity is the device and inode of an open file or folder.
func identity(f *os.File) (dev, ino uint64, ok bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true
}

// same reports whether name in d is still the open file or folder f.
// While f is open its inode cannot be reused, so a match is f itself.
func (d *folder) same(name string, f *os.File) bool {
	s, err := d.lstat(name)
	if err != nil {
		return false
	}
	dev, ino, ok := identity(f)
	return ok && s.dev == dev && s.ino == ino
}

// names lists the names in d.
func (d *folder) names() ([]string, error) {
	// A fresh descriptor: reading a folder moves its offset, and d may be
	// listed again.
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// chtimes sets name's modification time without following a link.
func (d *folder) chtimes(name string, t time.Time) error {
	ts := unix.NsecToTimespec(t.UnixNano())
	if err := unix.UtimesNanoAt(d.fd(), name, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "chtimes", Path: d.join(name), Err: err}
	}
	return nil
}

// removeAll removes name in d and, when it is a folder, everything in it.
// A link is removed itself; nothing is ever followed. Gone already is no
// error.
func (d *folder) removeAll(name string) error {
	err := unix.Unlinkat(d.fd(), name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	sub, err := d.sub(name)
	if err != nil {
		var link *linkError
		if errors.As(err, &link) { // swapped for a link meanwhile: remove the link
			return d.removeAll(name)
		}
		return err
	}
	names, err := sub.names()
	if err == nil {
		for _, n := range names {
			if err = sub.removeAll(n); err != nil {
				break
			}
		}
	}
	sub.close()
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// sizeOf is what the regular files in name hold, name and everything
// under it when it is a folder. Links are not followed (they count
// nothing), nor are names that vanish meanwhile.
func (d *folder) sizeOf(name string) (int64, error) {
	st, err := d.lstat(name)
	switch {
	case isNotExist(err):
		return 0, nil
	case err != nil:
		return 0, err
	case st.mode.IsRegular():
		return st.size, nil
	case !st.mode.IsDir():
		return 0, nil
	}
	sub, err := d.sub(name)
	if err != nil {
		if isNotExist(err) || errors.As(err, new(*linkError)) {
			return 0, nil // swapped for a link or removed meanwhile
		}
		return 0, err
	}
	defer sub.close()
	names, err := sub.names()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, n := range names {
		size, err := sub.sizeOf(n)
		if err != nil {
			return 0, err
		}
		total += size
	}
	return total, nil
}

// filesSize is what the regular files directly in d hold (links and
// folders count nothing); 0 when d cannot be listed.
func (d *folder) filesSize() int64 {
	names, err := d.names()
	if err != nil {
		return 0
	}
	var total int64
	for _, n := range names {
		if st, err := d.lstat(n); err == nil && st.mode.IsRegular() {
			total += st.size
		}
	}
	return total
}

// removeLink removes name in d when it is not a folder: a link (itself,
// never what it names) or a stray file. A folder there (an entry or a
// shard made meanwhile, in place of a link that was seen) is never
// removed this way: unlinkat without AT_REMOVEDIR refuses it with EISDIR.
// Gone already is no error.
func (d *folder) removeLink(name string) error {
	err := unix.Unlinkat(d.fd(), name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
}

// rename moves name in d to newName in to (renameat: a link is moved, not
// followed). It replaces an empty folder or a file at newName as
// rename(2) does.
func (d *folder) rename(name string, to *folder, newName string) error {
	if err := unix.Renameat(d.fd(), name, to.fd(), newName); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(name), New: to.join(newName), Err: err}
	}
	return nil
}

// exchange swaps name in d and newName in to in one step
// (renameat2(RENAME_EXCHANGE), Linux 3.15; file systems without it return
// EINVAL), so a reader of either name finds one of the two, never nothing.
func (d *folder) exchange(name string, to *folder, newName string) error {
	if err := unix.Renameat2(d.fd(), name, to.fd(), newName, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "exchange", Old: d.join(name), New: to.join(newName), Err: err}
	}
	return nil
}

// sync flushes d's names to disk: a rename into d survives a crash.
func (d *folder) sync() { _ = d.f.Sync() }
