package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/trt-action/trt-action/internal/report"
	"golang.org/x/sys/unix"
)

// The engine files a script build declares (engine:), and the other files
// that go with them (outputs:). trt-action does not write them, the
// program does; so a file counts only when this build wrote it: it is
// compared with what was at the path before the command started (device,
// inode, change time, size). A snapshot, not a time: a program may keep
// a file's modification time (cp -p, a copy from a cache), and clocks and
// a file system's time stamps are coarse or apart (a network file
// system's server), while the change time moves with every write and
// rename and no program can set it. A build that did not succeed leaves
// nothing it wrote behind: no partial engine stays where a good one was,
// and a file from before the run that it did not touch is left alone.

// engineBefore is a declared engine path and what was there before.
type engineBefore struct {
	path   string
	exists bool
	stat   unix.Stat_t
}

func noteEngines(paths []string) ([]engineBefore, error) {
	out := make([]engineBefore, len(paths))
	for i, p := range paths {
		out[i].path = p
		err := unix.Stat(p, &out[i].stat)
		switch {
		case err == nil:
			out[i].exists = true
		case errors.Is(err, unix.ENOENT):
		default:
			return nil, fmt.Errorf("engine %s: %w", p, err)
		}
	}
	return out, nil
}

// written reports whether the build wrote the file at e.path, and its
// state now.
func (e engineBefore) written() (now unix.Stat_t, ok bool) {
	if unix.Stat(e.path, &now) != nil {
		return now, false
	}
	if !e.exists {
		return now, true
	}
	b := e.stat
	return now, now.Ino != b.Ino || now.Dev != b.Dev || now.Ctim != b.Ctim || now.Size != b.Size
}

// checkEngines fingerprints the declared engines of a build that ended
// well; problem is "" when each exists, is not empty and was written by
// this build.
func checkEngines(engines []engineBefore) (kept []report.Engine, problem string) {
	var problems []string
	for _, e := range engines {
		st, ok := e.written()
		switch {
		case !ok && !e.exists:
			problems = append(problems, fmt.Sprintf("engine %s was not written", e.path))
		case !ok:
			problems = append(problems, fmt.Sprintf("engine %s is left from before this build: the command did not write it", e.path))
		case st.Mode&unix.S_IFMT != unix.S_IFREG:
			problems = append(problems, fmt.Sprintf("engine %s is not a regular file", e.path))
		case st.Size == 0:
			problems = append(problems, fmt.Sprintf("engine %s is empty", e.path))
		default:
			sum, n, err := fingerprint(e.path)
			if err != nil {
				problems = append(problems, fmt.Sprintf("engine %s: %v", e.path, err))
				continue
			}
			kept = append(kept, report.Engine{Path: e.path, Bytes: n, SHA256: sum})
		}
	}
	return kept, strings.Join(problems, "; ")
}

// checkOutputs fingerprints the declared outputs of a build that ended
// well; unwritten is "" when each was written by this build (a regular
// file, empty or not), else why its files cannot be stored whole: an
// output is not a build's success, only what travels with its engines, so
// one not written leaves the build ok and uncached.
func checkOutputs(outputs []engineBefore) (kept []report.Engine, unwritten string) {
	var problems []string
	for _, o := range outputs {
		st, ok := o.written()
		switch {
		case !ok && !o.exists:
			problems = append(problems, fmt.Sprintf("output %s was not written", o.path))
		case !ok:
			problems = append(problems, fmt.Sprintf("output %s is left from before this build: the command did not write it", o.path))
		case st.Mode&unix.S_IFMT != unix.S_IFREG:
			problems = append(problems, fmt.Sprintf("output %s is not a regular file", o.path))
		default:
			sum, n, err := fingerprint(o.path)
			if err != nil {
				problems = append(problems, fmt.Sprintf("output %s: %v", o.path, err))
				continue
			}
			kept = append(kept, report.Engine{Path: o.path, Bytes: n, SHA256: sum})
		}
	}
	return kept, strings.Join(problems, "; ")
}

// fingerprint is the SHA-256 (hex) and size of the file at path: what
// the report says of every engine a build keeps.
func fingerprint(path string) (sum string, n int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err = io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// removeWritten removes the declared engines a build that did not succeed
// wrote, and says which it removed. Only a regular file at the path
// itself is removed, never what a link there points to.
func removeWritten(engines []engineBefore) (removed []string) {
	for _, e := range engines {
		if _, ok := e.written(); !ok {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(e.path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if os.Remove(e.path) == nil {
			removed = append(removed, e.path)
		}
	}
	return removed
}
