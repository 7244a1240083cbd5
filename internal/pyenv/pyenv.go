// Package pyenv reads what a command would run, from files alone, never
// running it: the program its first word names (found as exec finds it),
// and, for a Python program, the Python environment it runs in (its
// interpreter, its package folders) and the distributions installed
// there, by name and version. The engine cache keys a build with run: by
// them (internal/cache), so that a program whose packages change builds
// again.
//
// A command is a Python program when its first word is a Python
// interpreter (python, python3, python3.12, as found on PATH), or a script
// whose #! line names one (directly or through env), or a script in a
// virtual environment's bin/ (a folder whose parent has pyvenv.cfg: pip
// writes console scripts there, with a #!/bin/sh line where the
// interpreter's path is too long for #!). Its environment is the
// interpreter's: a virtual environment (PEP 405: pyvenv.cfg beside its
// bin/; with include-system-site-packages = true, the base environment's
// packages too), or the prefix it is installed in (with the user's
// site-packages first, as site adds them unless PYTHONNOUSERSITE is set).
// Installed distributions are the *.dist-info folders (their METADATA)
// and *.egg-info folders or files (PKG-INFO) in its package folders
// (https://packaging.python.org/en/latest/specifications/recording-installed-packages/);
// where two folders have one distribution, the first on Python's search
// order wins, as an import would. Not read: .pth files and the code of
// editable installs (a project installed with pip install -e is its
// dist-info's version, not its files).
package pyenv

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Program is what a command's first word is.
type Program struct {
	// Path is the file the first word names, found as exec finds it: a
	// word with a / relative to the command's folder, else the first
	// executable regular file of that name on PATH.
	Path string
	// Python is the environment the program runs in; nil when it is not
	// a Python program.
	Python *Env
}

// Env is a Python environment.
type Env struct {
	// Interpreter is the interpreter's path as found (a virtual
	// environment's bin/python, which is a link to its base's).
	Interpreter string
	// Root is the environment's folder: the virtual environment, or the
	// prefix the interpreter is installed in.
	Root string
	// Venv says whether Root is a virtual environment.
	Venv bool
	// Sites are its package folders that exist, in the order Python
	// searches them, each once.
	Sites []string
}

// Find finds what argv0, the first word of a command started in dir with
// the environment getenv gives (PATH, HOME, PYTHONNOUSERSITE), runs. An
// error says the word names no program.
func Find(argv0, dir string, getenv func(string) string) (Program, error) {
	path, err := lookPath(argv0, dir, getenv("PATH"))
	if err != nil {
		return Program{}, err
	}
	p := Program{Path: path}
	if interp := pythonOf(path, dir, getenv); interp != "" {
		p.Python = envOf(interp, getenv)
	}
	return p, nil
}

// lookPath finds name as exec.LookPath would with PATH path, in dir: a
// name with a / is taken relative to dir; an empty entry of PATH, or ".",
// is dir.
func lookPath(name, dir, path string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("the command %s: %w", name, err)
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || d == "." {
			d = dir
		} else if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		if p := filepath.Join(d, name); executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the command %s is not found on its PATH (%s)", name, path)
}

// executable says why p is not an executable regular file, nil when it is.
func executable(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return errors.New("not a regular file")
	case st.Mode()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}

// pythonName is a Python interpreter's file name: python, python3,
// python3.12 (not python3-config or pythonw).
var pythonName = regexp.MustCompile(`^python([0-9]+(\.[0-9]+)?)?$`)

// IsInterpreter reports whether a file name is a Python interpreter's.
func IsInterpreter(name string) bool { return pythonName.MatchString(filepath.Base(name)) }

// pythonOf is the interpreter the program at path runs under: path itself,
// its #! line's Python, or the Python of the virtual environment whose
// bin/ holds it; "" for none.
func pythonOf(path, dir string, getenv func(string) string) string {
	if IsInterpreter(path) {
		return path
	}
	if interp := shebangPython(path, dir, getenv("PATH")); interp != "" {
		return interp
	}
	bin := filepath.Dir(path)
	if isFile(filepath.Join(filepath.Dir(bin), venvConfig)) {
		for _, name := range []string{"python", "python3"} {
			if p := filepath.Join(bin, name); executable(p) == nil {
				return p
			}
		}
	}
	return ""
}

// shebangPython is the Python interpreter the #! line of the file at path
// names (through env, found on path), or "".
func shebangPython(path, dir, pathVar string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 512)).ReadString('\n')
	if err != nil && line == "" || !strings.HasPrefix(line, "#!") {
		return ""
	}
	words := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(words) == 0 {
		return ""
	}
	interp := words[0]
	if filepath.Base(interp) == "env" {
		i := 1
		for i < len(words) && (strings.HasPrefix(words[i], "-") || strings.Contains(words[i], "=")) {
			i++ // env's options (-S) and NAME=value
		}
		if i == len(words) {
			return ""
		}
		found, err := lookPath(words[i], dir, pathVar)
		if err != nil {
			return ""
		}
		interp = found
	}
	if !IsInterpreter(interp) {
		return ""
	}
	return interp
}

// venvConfig is a virtual environment's configuration file, in its root.
const venvConfig = "pyvenv.cfg"

