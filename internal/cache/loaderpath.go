package cache

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/trt-action/trt-action/internal/sigmask"
)

// When neither --trt-lib nor the backend's variable names the library, the
// backend dlopens a bare soname and the dynamic loader picks the file. Most
// datacenter runners work that way (NVIDIA's TensorRT containers put
// libnvinfer in /usr/lib/<triplet>), so the key must find the same file the
// loader would, without loading it. The loader's order for a bare name
// from our backend objects (which carry no RPATH or RUNPATH) is
// LD_LIBRARY_PATH, then /etc/ld.so.cache, then the default folders
// (ld.so(8)); loaderSearch follows it.

// loaderSearch finds sonames the way the dynamic loader does. Its parts are
// fields so tests can stand in for the machine's.
type loaderSearch struct {
	libraryPath string                   // LD_LIBRARY_PATH
	cache       func() map[string]string // soname → path from ld.so.cache, for this process's architecture
	defaults    []string                 // the loader's built-in folders
}

// systemLoader is the running machine's loader search; a variable so tests
// can replace it.
var systemLoader = func() loaderSearch {
	return loaderSearch{
		libraryPath: os.Getenv("LD_LIBRARY_PATH"),
		cache:       ldconfigCache,
		defaults:    defaultLibraryDirs(runtime.GOARCH),
	}
}

// find returns the file the loader would open for soname, or "" when no
// folder it searches has it.
func (s loaderSearch) find(soname string) string {
	// ld.so splits LD_LIBRARY_PATH at colons and semicolons; an empty entry
	// is the current folder, which a CI job should not depend on: skipped.
	for _, dir := range strings.FieldsFunc(s.libraryPath, func(r rune) bool { return r == ':' || r == ';' }) {
		if p := filepath.Join(dir, soname); isFile(p) {
			return p
		}
	}
	if s.cache != nil {
		if p, ok := s.cache()[soname]; ok && isFile(p) {
			return p
		}
	}
	for _, dir := range s.defaults {
		if p := filepath.Join(dir, soname); isFile(p) {
			return p
		}
	}
	return ""
}

// where says which folders find looked in, for a message.
func (s loaderSearch) where() string {
	parts := []string{"LD_LIBRARY_PATH=" + s.libraryPath, "/etc/ld.so.cache"}
	return strings.Join(append(parts, s.defaults...), ", ")
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// ldconfigArch is how `ldconfig -p` tags a library of each Go architecture
// ("libnvinfer.so.10 (libc6,x86-64) => /usr/lib/..."); a 32-bit or foreign
// library of the same name must not be taken for ours.
var ldconfigArch = map[string]string{"amd64": "x86-64", "arm64": "AArch64"}

// ldconfigCache reads the loader's cache through `ldconfig -p` (bounded:
// it reads one file, so a second is plenty), once a process: every
// library a run names is looked up in the same cache, so one ldconfig is
// spawned, not one a lookup. No ldconfig, or an error, gives an empty
// cache, and the default folders are still searched. The map is shared:
// callers only read it.
var ldconfigCache = sync.OnceValue(func() map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, ldconfig := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"} {
		out, err := sigmask.Output(exec.CommandContext(ctx, ldconfig, "-p"))
		if err == nil {
			return parseLdconfig(out, ldconfigArch[runtime.GOARCH])
		}
	}
	return nil
})

// parseLdconfig maps each soname of arch to its path in `ldconfig -p`
// output; the first line for a name wins, as in the loader.
func parseLdconfig(out []byte, arch string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, rest, ok := strings.Cut(strings.TrimSpace(sc.Text()), " (")
		if !ok {
			continue
		}
		tags, path, ok := strings.Cut(rest, ") => ")
		if !ok || !archTagged(tags, arch) {
			continue
		}
		if _, seen := m[name]; !seen {
			m[name] = path
		}
	}
	return m
}

// archTagged reports whether ldconfig's tags ("libc6,x86-64",
// "libc6,AArch64,hwcap: ...") name arch. With no arch known, a line
// without a 64-bit tag is not taken on faith either.
func archTagged(tags, arch string) bool {
	if arch == "" {
		return false
	}
	for _, t := range strings.Split(tags, ",") {
		if strings.TrimSpace(t) == arch {
			return true
		}
	}
	return false
}

// defaultLibraryDirs are the loader's built-in folders on Debian/Ubuntu
// and Red Hat style systems, multiarch first.
func defaultLibraryDirs(goarch string) []string {
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[goarch]
	var dirs []string
	if triplet != "" {
		dirs = append(dirs, "/lib/"+triplet, "/usr/lib/"+triplet)
	}
	return append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
}
