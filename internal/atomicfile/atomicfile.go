// Package atomicfile is the one writer of trt-action's output files: the
// report, the summary and the notes added to it, the JUnit file, the
// engines, the event stream and the trace recordings.
//
// A regular file (or a path where nothing is yet) is replaced whole: the
// data goes to a partial file beside it, is synced, and is renamed over the
// path, so a reader, or a kill in the middle, sees the old file or the new
// one (Write, WriteFrom, Append, Install; files that belong together, all
// of them or none: InstallAll). A file written as the run goes,
// for readers that follow it (Live), is a new file renamed into place when
// it starts, so the file it replaces is never cut short under a reader or
// through another of its names. Anything else is never replaced: a FIFO, a
// terminal or /dev/null is written straight through (Write, Append, Live)
// or refused (Install), and a folder is an error that says so.
//
// Three kinds of file are written elsewhere, each by the one part that
// knows its format: $GITHUB_OUTPUT, which the runner reads record by record,
// is appended to by internal/actions (a record is written whole with one
// write, and one cut short is taken back, never replaced, since the runner
// owns the file); the engine cache's folder is laid out by internal/cache,
// whose entries are staged and renamed into place under its own locks (an
// engine it hands a build goes through Install); and a build's timing cache
// is replaced by the worker's backend (native/backends/files.h,
// replace_file), because only TensorRT can merge the timings a build
// gathered into the file's, and that merge must be read, combined and
// written under the file's lock inside the worker, where the timings are.
// It is replaced the same way, through a partial file named as this
// package names them (partial.go), so the supervisor removes one a killed
// worker left as it removes its own.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// kind is what a path names, after any symbolic links were followed.
type kind int

const (
	absent  kind = iota // nothing there yet
	regular             // a regular file
	stream              // a FIFO, a device or an open descriptor: written in place
	folder
	socket
)

// target is an output path resolved for writing.
type target struct {
	path string // where a regular file is renamed into place; the link's target for a link
	kind kind
	mode fs.FileMode // the existing file's permissions, kept by a replacement
}

// newFileMode is the permission of an output file that did not exist:
// reports and engines are for everyone on the machine to read.
const newFileMode = 0o644

