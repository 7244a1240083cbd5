// Package runfiles keeps a run from writing over what it reads, or over
// what it writes elsewhere. Every output (the report, the summary, an
// engine, a timing cache, the engine cache folder, ...) is compared with
// every input (the matrix file, a model and its external data, a plugin,
// the libraries the backends load, ...) and with every other output, the
// way a write would reach it. Paths are made absolute and clean, with
// symbolic links resolved, and a path is the directory entry it names (its
// folder by device and inode, and its name), so a second name of one
// entry (a link to its folder, a bind mount) is still that entry. A hard
// link is another entry of the same file: it counts only where a write
// lands in the file itself (see Role).
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

// Role is what a run does with a file. How an output is written decides
// what else it can reach: an output replaced by a rename changes one
// directory entry, so another name of the old file (a hard link) keeps
// the old content; an output written in place changes the file under
// every name it has.
type Role int

const (
	// Input is read and never written: the matrix file, a model and its
	// external data, a plugin, a calibration cache, a baseline report, a
	// library a backend loads.
	Input Role = iota
	// Output is written by one writer, whole, into a new file renamed
	// over its path (internal/atomicfile; the engine by atomicfile.Install;
	// a stream such as /dev/stdout is written through and never compared).
	Output
	// Shared is written by several builds in turn, under a lock, each
	// replacing it by a rename (a timing cache, which the builds that name
	// it combine; native/backends/files.h): it may be another Shared
	// file, and nothing else.
	Shared
	// Appended is written in place, added to at its end: $GITHUB_OUTPUT,
	// which the runner owns and reads (internal/actions).
	Appended
	// Folder is a folder the run manages (the engine cache), whose files
	// it writes in place: no other output may lie inside it.
	Folder
	// Program is written by a program a build runs (an engine a build
	// with run: names), however the program writes it: perhaps in place.
	Program
)

// inPlace reports whether a write to a file of role r lands (or may
// land) in the file itself, so that every name of it (a hard link) sees it.
func inPlace(r Role) bool {
	return r == Appended || r == Folder || r == Program
}

// File is a file a run reads or writes.
type File struct {
	Path string // as the run opens it
	Role Role
	// What names an output as the subject of a message: the flag
	// ("--report") or the matrix key ("engine") that named it.
	What string
	// Noun names the file as what an output would write over, with its
	// article and without its build: "the matrix file (-f)", "the
	// model", "a plugin", "an external-data file of the model".
	Noun  string
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
	place
}

// place is what the file system says of a path, the same for every File
// that names it.
type place struct {
	real   string // Real(Path)
	folder string // the device and inode of real's folder; "" when it is not there
	entry  string // the directory entry a write replaces: folder and name, else real
	inode  string // the device and inode of the file there now; "" when there is none
	isDir  bool   // it is a folder now
}

// Check returns Collisions naming, all at once, every output that is an
// input, another output (timing caches may be each other), or lies inside
// another output (the engine cache folder, or a file the run writes); nil
// when there is none. An output that is a stream (a FIFO, a device,
// /dev/stdout) is written through, never replaced, so it is not compared.
func Check(files []File) error {
	all := make([]seen, 0, len(files))
	look := newLooks()
	for _, f := range files {
		if f.Path == "" || (f.Role != Input && f.Role != Folder && look.stream(f.Path)) {
			continue
		}
		all = append(all, seen{File: f, place: look.place(f.Path)})
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

// looks is what one Check learned of the file system, so that each path
// and each folder is looked at once: a run names one model, or one timing
// cache, for every build (10,000 builds name a few paths 30,000 times),
// and its files mostly lie in a few folders.
type looks struct {
	reals   realPaths
	folders folderIDs
	places  map[string]place // by path as given
	streams map[string]bool  // by path as given: atomicfile.IsStream
}

func newLooks() *looks {
	return &looks{reals: realPaths{}, folders: folderIDs{}, places: map[string]place{}, streams: map[string]bool{}}
}

// stream reports whether an output at p is written through, never
// replaced (atomicfile.IsStream).
func (l *looks) stream(p string) bool {
	s, ok := l.streams[p]
	if !ok {
		s = atomicfile.IsStream(p)
		l.streams[p] = s
	}
	return s
}

// place is what the file system says of p.
func (l *looks) place(p string) place {
	if pl, ok := l.places[p]; ok {
		return pl
	}
	pl := place{real: l.reals.of(p)}
	id := l.folders.of(filepath.Dir(pl.real))
	pl.folder, pl.entry = id, "path "+pl.real
	if id != "" {
		pl.entry = "entry " + id + " " + filepath.Base(pl.real)
	}
	if info, err := os.Stat(p); err == nil { // as the run will open it
		pl.isDir, pl.inode = info.IsDir(), fileID(info)
	}
	l.places[p] = pl
	return pl
}

// realPaths is Real remembered by folder.
type realPaths map[string]string

// of is Real(p): its folder's Real, remembered, and its name, followed
// when it is a link. Real(folder)/name is Real(p) for a name that is
// neither ".." (which Real takes after the folder's links) nor a link.
func (r realPaths) of(p string) string {
	i := strings.LastIndexByte(p, filepath.Separator)
	dir, name := ".", p
	if i >= 0 {
		dir, name = p[:i], p[i+1:]
		if dir == "" {
			dir = string(filepath.Separator)
		}
	}
	if name == "" || name == "." || name == ".." {
		return Real(p)
	}
	real, ok := r[dir]
	if !ok {
		real = Real(dir)
		r[dir] = real
	}
	p = filepath.Join(real, name)
	if info, err := os.Lstat(p); err == nil && info.Mode()&os.ModeSymlink != 0 {
		return Real(p)
	}
	return p
}

// folderIDs is each folder's device and inode, remembered; "" for a
// folder that is not there.
type folderIDs map[string]string

func (f folderIDs) of(dir string) string {
	id, ok := f[dir]
	if !ok {
		if info, err := os.Stat(dir); err == nil {
			id = fileID(info)
		}
		f[dir] = id
	}
	return id
}

// fileID is a file's device and inode, or "" where the system has none.
func fileID(info os.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d %d", st.Dev, st.Ino)
	}
	return ""
}

// group is the files that share an entry, or a file, split so that each
// output is compared with what it may not be without going through every
// other sharer of a timing cache.
type group struct {
	inputs, shared, others []int // indexes into all, rising
}

func grouped(all []seen, key func(seen) string) map[string]*group {
	groups := map[string]*group{}
	for i, s := range all {
		k := key(s)
		if k == "" {
			continue
		}
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
		}
		switch s.Role {
		case Input:
			g.inputs = append(g.inputs, i)
		case Shared:
			g.shared = append(g.shared, i)
		default:
			g.others = append(g.others, i)
		}
	}
	return groups
}

