package runfiles

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// A build's declared inputs (a builder script's inputs:) are patterns
// matched the way GitHub's hashFiles matches them (@actions/glob,
// https://github.com/actions/toolkit/tree/main/packages/glob#patterns),
// relative to a folder (the build's workdir):
//
//   - a pattern is a path whose parts may hold * (any run of characters
//     but /), ? (one character but /) and [...] (one of the characters,
//     [!...] or [^...] none of them), with \ escaping the next character
//     (Go's path.Match); names starting with a dot match too;
//   - a part that is ** alone matches any number of folders, none
//     included;
//   - a pattern that matches a folder matches every file below it;
//   - a pattern starting with ! excludes the files it matches from those
//     the other patterns match, wherever it is in the list;
//   - braces ({a,b}) and extended globs (+(...)) are not patterns' syntax,
//     and # starts no comment: each is matched as written.
//
// Only regular files are inputs (a FIFO or a device is skipped), and
// never one in a cache folder (IsCacheFolder: the engine cache folder,
// and any other folder tagged as a cache), which is not walked. The part
// of a pattern before its first wildcard is taken as written, as a model's
// path is; below it, where a wildcard or a folder's files are walked, a
// symbolic link is followed only when where it leads (Real) is inside the
// folders the caller allows (within: the workspace and allow-paths), so a
// pattern never walks the machine through a link; one that leads outside
// is a problem of the pattern, and a link back into a folder already
// walked is not walked again.

// GlobProblem is why pattern Pattern (an index into the patterns Glob was
// given) cannot be used as written.
type GlobProblem struct {
	Pattern int
	Msg     string
}

// maxGlobFiles bounds the files patterns may match: a pattern that walks
// a whole disk is a mistake, and the key would read every file.
const maxGlobFiles = 100_000

// Glob returns the regular files under base (an existing folder) that the
// patterns name, less those the ! patterns name, as paths relative to
// base with / between parts, sorted, each once; a file reached through a
// link keeps the link's name. within reports whether a link may lead to
// a path (absolute, links resolved); nil lets every link be followed. An
// including pattern that matches no file is a problem, and so is one
// that would follow a link out of within, or does not parse.
func Glob(base string, patterns []string, within func(real string) bool) ([]string, []GlobProblem) {
	base = Abs(base)
	var problems []GlobProblem
	found := map[string]bool{}
	var excludes [][]string
	for i, p := range patterns {
		exclude := strings.HasPrefix(p, "!")
		segs, msg := parsePattern(base, strings.TrimPrefix(p, "!"))
		if msg != "" {
			problems = append(problems, GlobProblem{i, msg})
			continue
		}
		if exclude {
			excludes = append(excludes, segs)
			continue
		}
		w := walker{within: within, found: map[string]bool{}}
		w.match("/", segs, nil, false)
		switch {
		case w.problem != "":
			problems = append(problems, GlobProblem{i, w.problem})
		case len(w.found) == 0 && w.skipped:
			problems = append(problems, GlobProblem{i, "matches no file outside a cache folder (a folder holding a " + CacheTagName +
				", as the engine cache folder does, is never walked for inputs)"})
		case len(w.found) == 0:
			problems = append(problems, GlobProblem{i, "matches no file"})
		}
		for f := range w.found {
			found[f] = true
		}
		if len(found) > maxGlobFiles {
			problems = append(problems, GlobProblem{i, fmt.Sprintf("the patterns match more than %d files", maxGlobFiles)})
			return nil, problems
		}
	}
	var out []string
	for f := range found {
		if slices.ContainsFunc(excludes, func(segs []string) bool { return matchesPath(segs, splitPath(f)) }) {
			continue
		}
		rel, err := filepath.Rel(base, f)
		if err != nil {
			rel = f
		}
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return out, problems
}

// parsePattern makes a pattern absolute (relative ones from base), clean,
// and split into its parts; msg says why it cannot be.
func parsePattern(base, p string) (segs []string, msg string) {
	switch {
	case strings.TrimSpace(p) == "":
		return nil, "an empty pattern"
	case strings.ContainsRune(p, 0):
		return nil, "a pattern with a NUL character"
	}
	full := p
	if !path.IsAbs(p) {
		full = filepath.ToSlash(base) + "/" + p
	}
	segs = splitPath(path.Clean(full)) // lexically, as hashFiles does: a/../b is b
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Sprintf("is not a pattern: %v", err)
		}
	}
	return segs, ""
}

