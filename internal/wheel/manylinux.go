package wheel

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Needs is what one ELF file asks of the system it runs on.
type Needs struct {
	File      string            // its name in messages (a path in the wheel)
	Arch      string            // x86_64 or aarch64
	Versions  map[string]string // symbol version (GLIBC_2.34) -> a symbol that needs it
	Libraries []string          // DT_NEEDED, sorted
	Exports   []string          // the dynamic symbols it defines for others (global or weak, not hidden), sorted
}

// isLoader reports whether lib is the dynamic loader, which every policy
// allows and whose symbol versions auditwheel does not count (ld-linux-x86-64.so.2,
// ld-linux-aarch64.so.1).
func isLoader(lib string) bool {
	return strings.Contains(lib, "ld-linux") || lib == "ld64.so.1" || lib == "ld64.so.2"
}

// ReadNeeds reads the libraries file links and the symbol versions it
// imports, with debug/elf, whatever the host's architecture.
func ReadNeeds(file string, r io.ReaderAt) (Needs, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return Needs{}, fmt.Errorf("%s: not an ELF file: %w", file, err)
	}
	n := Needs{File: file, Versions: map[string]string{}}
	switch {
	case f.Class == elf.ELFCLASS64 && f.Data == elf.ELFDATA2LSB && f.Machine == elf.EM_X86_64:
		n.Arch = archX86
	case f.Class == elf.ELFCLASS64 && f.Data == elf.ELFDATA2LSB && f.Machine == elf.EM_AARCH64:
		n.Arch = archARM
	default:
		return Needs{}, fmt.Errorf("%s: an ELF file for %v (%v, %v); wheels are built for x86_64 and aarch64 only", file, f.Machine, f.Class, f.Data)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return Needs{}, fmt.Errorf("%s: reading its libraries: %w", file, err)
	}
	for _, l := range libs {
		if !isLoader(l) {
			n.Libraries = append(n.Libraries, l)
		}
	}
	sort.Strings(n.Libraries)
	syms, err := f.ImportedSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return Needs{}, fmt.Errorf("%s: reading its symbols: %w", file, err)
	}
	for _, s := range syms {
		if s.Version == "" || isLoader(s.Library) {
			continue
		}
		if have, ok := n.Versions[s.Version]; !ok || s.Name < have {
			n.Versions[s.Version] = s.Name // the same symbol named each time, whatever the order
		}
	}
	if n.Exports, err = exports(f); err != nil {
		return Needs{}, fmt.Errorf("%s: reading its dynamic symbols: %w", file, err)
	}
	return n, nil
}

// exports lists the dynamic symbols f defines that other objects can bind
// to: global or weak, of default or protected visibility, in a section.
func exports(f *elf.File) ([]string, error) {
	syms, err := f.DynamicSymbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil // a static executable
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range syms {
		bind, vis := elf.ST_BIND(s.Info), elf.ST_VISIBILITY(s.Other)
		if s.Section == elf.SHN_UNDEF || (bind != elf.STB_GLOBAL && bind != elf.STB_WEAK) ||
			(vis != elf.STV_DEFAULT && vis != elf.STV_PROTECTED) {
			continue
		}
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names, nil
}

// Tag is the platform tag of a wheel holding files: manylinux_X_Y_ARCH for
// the oldest glibc X.Y whose policy allows every library each file links
// and every symbol version it needs. The error names each file and what no
// policy allows.
func Tag(files []Needs) (string, error) {
	arch, err := oneArch(files)
	if err != nil {
		return "", err
	}
	var newest policy
	for _, p := range policies {
		if p.arch != arch {
			continue
		}
		if len(rejected(p, p.tag(), files)) == 0 {
			return p.tag(), nil
		}
		newest = p
	}
	return "", fmt.Errorf("no manylinux policy allows these files on %s; what the newest we know (%s) refuses:\n  %s",
		arch, newest.tag(), strings.Join(rejected(newest, newest.tag(), files), "\n  "))
}

// oneArch is the architecture of files, which must be one.
func oneArch(files []Needs) (string, error) {
	if len(files) == 0 {
		return "", errors.New("no ELF files to tag")
	}
	arch := files[0].Arch
	for _, f := range files {
		if f.Arch != arch {
			return "", fmt.Errorf("%s is for %s but %s is for %s: a wheel is for one architecture", files[0].File, arch, f.File, f.Arch)
		}
	}
	return arch, nil
}

// rejected says, one line each, what p (named name in the lines) does not
// allow in files.
func rejected(p policy, name string, files []Needs) []string {
	libs := policyLibraries(p)
	var why []string
	for _, f := range files {
		for _, l := range f.Libraries {
			if !libs[l] {
				why = append(why, fmt.Sprintf("%s links %s, which is not among the system libraries manylinux allows", f.File, l))
			}
		}
		versions := make([]string, 0, len(f.Versions))
		for v := range f.Versions {
			versions = append(versions, v)
		}
		slices.SortFunc(versions, compareVersionNames)
		for _, v := range versions {
			if !p.allowsVersion(v) {
				why = append(why, fmt.Sprintf("%s: symbol %s needs %s, %s", f.File, f.Versions[v], v, p.limit(v, name)))
			}
		}
	}
	return why
}

// limit says what p, named name, allows of v's prefix.
func (p policy) limit(v, name string) string {
	prefix, _, _ := cutPrefix(v)
	for i, known := range versionPrefixes {
		if prefix == known {
			if p.newest[i] == "" {
				return fmt.Sprintf("and %s allows no %s_ version", name, prefix)
			}
			return fmt.Sprintf("and %s allows %s_ up to %s", name, prefix, p.newest[i])
		}
	}
	return "which " + name + " does not allow"
}

// cutPrefix splits a symbol version at its first "_" as auditwheel does:
// GLIBC_2.34 -> GLIBC, 2.34; CXXABI_TM_1 -> CXXABI, TM_1.
func cutPrefix(v string) (prefix, rest string, ok bool) { return strings.Cut(v, "_") }

// isDotted reports whether s is numbers joined by dots (2.34, 3.4.30).
func isDotted(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

// compareDotted compares two dotted versions number by number (2.9 < 2.10).
func compareDotted(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		x, y := 0, 0
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// compareVersionNames orders symbol versions by prefix, then number.
func compareVersionNames(a, b string) int {
	ap, ar, _ := cutPrefix(a)
	bp, br, _ := cutPrefix(b)
	if ap != bp {
		return strings.Compare(ap, bp)
	}
	if isDotted(ar) && isDotted(br) {
		return compareDotted(ar, br)
	}
	return strings.Compare(ar, br)
}
