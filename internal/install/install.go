// Package install decides how this copy of trt-action was installed: with
// pip (a wheel), with pip install --target, from a release tarball, into a
// prefix (the container image), built in a source checkout, or none of
// these (a binary copied on its own). It reads only where the binary is
// and what lies beside it.
//
// Every message that tells a user how to get a missing piece (a backend
// shared object, TensorRT-RTX's library) asks it (internal/backend's
// InstallHint, native's messages for a backend that was not found), so a
// pip user is never told to run make or a script the wheel does not ship,
// and a --target install says why its backends are missing. It imports
// nothing of trt-action's.
package install

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Kind is how a copy of trt-action was installed.
type Kind int

const (
	// Alone: a binary with nothing of an installation beside it (copied
	// away from its folder, or built with go build).
	Alone Kind = iota
	// Source: REPO/bin/trt-action in a checkout whose go.mod is this
	// module's (make's output).
	Source
	// Tarball: a release tarball's folder, as scripts/dist lays it out:
	// the binary with README.md and docs/ beside it (and lib/).
	Tarball
	// Prefix: PREFIX/bin/trt-action with PREFIX/lib/trt-action, where the
	// container image (Dockerfile) puts the backends.
	Prefix
	// Wheel: pip put the binary in PREFIX/bin, and trt-action's
	// dist-info is in one of PREFIX's package folders.
	Wheel
	// WheelTarget: pip install --target DIR: the dist-info in DIR itself,
	// the binary in DIR/bin. pip leaves a wheel's data files, the
	// backends, out of a target folder.
	WheelTarget
)

func (k Kind) String() string {
	return [...]string{Alone: "alone", Source: "source", Tarball: "tarball", Prefix: "prefix", Wheel: "wheel", WheelTarget: "wheel --target"}[k]
}

// Installation is where a copy of trt-action came from.
type Installation struct {
	Kind Kind
	// Root is the folder the installation is: the checkout, the
	// tarball's folder, the prefix, or the --target folder; the binary's
	// folder for Alone.
	Root string
	// Sites are the package folders of the Python environment pip
	// installed trt-action into (Wheel, WheelTarget), newest Python first.
	Sites []string
}

// Describe is the installation in words, for trt-action version:
// "with pip, in /venv".
func (in Installation) Describe() string {
	switch in.Kind {
	case Source:
		return "built in a source checkout, " + in.Root
	case Tarball:
		return "from a release tarball, in " + in.Root
	case Prefix:
		return "in the prefix " + in.Root + " (the binary in bin/, the backends in lib/trt-action/)"
	case Wheel:
		return "with pip, in " + in.Root
	case WheelTarget:
		return "with pip install --target " + in.Root + ", which leaves the backends out"
	}
	return "a binary on its own, in " + in.Root
}

// Pip reports whether pip installed this copy (the Python environment's
// packages are trt-action's then).
func (in Installation) Pip() bool { return in.Kind == Wheel || in.Kind == WheelTarget }

// MissingBackends says what to do about a backend shared object this
// installation should have and lacks; dirVar is the variable that names
// a folder of backends. Source checkouts are not answered here: there
// the fix is to build it, which the backend registry says how to.
func (in Installation) MissingBackends(dirVar string) string {
	or := "; or set " + dirVar + " to a folder holding them (a release tarball's lib/ has every backend of its platform)"
	switch in.Kind {
	case Wheel:
		return "pip installs the backends with the binary, into " + filepath.Join(in.Root, "lib", "trt-action") +
			", which lacks it: reinstall (pip install --force-reinstall trt-action)" + or
	case WheelTarget:
		return "trt-action was installed with pip install --target (" + in.Root + "), which leaves a wheel's data files out, " +
			"and the backends are data files: install it with pip into a venv, --user or --prefix instead" + or
	case Tarball:
		return "the release tarball holds the backends in lib/ beside the binary (" + filepath.Join(in.Root, "lib") +
			"): unpack it again whole" + or
	case Prefix:
		return "the backends belong in " + filepath.Join(in.Root, "lib", "trt-action") + or
	}
	return "a release keeps the backends in lib/ beside the binary: copy that folder along with it, or set " +
		dirVar + " to the folder holding them"
}

