package cache

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/matrix"
)

// The library's identity, read from its files without loading them: plan
// --json and cache key run where TensorRT cannot be (or should not be)
// loaded. Where a backend's library comes from is decided by
// backend.LocateLibrary, which a build asks too (the worker tells the
// shim): --trt-lib, else the backend's variable, else its wheel folder in
// trt-action's Python environment, else the dynamic loader's search path.
// Which files the shim then opens (native/backends/shim.cc, load_library:
// the flavour's soname in a folder, the ONNX parser beside the library) is
// followed here.

// libraryFiles is what one backend loads.
type libraryFiles struct {
	variable string   // the environment variable naming the library
	wheel    string   // the wheel folder in trt-action's Python environment that may hold it
	infer    []string // library file names to look for in a folder, in order
	parser   []string // parser file names, by infer's position (or all when unknown)
}

// libraryOf is what backend loads, as the backend registry says: every
// flavour's library, newest major first (which one a folder's library is,
// only loading tells).
func libraryOf(be backend.Backend) libraryFiles {
	lib := libraryFiles{variable: be.Library.Variable, wheel: be.Library.WheelFolder}
	for i := len(be.Flavours) - 1; i >= 0; i-- {
		lib.infer = append(lib.infer, be.Flavours[i].InferSoname)
		lib.parser = append(lib.parser, be.Flavours[i].ParserSoname)
	}
	return lib
}

// locateLibrary is backend.LocateLibrary; a variable so tests can stand in
// a made-up Python environment for the test binary's.
var locateLibrary = backend.LocateLibrary

// LibraryUnknownError says why a backend's library cannot be named without
// loading it. Callers show the key as unknown with this reason.
type LibraryUnknownError struct {
	Backend string
	Reason  string
}

func (e *LibraryUnknownError) Error() string {
	return fmt.Sprintf("the %s library cannot be identified without loading it: %s", e.Backend, e.Reason)
}

// libraryIdentity names the exact library (and ONNX parser) backend would
// load, from their files: the ELF GNU build-id of each, or the SHA-256 of
// its content when it has none. libPath is --trt-lib (a file or a folder);
// "" lets backend.LocateLibrary look further (the backend's variable, its
// wheel folder in trt-action's Python environment). When nothing names it
// the library comes from the dynamic loader's search path: the file the
// loader would pick is found the loader's way (loaderpath.go). A library
// found nowhere is a *LibraryUnknownError, as is a named location without
// the library.
//
// A backend with no library (the simulator) is named by its name.
func libraryIdentity(name, libPath string) (string, error) {
	be, ok := backend.Lookup(name)
	if !ok {
		return "", unknownBackend(name)
	}
	return identityAt(be, locateLibrary(be, libPath))
}

// identityAt is libraryIdentity of be's library at lib.
func identityAt(be backend.Backend, lib backend.LibraryLocation) (string, error) {
	if be.BuiltIn() {
		return be.Name, nil
	}
	files, err := filesAt(be, lib)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(files))
	for _, f := range files {
		id, err := fileIdentity(f)
		if err != nil {
			return "", err
		}
		// The file's own name, links followed: libnvinfer.so and
		// libnvinfer.so.10 name the same libnvinfer.so.10.16.0.
		if real, err := filepath.EvalSymlinks(f); err == nil {
			f = real
		}
		parts = append(parts, filepath.Base(f)+" "+id)
	}
	return strings.Join(parts, "; "), nil
}

// LibraryFiles lists the files backend name loads: its library and ONNX
// parser, found where a build finds them (backend.LocateLibrary, from
// trtLib, which is --trt-lib), without loading them. A backend with no
// library (the simulator) loads none. A library found nowhere is a
// *LibraryUnknownError.
func LibraryFiles(name, trtLib string) ([]string, error) {
	be, ok := backend.Lookup(name)
	if !ok {
		return nil, unknownBackend(name)
	}
	return filesAt(be, locateLibrary(be, trtLib))
}

func unknownBackend(name string) error {
	return fmt.Errorf("backend %q: unknown backend; allowed: %s", name, strings.Join(backend.Names(), ", "))
}

// filesAt is LibraryFiles of be's library at lib.
func filesAt(be backend.Backend, lib backend.LibraryLocation) ([]string, error) {
	if be.BuiltIn() {
		return nil, nil
	}
	var files []string
	var err error
	if lib.Path == "" {
		files, err = libraryOf(be).onSearchPath(systemLoader())
	} else {
		files, err = libraryOf(be).locate(lib)
	}
	if err != nil {
		return nil, &LibraryUnknownError{Backend: be.Name, Reason: err.Error()}
	}
	return files, nil
}

