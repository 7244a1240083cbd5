// Package runfiles keeps a run from writing over what it reads, or over
// what it writes elsewhere. Every output (the report, the summary, an
// engine, a timing cache, the engine cache folder, ...) is compared with
// every input (the matrix file, a model and its external data, a plugin,
// ...) and with every other output the way the file system tells files
// apart: absolute and clean, with symbolic links resolved, and by device
// and inode where both exist, so a second name of a file (a hard link, a
// link to its folder) is still that file.
package runfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/text"
)

// Role is what a run does with a file.
type Role int

const (
	// Input is read and never written: the matrix file, a model and its
	// external data, a plugin, a calibration cache, a baseline report.
	Input Role = iota
	// Output is written by one writer: a report, a summary, an engine.
	Output
	// Shared is written by several builds in turn, under a lock (a timing
	// cache, which the builds that name it combine): it may be another
	// Shared file, and nothing else.
	Shared
	// Folder is a folder the run manages (the engine cache): no other
	// output may lie inside it.
	Folder
)

// File is a file a run reads or writes.
type File struct {
	Path string // as the run opens it
	Role Role
	// What names it in a message: a flag ("--report"), a phrase ("the
	// matrix file"), or for a build's file the key that named it
	// ("engine", "onnx").
	What  string
	Build string // the build a matrix path is of; "" for a file of the whole run
	Pos   string // FILE:LINE:COL where the matrix names it; "" for a flag
}

// Collision is an output that would write over an input or another
// output, said at the place that named it.
type Collision struct {
	Pos string // "" for a flag
	Msg string
}

func (c Collision) Error() string {
	if c.Pos == "" {
		return c.Msg
	}
	return c.Pos + ": " + c.Msg
}

// Collisions is every collision of a run, one an output, in the order the
// outputs were given.
type Collisions []Collision