// splitPath splits an absolute, clean path into its parts.
func splitPath(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// isWild reports whether a pattern part matches more than itself.
func isWild(seg string) bool { return strings.ContainsAny(seg, `*?[\`) }

// matchesPath reports whether a pattern's parts match a path's, or a
// folder above it (a pattern naming a folder names its files).
func matchesPath(pat, p []string) bool {
	switch {
	case len(pat) == 0:
		return true // the pattern ended on a folder above the path, or on the path
	case pat[0] == "**":
		for skip := 0; skip <= len(p); skip++ {
			if matchesPath(pat[1:], p[skip:]) {
				return true
			}
		}
		return false
	case len(p) == 0:
		return false
	}
	ok, _ := path.Match(pat[0], p[0])
	return ok && matchesPath(pat[1:], p[1:])
}

// walker walks the file system for one including pattern.
type walker struct {
	within  func(string) bool
	found   map[string]bool
	problem string // the first link that would lead out of within
	skipped bool   // a cache folder was left out
}

// folderKey tells a folder apart however it was reached (a link to it).
type folderKey struct{ dev, ino uint64 }

func keyOf(st fs.FileInfo) folderKey {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return folderKey{uint64(sys.Dev), sys.Ino}
	}
	return folderKey{}
}

// match adds the files below dir (a folder, as named) that segs match.
// walked holds the folders walked into to get here, so that a link back
// to one of them is not walked again; walking says whether a wildcard
// came before (links below the pattern's fixed part are checked).
func (w *walker) match(dir string, segs []string, walked []folderKey, walking bool) {
	if w.problem != "" || len(w.found) > maxGlobFiles {
		return
	}
	if len(segs) == 0 {
		w.all(dir, walked)
		return
	}
	seg := segs[0]
	if seg == "**" && len(segs) == 1 {
		w.all(dir, walked) // every file below, at any depth
		return
	}
	if !isWild(seg) {
		next := path.Join(dir, seg)
		if len(segs) == 1 {
			w.take(next, walked, walking)
		} else if key, ok := w.enter(next, walked, walking); ok {
			w.match(next, segs[1:], append(walked, key), walking)
		}
		return
	}
	if seg == "**" {
		w.match(dir, segs[1:], walked, true) // no folder
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // no folder there, or one that cannot be read: nothing matches in it
	}
	for _, e := range entries {
		next := path.Join(dir, e.Name())
		switch ok, _ := path.Match(seg, e.Name()); {
		case seg == "**":
			if key, ok := w.enter(next, walked, true); ok {
				w.match(next, segs, append(walked, key), true) // one folder more
			}
		case !ok:
		case len(segs) == 1:
			w.take(next, walked, true)
		default:
			if key, ok := w.enter(next, walked, true); ok {
				w.match(next, segs[1:], append(walked, key), true)
			}
		}
	}
}

// take adds p, where a pattern ended: a regular file, or every file below
// a folder. walking says whether p was reached by a walk (links checked).
func (w *walker) take(p string, walked []folderKey, walking bool) {
	if !w.mayFollow(p, walking) {
		return
	}
	st, err := os.Stat(p)
	switch {
	case err != nil: // not there, or a link to nothing
	case st.Mode().IsRegular():
		w.found[p] = true
	case st.IsDir() && !slices.Contains(walked, keyOf(st)) && !w.cacheFolder(p):
		w.all(p, append(walked, keyOf(st)))
	}
}

// all adds every regular file below the folder dir.
func (w *walker) all(dir string, walked []folderKey) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if w.problem != "" || len(w.found) > maxGlobFiles {
			return
		}
		w.take(path.Join(dir, e.Name()), walked, true)
	}
}

// enter reports whether p is a folder a walk goes into (a folder, or a
// link to one that may be followed), not walked into on the way here,
// and which.
func (w *walker) enter(p string, walked []folderKey, walking bool) (folderKey, bool) {
	if !w.mayFollow(p, walking) {
		return folderKey{}, false
	}
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() || slices.Contains(walked, keyOf(st)) || w.cacheFolder(p) {
		return folderKey{}, false
	}
	return keyOf(st), true
}

// cacheFolder reports whether the folder p is a cache folder, which a
// walk leaves out (and says so, should the pattern match nothing else).
func (w *walker) cacheFolder(p string) bool {
	if !IsCacheFolder(p) {
		return false
	}
	w.skipped = true
	return true
}

// mayFollow reports whether p may be used: anything but a link; a link
// where the pattern names it as written (not walking), else only one that
// leads into within. A link that leads out of it is the pattern's
// problem.
func (w *walker) mayFollow(p string, walking bool) bool {
	st, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if st.Mode()&fs.ModeSymlink == 0 || !walking || w.within == nil {
		return true
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false // a link to nothing: no file
	}
	if !w.within(real) {
		if w.problem == "" {
			w.problem = fmt.Sprintf("%s is a symbolic link to %s, outside the workspace and allow-paths; a pattern's files are never read through a link that leads out of them", p, real)
		}
		return false
	}
	return true
}
