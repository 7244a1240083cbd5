package matrix

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/trt-action/trt-action/internal/runfiles"
)

// workspace is the folder a matrix file may write into, plus the folders
// its allow-paths add. A pull request can change the matrix file, so without
// this an engine: ../../../../home/runner/.bashrc would overwrite whatever
// the runner's user may write.
type workspace struct {
	root    string   // symlinks resolved
	why     string   // where root came from, for the error message
	allowed []string // allow-paths, symlinks resolved
}

// findWorkspace picks the matrix file's workspace: GITHUB_WORKSPACE when
// running in Actions and the file lies in it; else the root of the git
// repository the file is in; else the file's folder. A matrix file outside
// GITHUB_WORKSPACE was put there by the workflow, not checked out with the
// repository, so its own repository or folder is the boundary.
func findWorkspace(matrixDir string) workspace {
	dir := runfiles.Real(matrixDir)
	if ws := os.Getenv("GITHUB_WORKSPACE"); ws != "" && os.Getenv("GITHUB_ACTIONS") == "true" {
		if root := runfiles.Real(ws); runfiles.Within(dir, root) {
			return workspace{root: root, why: "GITHUB_WORKSPACE"}
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return workspace{root: d, why: "the matrix file's git repository"}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return workspace{root: dir, why: "the matrix file's folder"}
}

// allows reports whether p, absolute with symlinks resolved, lies in the
// workspace or in an allowed folder.
func (ws workspace) allows(p string) bool {
	if runfiles.Within(p, ws.root) {
		return true
	}
	for _, a := range ws.allowed {
		if runfiles.Within(p, a) {
			return true
		}
	}
	return false
}

// realDir is runfiles.Real for a folder, remembered: the builds of a
// matrix mostly write into the same few folders.
func (w *walker) realDir(dir string) string {
	if r, ok := w.realDirs[dir]; ok {
		return r
	}
	if w.realDirs == nil {
		w.realDirs = map[string]string{}
	}
	r := runfiles.Real(dir)
	w.realDirs[dir] = r
	return r
}

// readAllowPaths reads the top-level allow-paths: folders outside the
// workspace that outputs may be written to, relative to the matrix file.
func (d *decoder) readAllowPaths(n *yaml.Node) {
	items, _ := d.w.items(n, "allow-paths", "a list of folders")
	for _, item := range items {
		if p, ok := d.path(item, "allow-paths"); ok {
			d.w.ws.allowed = append(d.w.ws.allowed, runfiles.Real(p))
		}
	}
}

// outputPath is path for a file trt-action writes (an engine, a timing
// cache). It must resolve inside the workspace or an allowed folder, with
// symlinked folders followed, and must not itself be a symbolic link: a
// write never goes through a link to land elsewhere.
func (d *decoder) outputPath(n *yaml.Node, what string) (string, bool) {
	p, ok := d.path(n, what)
	if !ok {
		return p, false
	}
	return p, d.checkOutput(d.w.pos(n), what, p)
}

// checkOutput reports, at pos, why trt-action may not write to p.
func (d *decoder) checkOutput(pos Pos, what, p string) bool {
	abs := runfiles.Abs(p)
	if msg := outputProblem(p, abs); msg != "" {
		d.w.errs.add(pos, "%s: %s", what, msg)
		return false
	}
	real := filepath.Join(d.w.realDir(filepath.Dir(abs)), filepath.Base(abs))
	if !d.w.ws.allows(real) {
		d.w.errs.add(pos, "%s: %s resolves to %s, outside the workspace %s (%s); write inside it, or allow the folder with a top-level allow-paths: [%s]",
			what, quoted(p), real, d.w.ws.root, d.w.ws.why, filepath.Dir(real))
		return false
	}
	return true
}

// outputProblem says why the file at p (abs: runfiles.Abs(p)) cannot be
// an output, as it is now: a link (a write never goes through one), or
// not a regular file; "" when it can be, or is not there.
func outputProblem(p, abs string) string {
	fi, err := os.Lstat(abs)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return quoted(p) + " is a symbolic link; trt-action does not write through links, so remove it or name the file it points to"
	case err == nil && !fi.Mode().IsRegular():
		return quoted(p) + " exists and is not a regular file"
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission):
		return quoted(p) + ": " + err.Error()
	}
	return ""
}

// checkOutputFolder reports, at pos, why trt-action may not write into the
// folder p (the cache folder): it must resolve, symlinks followed, inside
// the workspace or an allowed folder, and must not be a file.
func (d *decoder) checkOutputFolder(pos Pos, what, p string) bool {
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		d.w.errs.add(pos, "%s: %s exists and is not a folder", what, quoted(p))
		return false
	}
	real := runfiles.Real(p)
	if !d.w.ws.allows(real) {
		d.w.errs.add(pos, "%s: %s resolves to %s, outside the workspace %s (%s); use a folder inside it, or allow it with a top-level allow-paths: [%s]",
			what, quoted(p), real, d.w.ws.root, d.w.ws.why, real)
		return false
	}
	return true
}