// locate lists the library files that loading from lib would open: the
// library, then its parser beside it.
func (l libraryFiles) locate(lib backend.LibraryLocation) ([]string, error) {
	libPath := lib.Path
	var infer string
	parsers := l.parser
	if fi, err := os.Stat(libPath); err != nil {
		return nil, fmt.Errorf("%s: %v", lib.Setting(), describeOpenError(libPath, err))
	} else if !fi.IsDir() {
		infer = libPath
		if major := soMajor(libPath); major != "" {
			parsers = filterMajor(l.parser, major)
		}
	} else {
		// A folder: the same names the loader tries; with both majors
		// present, both are named (the key then changes with either).
		var found []string
		for i, name := range l.infer {
			p := filepath.Join(libPath, name)
			if _, err := os.Stat(p); err == nil {
				found = append(found, p)
				parsers = append(parsers[:0:0], l.parser[i])
			}
		}
		switch len(found) {
		case 0:
			return nil, fmt.Errorf("%s holds none of %s", lib.Setting(), strings.Join(l.infer, ", "))
		case 1:
			infer = found[0]
		default:
			return append(found, existing(libPath, l.parser)...), nil
		}
	}
	beside := existing(filepath.Dir(infer), parsers)
	if len(beside) == 0 {
		// The backend then asks the loader for the parser by name.
		search := systemLoader()
		for _, p := range parsers {
			if found := search.find(p); found != "" {
				return []string{infer, found}, nil
			}
		}
		return nil, fmt.Errorf("no ONNX parser (%s) beside %s, nor on the loader's search path (%s)",
			strings.Join(parsers, " or "), infer, search.where())
	}
	return append([]string{infer}, beside...), nil
}

// onSearchPath lists the library files the backend would load from the
// dynamic loader's search path (neither --trt-lib nor the variable set):
// each library name the loader finds (tensorrt: both majors when both are
// there, as for a folder: only loading tells which a backend takes), and
// for each its parser, beside it or else on the search path too.
func (l libraryFiles) onSearchPath(s loaderSearch) ([]string, error) {
	var files []string
	for i, name := range l.infer {
		infer := s.find(name)
		if infer == "" {
			continue
		}
		parser := existing(filepath.Dir(infer), l.parser[i:i+1])
		if len(parser) == 0 {
			if p := s.find(l.parser[i]); p != "" {
				parser = []string{p}
			}
		}
		if len(parser) == 0 {
			return nil, fmt.Errorf("%s is at %s, but its ONNX parser %s is neither beside it nor on the loader's search path (%s)",
				name, infer, l.parser[i], s.where())
		}
		files = append(files, infer, parser[0])
	}
	if len(files) == 0 {
		wheel := ""
		if l.wheel != "" {
			wheel = ", trt-action's Python environment (when pip-installed) has no " + l.wheel + " folder holding it"
		}
		return nil, fmt.Errorf("neither --trt-lib nor %s is set%s, and the loader's search path (%s) has none of %s; "+
			"name the library's folder with --trt-lib or %s", l.variable, wheel, s.where(), strings.Join(l.infer, ", "), l.variable)
	}
	return files, nil
}

// existing returns the names in dir that are files.
func existing(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

var soVersion = regexp.MustCompile(`\.so\.([0-9]+)`)

// soMajor reads the major version from a file name like libnvinfer.so.10.16.0
// (after links: libnvinfer.so is a link to one).
func soMajor(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if m := soVersion.FindStringSubmatch(filepath.Base(path)); m != nil {
		return m[1]
	}
	return ""
}

func filterMajor(names []string, major string) []string {
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".so."+major) {
			out = append(out, n)
		}
	}
	if out == nil {
		return names
	}
	return out
}

// fileIdentity is "gnu-build-id HEX" from an ELF file's build-id note, else
// "sha256 HEX" of the file.
func fileIdentity(path string) (string, error) {
	if id := buildID(path); id != "" {
		return "gnu-build-id " + id, nil
	}
	// Once per run, before any build: no build's budget applies yet.
	sum, err := hashFile(context.Background(), path)
	if err != nil {
		return "", err
	}
	return "sha256 " + sum, nil
}

// noteGNUBuildID is NT_GNU_BUILD_ID, the type of the note holding it.
const noteGNUBuildID = 3

// buildID returns the hex GNU build-id of an ELF file, or "".
func buildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(p.Open(), 1<<20))
		if err != nil {
			continue
		}
		if id := findBuildID(data, f.ByteOrder); id != "" {
			return id
		}
	}
	return ""
}