// over lists what output i of g would write over: every input, and the
// outputs before it that it may not be. Only timing caches (Shared) may
// be one file, and only with each other.
func (g *group) over(i int, role Role) []int {
	before := func(list []int) []int {
		n, _ := slices.BinarySearch(list, i)
		return list[:n]
	}
	out := slices.Clone(g.inputs)
	if role != Shared {
		out = append(out, before(g.shared)...)
	}
	return append(out, before(g.others)...)
}

// sameFiles finds the outputs that write over an input or an earlier
// output: the same directory entry, or the same file under another name
// where one of the two is written in place.
func sameFiles(all []seen) []finding {
	entries := grouped(all, func(s seen) string { return s.entry })
	files := grouped(all, func(s seen) string { return s.inode })
	names := folderNames{}
	var out []finding
	for i, subject := range all {
		if subject.Role == Input {
			continue
		}
		var same, linked []seen
		for _, j := range entries[subject.entry].over(i, subject.Role) {
			if j != i {
				same = append(same, all[j])
			}
		}
		if g := files[subject.inode]; g != nil {
			for _, j := range g.over(i, subject.Role) {
				other := all[j]
				switch {
				case j == i || other.entry == subject.entry: // above
				case names.oneEntry(subject, other):
					same = append(same, other)
				case inPlace(subject.Role) || inPlace(other.Role):
					linked = append(linked, other)
				}
			}
		}
		for _, o := range collapse(same) {
			msg := fmt.Sprintf("%s is %s: %s", subject.name(), o.object(subject.Path), consequence(subject.Role, o.Role))
			out = append(out, finding{Collision{Pos: subject.Pos, Msg: msg}, i})
		}
		for _, o := range collapse(linked) {
			out = append(out, finding{Collision{Pos: subject.Pos, Msg: hardLinkMessage(subject, o)}, i})
		}
	}
	return out
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

// hardLinkMessage says that subject and o are one file under two names,
// and that one of them is written in place, which the other would see.
func hardLinkMessage(subject seen, o many) string {
	writer := subject.name()
	if !inPlace(subject.Role) {
		writer = o.name()
	}
	return fmt.Sprintf("%s is a hard link of %s (one file under two names), and %s is written in place, so the other name would change too; "+
		"make one of them a file of its own (a copy, not a link)", subject.name(), o.object(""), writer)
}

// folderNames lists, once each, the names in a folder.
type folderNames map[string]map[string]bool

// listNames reads the names in a folder; a variable so that tests can
// stand in for a folder that folds case.
var listNames = func(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// oneEntry reports whether a and b, one file under two different names in
// one folder, are one directory entry of it: a folder that folds case (or
// normalises Unicode) gives an entry more names than it lists, whereas
// each hard link is listed. Unless the folder's list says both names, they
// are taken as one entry.
func (n folderNames) oneEntry(a, b seen) bool {
	if a.folder == "" || a.folder != b.folder {
		return false
	}
	dir := filepath.Dir(a.real)
	listed, ok := n[dir]
	if !ok {
		names, err := listNames(dir)
		if err == nil {
			listed = make(map[string]bool, len(names))
			for _, name := range names {
				listed[name] = true
			}
		}
		n[dir] = listed
	}
	return !listed[filepath.Base(a.real)] || !listed[filepath.Base(b.real)]
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
		kind := fmt.Sprintf("%d %s", f.Role, f.noun())
		if i, ok := index[kind]; ok && f.Build != "" {
			out[i].more++
			continue
		}
		index[kind] = len(out)
		out = append(out, many{seen: f})
	}
	return out
}

// name is how an output is named as the subject of a message: what named
// it and its path.
func (s seen) name() string {
	if s.Build != "" {
		return fmt.Sprintf("%s %q of build %q", s.What, s.Path, s.Build)
	}
	return fmt.Sprintf("%s %q", s.What, s.Path)
}

func (s seen) noun() string {
	if s.Noun == "" {
		return s.What
	}
	return s.Noun
}

// object is how a file is named as what another file would write over:
// its path first when the subject named it differently ("c.yml", the
// matrix file), then its noun, its build and where it was named.
func (m many) object(subjectPath string) string {
	var b strings.Builder
	if m.Path != subjectPath {
		fmt.Fprintf(&b, "%q, ", m.Path)
	}
	b.WriteString(m.noun())
	if m.Build != "" {
		fmt.Fprintf(&b, " of build %q", m.Build)
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
	if outer.Role == Folder {
		return fmt.Sprintf("%s lies inside %s, which the run manages; put it elsewhere", inner.name(), many{seen: outer}.object(""))
	}
	return fmt.Sprintf("%s lies inside %s, which the run writes as a file; give them paths apart", inner.name(), many{seen: outer}.object(""))
}
