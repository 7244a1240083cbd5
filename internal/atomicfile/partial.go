package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// A file on its way to path is called "<path>.partial-<pid>-<n>": beside
// path, so the rename stays within one file system; with the writing
// process's id, so a later run can tell a partial file whose writer was
// killed (kill -9 leaves no chance to clean up) from one still being
// written.
const partialInfix = ".partial-"

var partialSeq atomic.Uint64

// PartialName is a fresh name for a file on its way to path, unique among
// the running processes.
func PartialName(path string) string {
	return fmt.Sprintf("%s%s%d-%d", path, partialInfix, os.Getpid(), partialSeq.Add(1))
}

// createPartial creates a new, empty partial file for path. A leftover of
// a dead process that had our PID is skipped, never reused.
func createPartial(path string) (*os.File, error) {
	for {
		f, err := os.OpenFile(PartialName(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// RemoveStale removes the partial files of path whose writing process is
// gone, and returns their names. A partial file of a live process (this
// one included) is left alone: it may be on its way to path right now.
func RemoveStale(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		pid, ok := partialPID(e.Name(), base)
		if !ok || alive(pid) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// partialPID reads the writer's PID out of the name of a partial file of
// base: "<base>.partial-<pid>-<n>".
func partialPID(name, base string) (int, bool) {
	rest, ok := strings.CutPrefix(name, base+partialInfix)
	if !ok {
		return 0, false
	}
	pidText, seqText, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return 0, false
	}
	if _, err := strconv.ParseUint(seqText, 10, 64); err != nil {
		return 0, false
	}
	return pid, true
}

// alive reports whether a process with this PID exists. EPERM means it
// does, under another user.
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// cleaned holds the paths whose stale partial files this process has
// already removed: once per path is enough, a report is written often.
var cleaned sync.Map

func removeStaleOnce(path string) {
	if _, done := cleaned.LoadOrStore(path, true); !done {
		_, _ = RemoveStale(path) // best effort: a leftover never stops a write
	}
}