// Write puts data at path as a user who names an output file on the
// command line expects. A regular file (or nothing) is replaced atomically
// and keeps its permissions. A FIFO, a device such as /dev/null, or an open
// descriptor (/dev/stdout, /proc/self/fd/N) is written straight through and
// never replaced. A symbolic link is followed: the file it names is written
// by the same rules and the link stays. A folder, a socket or a link to
// nothing is an error naming path.
func Write(path string, data []byte) error {
	return WriteFrom(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom is Write with the content written by fill, for documents too
// large to hold twice in memory (a report of thousands of builds). fill
// may be called once at most; its error is returned and path left as it was
// (a stream may have taken part of it).
func WriteFrom(path string, fill func(io.Writer) error) error {
	t, err := forWriting(path)
	if err != nil {
		return err
	}
	return t.write(path, fill)
}

// Append adds data to the end of path by Write's rules: a regular file is
// replaced whole by its content followed by data (a reader, or a kill,
// sees the file with or without the addition, never part of it) and keeps
// its permissions; a stream has data written straight through. It is for
// an output this process wrote (notes added to the summary after the
// run): an addition another process makes to the file while it is copied
// would be lost.
func Append(path string, data []byte) error {
	t, err := forWriting(path)
	if err != nil {
		return err
	}
	return t.write(path, func(w io.Writer) error {
		if t.kind == regular { // replaced: its content first
			old, err := os.Open(t.path)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, old)
			old.Close()
			if err != nil {
				return err
			}
		}
		_, err := w.Write(data)
		return err
	})
}

// Live opens path for an output written as the run goes, for readers that
// follow it (tail -f): the event stream, a trace recording. A regular file
// (or nothing) is replaced at once by a new, empty file (made beside it
// and renamed over it, keeping the old file's permissions), which the
// caller then writes; the old file is never truncated, so a reader that
// has it open, or another name of it (a hard link), keeps its content. A
// FIFO, a device or a descriptor is written straight through, as by Write.
// Close syncs a regular file.
func Live(path string) (io.WriteCloser, error) {
	t, err := forWriting(path)
	if err != nil {
		return nil, err
	}
	if t.kind == stream {
		return openThrough(path)
	}
	f, err := renameNew(t, nil, true)
	if err != nil {
		return nil, err
	}
	return liveFile{f}, nil
}

// liveFile is a regular file Live opened: synced when closed.
type liveFile struct{ *os.File }

func (f liveFile) Close() error {
	err := f.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}

// IsStream reports whether Write writes path straight through (a FIFO, a
// device, an open descriptor) instead of replacing a file. Such a path can
// take one document only, so callers write it once, at the end.
func IsStream(path string) bool {
	t, err := resolve(path)
	return err == nil && t.kind == stream
}

// forWriting resolves path for a write by Write's rules. Before a file is
// replaced, the partial files a killed writer left beside it are removed
// (once a path for the process).
func forWriting(path string) (target, error) {
	t, err := resolve(path)
	if err == nil && t.kind != stream {
		removeStaleOnce(t.path)
	}
	return t, err
}

// write puts what fill writes at t, which forWriting resolved from path:
// straight through a stream, else in a new file that replaces t.path.
func (t target) write(path string, fill func(io.Writer) error) error {
	if t.kind == stream {
		return writeThrough(path, fill)
	}
	_, err := renameNew(t, fill, false)
	return err
}

// resolve finds what path names, following links.
func resolve(path string) (target, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if link, lerr := os.Lstat(path); lerr == nil && link.Mode()&fs.ModeSymlink != 0 {
			dest, _ := os.Readlink(path)
			return target{}, fmt.Errorf("%s is a symbolic link to %s, which does not exist", path, dest)
		}
		return target{path: path, kind: absent, mode: newFileMode}, nil
	}
	if err != nil {
		return target{}, err
	}
	switch {
	case info.IsDir():
		return target{}, fmt.Errorf("%s is a folder; name a file in it", path)
	case info.Mode()&fs.ModeSocket != 0:
		return target{}, fmt.Errorf("%s is a socket; trt-action writes only to files, FIFOs and devices", path)
	case !info.Mode().IsRegular() || viaDescriptor(path):
		return target{path: path, kind: stream}, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return target{}, err
	}
	return target{path: real, kind: regular, mode: info.Mode().Perm()}, nil
}

// viaDescriptor reports whether path reaches its file through /dev/fd or
// /proc (as /dev/stdout does): that file is already open in some process,
// possibly ours, and replacing it would cut the process off from it.
func viaDescriptor(path string) bool {
	for hops := 0; hops < 40; hops++ {
		abs, err := filepath.Abs(path)
		if err != nil {
			return false
		}
		if strings.HasPrefix(abs, "/proc/") || strings.HasPrefix(abs, "/dev/fd/") {
			return true
		}
		dest, err := os.Readlink(abs)
		if err != nil {
			return false // not a link: the end of the chain
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(abs), dest)
		}
		path = dest
	}
	return false
}

// fifoReaderWait is how long Write waits for a FIFO to get a reader.
// Without one, opening it would block for ever, and a run that ended could
// never exit.
var fifoReaderWait = 10 * time.Second