// envOf is the environment of the interpreter interp.
func envOf(interp string, getenv func(string) string) *Env {
	e := &Env{Interpreter: interp}
	root := filepath.Dir(filepath.Dir(interp))
	if cfg, err := readConfig(filepath.Join(root, venvConfig)); err == nil {
		e.Root, e.Venv = root, true
		version := cmp.Or(versionOf(cfg["version_info"]), versionOf(cfg["version"]), versionOfName(interp))
		e.Sites = sitesOf(root, version, false)
		if strings.EqualFold(cfg["include-system-site-packages"], "true") && cfg["home"] != "" {
			e.Sites = append(e.Sites, sitesOf(filepath.Dir(cfg["home"]), version, true)...)
		}
	} else {
		real, err := filepath.EvalSymlinks(interp)
		if err != nil {
			real = interp
		}
		e.Root = filepath.Dir(filepath.Dir(real))
		version := versionOfName(real)
		e.Sites = append(userSite(version, getenv), sitesOf(e.Root, version, true)...)
	}
	e.Sites = existingOnce(e.Sites)
	return e
}

// readConfig reads pyvenv.cfg's key = value lines.
func readConfig(p string) (map[string]string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return out, nil
}

var versionPrefix = regexp.MustCompile(`^([0-9]+\.[0-9]+)`)

// versionOf is the X.Y of a version ("3.11.7" is 3.11), "" for none.
func versionOf(v string) string {
	if m := versionPrefix.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return ""
}

// versionOfName is the X.Y of an interpreter's file name (python3.11),
// links resolved; "" when the name has none.
func versionOfName(interp string) string {
	if real, err := filepath.EvalSymlinks(interp); err == nil {
		interp = real
	}
	return versionOf(strings.TrimPrefix(filepath.Base(interp), "python"))
}

// sitesOf lists the package folders of the environment at root for
// Python version (X.Y; "" for any python3.*): site-packages of lib and
// lib64, and for an installation (not a virtual environment) the
// dist-packages folders Debian's Python uses too.
func sitesOf(root, version string, installation bool) []string {
	libs := []string{"python" + version}
	if version == "" {
		libs = globNames(filepath.Join(root, "lib"), "python3.*")
	}
	var out []string
	for _, lib := range libs {
		out = append(out, filepath.Join(root, "lib", lib, "site-packages"), filepath.Join(root, "lib64", lib, "site-packages"))
		if installation {
			out = append(out, filepath.Join(root, "local", "lib", lib, "dist-packages"), filepath.Join(root, "lib", lib, "dist-packages"))
		}
	}
	if installation {
		out = append(out, filepath.Join(root, "lib", "python3", "dist-packages"))
	}
	return out
}

// userSite is the user's site-packages, which site puts before an
// installation's unless PYTHONNOUSERSITE is set.
func userSite(version string, getenv func(string) string) []string {
	home := getenv("HOME")
	if home == "" || getenv("PYTHONNOUSERSITE") != "" || version == "" {
		return nil
	}
	return []string{filepath.Join(home, ".local", "lib", "python"+version, "site-packages")}
}

func globNames(dir, pattern string) []string {
	matches, _ := filepath.Glob(filepath.Join(dir, pattern))
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = filepath.Base(m)
	}
	slices.Sort(names)
	return names
}

// existingOnce keeps the folders that exist, each once by its real path
// (a virtual environment's lib64 is a link to lib).
func existingOnce(dirs []string) []string {
	var out, seen []string
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil || slices.Contains(seen, real) {
			continue
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			continue
		}
		seen = append(seen, real)
		out = append(out, d)
	}
	return out
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Distributions lists the distributions installed in e: normalized name
// (PEP 503: lower case, runs of -, _ and . one -) to version, the first
// found in e's search order for each name. A record that cannot be read
// is an error: the environment cannot be told.
func (e *Env) Distributions() (map[string]string, error) {
	out := map[string]string{}
	for _, site := range e.Sites {
		entries, err := os.ReadDir(site)
		if err != nil {
			return nil, err
		}
		for _, d := range entries {
			meta := metadataFile(site, d)
			if meta == "" {
				continue
			}
			name, version, err := readMetadata(meta)
			if err != nil {
				return nil, fmt.Errorf("the installed distribution %s: %w", filepath.Join(site, d.Name()), err)
			}
			if _, seen := out[name]; !seen {
				out[name] = version
			}
		}
	}
	return out, nil
}

// metadataFile is the file holding the metadata of the distribution d
// records in site: a *.dist-info folder's METADATA, an *.egg-info
// folder's PKG-INFO or an *.egg-info file itself; "" for anything else.
func metadataFile(site string, d fs.DirEntry) string {
	p := filepath.Join(site, d.Name())
	switch {
	case strings.HasSuffix(d.Name(), ".dist-info"):
		return filepath.Join(p, "METADATA")
	case strings.HasSuffix(d.Name(), ".egg-info"):
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return filepath.Join(p, "PKG-INFO")
		}
		return p
	}
	return ""
}

// maxHeaders bounds what is read of a metadata file: its headers come
// first, and the description after them can be long.
const maxHeaders = 256 << 10

// readMetadata reads the Name and Version headers of a core metadata file
// (https://packaging.python.org/en/latest/specifications/core-metadata/),
// which end at the first empty line.
func readMetadata(p string) (name, version string, err error) {
	f, err := os.Open(p)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxHeaders))
	sc.Buffer(make([]byte, 64<<10), maxHeaders)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			continue // a header's continuation
		}
		switch strings.ToLower(k) {
		case "name":
			name = normalize(strings.TrimSpace(v))
		case "version":
			version = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	if name == "" || version == "" {
		return "", "", fmt.Errorf("%s has no Name or no Version", p)
	}
	return name, version, nil
}

var separators = regexp.MustCompile(`[-_.]+`)

// normalize is a distribution's name as PEP 503 compares names.
func normalize(name string) string {
	return separators.ReplaceAllString(strings.ToLower(name), "-")
}