// Current is the installation of the running executable, looked up once
// per process (the folders do not change while trt-action runs); Alone in
// the working folder when the executable cannot be told.
var Current = sync.OnceValue(func() Installation {
	exe, _ := os.Executable()
	return Of(exe)
})

// Of is the installation of the trt-action binary at exe. Links are
// resolved first: pip puts the binary in PREFIX/bin, and a link to it
// elsewhere (~/bin/trt-action) still belongs to that installation.
func Of(exe string) Installation {
	if exe == "" {
		return Installation{Kind: Alone}
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	dir := filepath.Dir(exe)
	prefix := filepath.Dir(dir)
	if sites := pythonEnvironment(prefix); len(sites) > 0 {
		kind := Wheel
		if len(sites) == 1 && sites[0] == prefix {
			kind = WheelTarget
		}
		return Installation{Kind: kind, Root: prefix, Sites: sites}
	}
	switch {
	case filepath.Base(dir) == "bin" && isModuleRoot(prefix):
		return Installation{Kind: Source, Root: prefix}
	case isFile(filepath.Join(dir, "README.md")) && isDir(filepath.Join(dir, "docs")):
		return Installation{Kind: Tarball, Root: dir}
	case filepath.Base(dir) == "bin" && isDir(filepath.Join(prefix, "lib", "trt-action")):
		return Installation{Kind: Prefix, Root: prefix}
	}
	return Installation{Kind: Alone, Root: dir}
}

// module is this module's path, as go.mod's first directive names it.
const module = "github.com/trt-action/trt-action"

// isModuleRoot reports whether dir holds trt-action's go.mod.
func isModuleRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == module
		}
	}
	return false
}

// distInfo is the glob of trt-action's own installed-distribution folder
// (the wheel's trt_action-VERSION.dist-info).
const distInfo = "trt_action-*.dist-info"

// pythonEnvironment lists the package folders of the Python environment
// that trt-action was pip-installed into under prefix (the parent of the
// binary's folder): of prefix/lib{,64}/python3.*/{site,dist}-packages and
// prefix itself (pip install --target puts packages there and the binary
// in prefix/bin), those holding trt-action's dist-info folder, each once
// (a venv's lib64 is a link to lib), newest Python first. A trt-action unpacked from a tarball next to some
// unrelated Python has none: that Python's packages are not trt-action's
// environment.
func pythonEnvironment(prefix string) []string {
	var out, seen []string
	for _, dir := range sitePackages(prefix) {
		if matches, _ := filepath.Glob(filepath.Join(glob(dir), distInfo)); len(matches) == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || slices.Contains(seen, real) {
			continue
		}
		seen = append(seen, real)
		out = append(out, dir)
	}
	return out
}

// glob escapes the pattern characters of a path, so a folder named a[1]
// is looked in, not matched.
func glob(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sitePackages lists the folders under prefix where pip may have put
// packages: the install schemes' purelib and platlib (lib and lib64;
// site-packages, and dist-packages on Debian's Python), then prefix itself
// (--target).
func sitePackages(prefix string) []string {
	var out []string
	for _, lib := range []string{"lib", "lib64"} {
		pythons, _ := filepath.Glob(filepath.Join(glob(prefix), lib, "python3.*"))
		slices.SortStableFunc(pythons, newerPythonFirst)
		for _, py := range pythons {
			for _, kind := range []string{"site-packages", "dist-packages"} {
				if dir := filepath.Join(py, kind); isDir(dir) {
					out = append(out, dir)
				}
			}
		}
	}
	return append(out, prefix)
}

// newerPythonFirst orders python3.N folders by N, highest first (python3.9
// sorts after python3.12 as text); a name without a number goes last.
func newerPythonFirst(a, b string) int {
	minor := func(p string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "python3."))
		if err != nil {
			return -1
		}
		return n
	}
	return minor(b) - minor(a)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
