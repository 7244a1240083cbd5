package wheel

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The release floor: the most any shipped file (the binary and its
// backends, in the tarballs and the wheels alike) may need of the system it
// runs on. glibc 2.28 and GCC 8's libstdc++ (GLIBCXX_3.4.25, CXXABI_1.3.11)
// are those of RHEL 8 and Debian 10, the oldest systems GPU runners run
// (docs/backends.md lists them); the GCC_ and LIBATOMIC_ limits are
// manylinux_2_28's. A wheel of the files must also be tagged manylinux_2_28
// or older, as auditwheel computes it, or pip on those systems refuses it.
var floors = []policy{
	{28, archX86, libraryVersions{"2.28", "3.4.25", "1.3.11", "7.0.0", "1.2"}, []string{tmABI, float128}},
	{28, archARM, libraryVersions{"2.28", "3.4.25", "1.3.11", "7.0.0", "1.2"}, []string{tmABI}},
}

// FloorText names the floor in messages.
const FloorText = "glibc 2.28 and GCC 8's libstdc++ (GLIBCXX_3.4.25, CXXABI_1.3.11), or none"

// CheckRelease refuses files of one platform that a system at the release
// floor could not run, naming every file and what it needs beyond, all at
// once:
//
//   - a symbol version newer than the floor, or a library no manylinux
//     policy lets a wheel link;
//   - a manylinux tag newer than manylinux_2_28;
//   - an exported symbol of a C++ runtime (operator new and delete, std::,
//     the ABI's __cxa_ functions, the unwinder): the release links libc++
//     into each file, and a TensorRT library loaded into the same process
//     (it uses libstdc++) would bind to an exported one in place of its
//     own. An exception thrown with one runtime cannot be caught with the
//     other, so they must stay apart.
func CheckRelease(files []Needs) error {
	arch, err := oneArch(files)
	if err != nil {
		return err
	}
	floor := floorOf(arch)
	why := rejected(floor, "the release floor", files)
	if tag, err := Tag(files); err != nil {
		why = append(why, "no manylinux policy allows a wheel of these files")
	} else if minor := tagGlibcMinor(tag); minor > floor.glibcMinor {
		why = append(why, fmt.Sprintf("a wheel of these files is %s, and pip refuses it where glibc is older than 2.%d", tag, minor))
	}
	for _, f := range files {
		if cxx := cxxRuntimeExports(f.Exports); len(cxx) > 0 {
			why = append(why, fmt.Sprintf("%s exports %d symbols of a C++ runtime (%s), which a TensorRT library loaded beside it would call in place of libstdc++'s",
				f.File, len(cxx), strings.Join(firstFew(cxx, 3), ", ")))
		}
	}
	if len(why) > 0 {
		return fmt.Errorf("these files need more than the release floor, %s:\n  %s", FloorText, strings.Join(why, "\n  "))
	}
	return nil
}

func floorOf(arch string) policy {
	for _, p := range floors {
		if p.arch == arch {
			return p
		}
	}
	panic("no release floor for " + arch) // ReadNeeds reads no other architecture
}

// tagGlibcMinor is Y of a manylinux_2_Y_ARCH tag.
func tagGlibcMinor(tag string) int {
	for _, p := range policies {
		if p.tag() == tag {
			return p.glibcMinor
		}
	}
	return 0
}

// cxxRuntime matches the Itanium-mangled names of a C++ runtime: operator
// new and delete (_Znw, _Zna, _Zdl, _Zda), anything in namespace std
// (St, and the abbreviations Sa, Sb, Ss, Si, So, Sd for std::allocator,
// basic_string, string, istream, ostream, iostream; also libc++'s std::__1),
// its type information, vtables and local statics (_ZTI, _ZTS, _ZTV, _ZZ),
// the runtime's own namespace (__cxxabiv1), and the unmangled ABI and
// unwinder entry points.
var cxxRuntime = regexp.MustCompile(`^(_Z(n[wa]|d[la])|_Z(T[ISVT]|Z)?N?[rVK]*S[tabsiod]|_Z(T[ISV])?N10__cxxabiv1|__cxa_|__gxx_|_Unwind_|__dynamic_cast$)`)

// cxxRuntimeExports are the names in exports of a C++ runtime, sorted.
func cxxRuntimeExports(exports []string) []string {
	var cxx []string
	for _, e := range exports {
		if cxxRuntime.MatchString(e) {
			cxx = append(cxx, e)
		}
	}
	slices.Sort(cxx)
	return cxx
}

func firstFew(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(slices.Clip(names[:n]), "…")
}

// Summary says in one line what a file needs: the newest version of each
// symbol-version prefix a policy limits, and whether it needs libstdc++ at
// all ("GLIBC_2.17, no libstdc++"; "GLIBC_2.34, GLIBCXX_3.4.30,
// CXXABI_1.3.13, GCC_3.0").
func (n Needs) Summary() string {
	var parts []string
	for _, prefix := range versionPrefixes {
		if v := n.Newest(prefix); v != "" {
			parts = append(parts, v)
		}
	}
	if !slices.Contains(n.Libraries, "libstdc++.so.6") {
		parts = append(parts, "no libstdc++")
	}
	if len(parts) == 0 {
		return "nothing versioned"
	}
	return strings.Join(parts, ", ")
}

// Newest is the newest numbered version the file needs whose prefix is
// prefix (GLIBC -> GLIBC_2.17), or "".
func (n Needs) Newest(prefix string) string {
	newest := ""
	for v := range n.Versions {
		p, rest, _ := cutPrefix(v)
		if p != prefix || !isDotted(rest) {
			continue
		}
		if newest == "" || compareVersionNames(v, newest) > 0 {
			newest = v
		}
	}
	return newest
}