// writeThrough writes to a FIFO, a device or a descriptor without creating,
// truncating or replacing it. O_APPEND keeps a descriptor that is a regular
// file (stdout redirected to a log) from being overwritten from its start.
func writeThrough(path string, fill func(io.Writer) error) error {
	f, err := openThrough(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// openThrough opens path for writing in place. A FIFO is opened without
// blocking, retried until a reader comes or fifoReaderWait has passed.
func openThrough(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil || info.Mode()&fs.ModeNamedPipe == 0 {
		return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	}
	deadline := time.Now().Add(fifoReaderWait)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
		if !errors.Is(err, syscall.ENXIO) {
			return f, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is a FIFO that nobody read within %s", path, fifoReaderWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// renameNew puts a new file at t.path: it is made beside t.path, written
// by fill (nil: left empty), given t's permissions and renamed over
// t.path. A file written whole (keepOpen false) is synced and closed before
// the rename; one the caller goes on writing (keepOpen, for Live) is renamed
// into place at once and returned open. On any failure the new file is
// removed and t.path is left as it was.
func renameNew(t target, fill func(io.Writer) error, keepOpen bool) (f *os.File, err error) {
	f, err = createPartial(t.path)
	if err != nil {
		return nil, pathError("write", t.path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			f, err = nil, pathError("write", t.path, err)
		}
	}()
	if fill != nil {
		if err = fill(f); err != nil {
			return f, err
		}
	}
	if err = f.Chmod(t.mode); err != nil {
		return f, err
	}
	if !keepOpen {
		if err = f.Sync(); err != nil {
			return f, err
		}
		if err = f.Close(); err != nil {
			return f, err
		}
	}
	if err = os.Rename(f.Name(), t.path); err != nil {
		return f, err
	}
	SyncDir(filepath.Dir(t.path))
	return f, nil
}

// Install renames the complete file tmp (written beside path, see
// PartialName) to path, for files a matrix names, such as engines. It never
// follows a link: anything at path but a regular file (a link, a folder, a
// FIFO, a device) is an error, and tmp is left for the caller to remove.
func Install(tmp, path string) error {
	if err := CheckInstall(path); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return pathError("install", path, err)
	}
	SyncDir(filepath.Dir(path))
	return nil
}

// CheckInstall tells whether Install could put a file at path: nothing is
// there, or a regular file is. A link is refused rather than followed, so
// a matrix path never writes elsewhere; it is not replaced either, since
// whoever made it meant the file to live where it points.
func CheckInstall(path string) error {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case info.Mode().IsRegular():
		return nil
	case info.Mode()&fs.ModeSymlink != 0:
		dest, _ := os.Readlink(path)
		return fmt.Errorf("%s is a symbolic link (to %s); trt-action never writes through a link at a matrix path: name the file itself", path, dest)
	case info.IsDir():
		return fmt.Errorf("%s is a folder; name a file in it", path)
	}
	return fmt.Errorf("%s is %s, not a regular file; trt-action does not replace it", path, FileKind(info.Mode()))
}

// FileKind names the kind of a file in words, with its article: "a
// FIFO", "a character device", "a symbolic link", "a folder", "a regular
// file". The one wording of a file that is not what trt-action expects,
// here and in the engine cache.
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// Check tells, before any work is done, whether Write could write path:
// it creates path's folder when missing, and tries what Write will do
// without changing any file. A FIFO passes when it may be written: its
// reader may come when the run ends.
func Check(path string) error {
	t, err := resolve(path)
	if err != nil {
		return err
	}
	if t.kind == stream {
		return checkStream(path)
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return err
	}
	tmp, err := createPartial(t.path)
	if err != nil {
		return pathError("write", t.path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// checkStream tells whether a FIFO or device can be opened for writing.
// A FIFO is not opened: that would hand a reader already waiting on it an
// empty document and end its read.
func checkStream(path string) error {
	if info, err := os.Stat(path); err == nil && info.Mode()&fs.ModeNamedPipe != 0 {
		if err := syscall.Access(path, 2 /* W_OK */); err != nil {
			return &fs.PathError{Op: "write", Path: path, Err: err}
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// pathError names path once: the partial file's own name in err would
// point the reader at a file that no longer exists.
func pathError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// SyncDir makes a rename (or a new file) in dir durable where the platform
// allows; failure only weakens durability, never correctness, so it is
// ignored.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