// findBuildID walks ELF notes (namesz, descsz, type, name, desc; name and
// desc padded to 4 bytes) for the GNU build-id.
func findBuildID(data []byte, order binary.ByteOrder) string {
	for len(data) >= 12 {
		namesz, descsz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
		data = data[12:]
		nameEnd, descEnd := align4(uint64(namesz)), align4(uint64(namesz))+uint64(descsz)
		if descEnd > uint64(len(data)) {
			return ""
		}
		name := bytes.TrimRight(data[:namesz], "\x00")
		if typ == noteGNUBuildID && string(name) == "GNU" && descsz > 0 {
			return hex.EncodeToString(data[nameEnd:descEnd])
		}
		data = data[min(align4(descEnd), uint64(len(data))):]
	}
	return ""
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// Env is the Env of a build on the backend called name:
// libraryIdentity(name, libPath), remembered for the run (a library without
// a build-id is hashed once), and target for a backend whose engines fit
// the GPU they were built on (tensorrt) only. A *LibraryUnknownError is returned
// as libraryIdentity returns it.
func (h *Hasher) Env(name, libPath, target string) (Env, error) {
	be, ok := backend.Lookup(name)
	if !ok {
		return Env{}, unknownBackend(name)
	}
	return h.envAt(be, locateLibrary(be, libPath), target)
}

// BuildEnv is Env for build b. A build with run: loads the library its
// program's Python environment holds in the backend's wheel folder, where
// it holds one (its bindings load that: backend.LocateLibraryIn); else,
// and for every other build, the library Env names. A Python program's
// library that is found nowhere is its environment's (a wheel trt-action
// does not know, such as NVIDIA's tensorrt-cu12-libs): the key's
// distributions name its version, and Library says so.
func (h *Hasher) BuildEnv(b matrix.Build, libPath, target string) (Env, error) {
	be, ok := backend.Lookup(b.Backend)
	if !ok {
		return Env{}, unknownBackend(b.Backend)
	}
	python := false
	if b.Script != nil {
		if p := h.program(b.Script); p.err == nil && p.prog.Python != nil {
			if lib, ok := backend.LocateLibraryIn(be, p.prog.Python.Sites); ok {
				return h.envAt(be, lib, target)
			}
			python = true
		}
	}
	env, err := h.envAt(be, locateLibrary(be, libPath), target)
	if unknown := (*LibraryUnknownError)(nil); python && errors.As(err, &unknown) {
		env, err = Env{Library: libraryOfEnvironment}, nil
		if be.Target == backend.TargetBuildGPU {
			env.Target = target
		}
	}
	return env, err
}

// libraryOfEnvironment is a Python program's library that trt-action finds
// nowhere, as its key holds it: its environment's distributions name it.
const libraryOfEnvironment = "the program's Python environment's (its distributions)"

// envAt is the Env of a build on be whose library is at lib.
func (h *Hasher) envAt(be backend.Backend, lib backend.LibraryLocation, target string) (Env, error) {
	name := be.Name
	// Remembered by where the library is, as a build would load it: the
	// same file is hashed once, whichever way it was named.
	id := libraryQuery{name, lib}
	h.mu.Lock()
	known, ok := h.libraries[id]
	h.mu.Unlock()
	if !ok {
		known.identity, known.err = identityAt(be, lib)
		h.mu.Lock()
		h.libraries[id] = known
		h.mu.Unlock()
	}
	if known.err != nil {
		return Env{}, known.err
	}
	env := Env{Library: known.identity}
	if be.Target == backend.TargetBuildGPU {
		env.Target = target
	}
	return env, nil
}

// BuildKey is one build's key, or why it has none (a
// *LibraryUnknownError, or a file that could not be read).
type BuildKey struct {
	Key Key
	Err error
}

// Keys computes every build's key before any GPU is chosen: the library
// from libPath (--trt-lib) or the backend's variable, no target. cache key
// uses it (plan --json uses PlanKeys, runenv.go, which names the GPU as a
// build would). Hashing stops when ctx ends.
func (h *Hasher) Keys(ctx context.Context, builds []matrix.Build, libPath string) []BuildKey {
	out := make([]BuildKey, len(builds))
	for i, b := range builds {
		env, err := h.BuildEnv(b, libPath, "")
		if err == nil {
			out[i].Key, err = h.Key(ctx, b, env)
		}
		if err != nil {
			out[i].Err = fmt.Errorf("build %s: %w", b.Name, err)
		}
	}
	return out
}

// libraryQuery is what libraryIdentity's answer depends on.
type libraryQuery struct {
	backend string
	library backend.LibraryLocation
}

type libraryAnswer struct {
	identity string
	err      error
}