func (cs Collisions) Error() string {
	lines := make([]string, len(cs))
	for i, c := range cs {
		lines[i] = c.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As and the command line see each collision.
func (cs Collisions) Unwrap() []error {
	errs := make([]error, len(cs))
	for i, c := range cs {
		errs[i] = c
	}
	return errs
}

// seen is a File as the file system sees it.
type seen struct {
	File
	real  string // Real(Path)
	id    string // what tells it apart: device and inode where it exists, else real
	isDir bool   // it is a folder now
}

// Check returns Collisions naming, all at once, every output that is an
// input, another output (timing caches may be each other), or lies inside
// another output (the engine cache folder, or a file the run writes); nil
// when there is none. An output that is a stream (a FIFO, a device,
// /dev/stdout) is written through, never replaced, so it is not compared.
func Check(files []File) error {
	var all []seen
	for _, f := range files {
		if f.Path == "" || (f.Role != Input && f.Role != Folder && atomicfile.IsStream(f.Path)) {
			continue
		}
		all = append(all, identify(f))
	}
	found := append(sameFiles(all), nested(all)...)
	if len(found) == 0 {
		return nil
	}
	slices.SortStableFunc(found, func(a, b finding) int { return a.subject - b.subject })
	out := make(Collisions, len(found))
	for i, f := range found {
		out[i] = f.Collision
	}
	return out
}

// finding is a collision and the index of the output it is about, by
// which collisions are told in the order the outputs were given.
type finding struct {
	Collision
	subject int
}

func identify(f File) seen {
	s := seen{File: f, real: Real(f.Path)}
	s.id = "path " + s.real
	if info, err := os.Stat(f.Path); err == nil { // as the run will open it
		s.isDir = info.IsDir()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			s.id = fmt.Sprintf("inode %d %d", st.Dev, st.Ino)
		}
	}
	return s
}

// sameFiles finds the outputs that are the same file as an input or an
// earlier output.
func sameFiles(all []seen) []finding {
	byID := map[string][]int{}
	var ids []string
	for i, s := range all {
		if _, ok := byID[s.id]; !ok {
			ids = append(ids, s.id)
		}
		byID[s.id] = append(byID[s.id], i)
	}
	var out []finding
	for _, id := range ids {
		group := byID[id]
		for _, i := range group {
			subject := all[i]
			if subject.Role == Input {
				continue
			}
			var others []seen // what subject would write over: every input, and the outputs before it
			for _, j := range group {
				if other := all[j]; other.Role == Input || (j < i && collide(subject.Role, other.Role)) {
					others = append(others, other)
				}
			}
			for _, o := range collapse(others) {
				msg := fmt.Sprintf("%s is %s: %s", subject.name(), o.object(subject.Path), consequence(subject.Role, o.Role))
				out = append(out, finding{Collision{Pos: subject.Pos, Msg: msg}, i})
			}
		}
	}
	return out
}

// collide reports whether two outputs that are one file are a problem:
// only timing caches (Shared) may share a file, and only with each other.
func collide(a, b Role) bool {
	return a != Shared || b != Shared
}

func consequence(subject, other Role) string {
	switch {
	case other == Input:
		return "the run would write over it; give the output a path of its own"
	case other == Shared || subject == Shared:
		return "builds may share a timing cache, but it may be nothing else; give each a path of its own"
	}
	return "two outputs would write one file; give each a path of its own"
}

// many is files of one kind (the model of many builds), named once.
type many struct {
	seen
	more int // how many others of the same kind there are
}

// collapse names each kind of file once: a model a hundred builds read is
// one collision, not a hundred.
func collapse(files []seen) []many {
	var out []many
	index := map[string]int{}
	for _, f := range files {
		kind := fmt.Sprintf("%d %s", f.Role, f.What)
		if i, ok := index[kind]; ok && f.Build != "" {
			out[i].more++
			continue
		}
		index[kind] = len(out)
		out = append(out, many{seen: f})
	}
	return out
}

// name is how a file is named as the subject of a message: what named it
// and its path.
func (s seen) name() string {
	if s.Build != "" {
		return fmt.Sprintf("%s %q of build %q", s.What, s.Path, s.Build)
	}
	return fmt.Sprintf("%s %q", s.What, s.Path)
}

// object is how a file is named as what another file would write over;
// its path is given when the subject named it differently.
func (m many) object(subjectPath string) string {
	var b strings.Builder
	switch {
	case m.Build == "":
		b.WriteString(m.What)
	case m.Path == subjectPath:
		fmt.Fprintf(&b, "the %s of build %q", m.What, m.Build)
	default:
		fmt.Fprintf(&b, "the %s %q of build %q", m.What, m.Path, m.Build)
	}
	if m.Build == "" && m.Path != subjectPath {
		fmt.Fprintf(&b, " %q", m.Path)
	}
	if m.more > 0 {
		fmt.Fprintf(&b, " (and of %s)", text.Count(m.more, "other build"))
	}
	if m.Pos != "" {
		fmt.Fprintf(&b, " (at %s)", m.Pos)
	}
	return b.String()
}

// nested finds the outputs that lie inside another output: inside the
// engine cache folder, or below a path the run writes as a file.
func nested(all []seen) []finding {
	// The outputs others could lie inside, by real path: the folders the
	// run manages, and the files it writes. An output file that is a
	// folder now is left to the check that it can be written, which says
	// so.
	outputs := map[string]int{}
	for i, s := range all {
		if _, ok := outputs[s.real]; !ok && (s.Role == Folder || (s.Role != Input && !s.isDir)) {
			outputs[s.real] = i
		}
	}
	var out []finding
	for k, inner := range all {
		if inner.Role == Input {
			continue
		}
		for dir := filepath.Dir(inner.real); ; dir = filepath.Dir(dir) {
			if i, ok := outputs[dir]; ok {
				out = append(out, finding{Collision{Pos: inner.Pos, Msg: insideMessage(inner, all[i])}, k})
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return out
}

func insideMessage(inner, outer seen) string {
	where := ""
	if outer.Pos != "" {
		where = fmt.Sprintf(" (at %s)", outer.Pos)
	}
	if outer.Role == Folder {
		return fmt.Sprintf("%s lies inside %s%s, a folder the run manages; put it elsewhere", inner.name(), outer.name(), where)
	}
	return fmt.Sprintf("%s lies inside %s%s, which the run writes as a file; give them paths apart", inner.name(), outer.name(), where)
}
