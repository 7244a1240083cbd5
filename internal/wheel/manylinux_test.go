package wheel

import (
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/wheel/wheeltest"
)

// needs is a file's needs written short: libraries, then symbol versions.
func needs(file, arch string, libs []string, versions ...string) Needs {
	n := Needs{File: file, Arch: arch, Libraries: libs, Versions: map[string]string{}}
	for _, v := range versions {
		n.Versions[v] = "sym_" + strings.ToLower(strings.ReplaceAll(v, ".", "_"))
	}
	return n
}

var cxxLibs = []string{"libc.so.6", "libgcc_s.so.1", "libstdc++.so.6"}

func TestTag(t *testing.T) {
	cases := []struct {
		name  string
		files []Needs
		want  string
	}{
		{"old C", []Needs{needs("a", archX86, []string{"libc.so.6"}, "GLIBC_2.2.5", "GLIBC_2.3")}, "manylinux_2_5_x86_64"},
		{"GLIBCXX decides", []Needs{needs("a", archX86, cxxLibs, "GLIBC_2.17", "GLIBCXX_3.4.21")}, "manylinux_2_24_x86_64"},
		{"CXXABI decides", []Needs{needs("a", archX86, cxxLibs, "GLIBC_2.17", "CXXABI_1.3.11")}, "manylinux_2_27_x86_64"},
		{"GCC decides", []Needs{needs("a", archX86, cxxLibs, "GLIBC_2.17", "GCC_12.0.0")}, "manylinux_2_35_x86_64"},
		{"the newest of several files", []Needs{
			needs("trt-action", archX86, cxxLibs, "GLIBC_2.34", "GLIBCXX_3.4.30"),
			needs("lib/a.so", archX86, cxxLibs, "GLIBC_2.14"),
		}, "manylinux_2_35_x86_64"},
		{"2.10 is newer than 2.9", []Needs{needs("a", archX86, []string{"libc.so.6"}, "GLIBC_2.9", "GLIBC_2.10")}, "manylinux_2_12_x86_64"},
		{"named version CXXABI_TM_1", []Needs{needs("a", archX86, cxxLibs, "CXXABI_TM_1")}, "manylinux_2_17_x86_64"},
		{"CXXABI_FLOAT128 from 2_24 on x86_64", []Needs{needs("a", archX86, cxxLibs, "CXXABI_FLOAT128")}, "manylinux_2_24_x86_64"},
		{"GLIBC_ABI_DT_RELR from 2_36", []Needs{needs("a", archX86, []string{"libc.so.6"}, "GLIBC_ABI_DT_RELR", "GLIBC_2.17")}, "manylinux_2_36_x86_64"},
		{"libmvec from 2_24", []Needs{needs("a", archX86, []string{"libmvec.so.1"}, "GLIBC_2.2.5")}, "manylinux_2_24_x86_64"},
		{"an unlimited prefix", []Needs{needs("a", archX86, []string{"libc.so.6"}, "GLIBC_2.2.5", "OPENSSL_3.0.0")}, "manylinux_2_5_x86_64"},
		{"aarch64 starts at 2_17", []Needs{needs("a", archARM, []string{"libc.so.6"}, "GLIBC_2.17")}, "manylinux_2_17_aarch64"},
		{"aarch64's GCC differs", []Needs{needs("a", archARM, cxxLibs, "GLIBC_2.17", "GCC_11.0")}, "manylinux_2_34_aarch64"},
		{"aarch64 LIBATOMIC", []Needs{needs("a", archARM, []string{"libatomic.so.1"}, "LIBATOMIC_1.2")}, "manylinux_2_24_aarch64"},
		{"no versions at all", []Needs{needs("a", archARM, nil)}, "manylinux_2_17_aarch64"},
	}
	for _, c := range cases {
		got, err := Tag(c.files)
		if err != nil || got != c.want {
			t.Errorf("%s: Tag = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// TestTagRefuses: what no policy allows is named, with its file and the
// symbol that needs it, all at once.
func TestTagRefuses(t *testing.T) {
	_, err := Tag([]Needs{
		needs("trt-action", archX86, []string{"libc.so.6", "libcuda.so.1"}, "GLIBC_2.99", "GLIBC_2.17"),
		needs("lib/x.so", archX86, []string{"libz.so.1"}, "GLIBC_PRIVATE", "GLIBCXX_3.4.99"),
	})
	if err == nil {
		t.Fatal("Tag allowed glibc 2.99, libcuda and libz")
	}
	for _, want := range []string{
		"trt-action links libcuda.so.1",
		"trt-action: symbol sym_glibc_2_99 needs GLIBC_2.99, and manylinux_2_41_x86_64 allows GLIBC_ up to 2.41",
		"lib/x.so links libz.so.1",
		"lib/x.so: symbol sym_glibc_private needs GLIBC_PRIVATE",
		"lib/x.so: symbol sym_glibcxx_3_4_99 needs GLIBCXX_3.4.99",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if !strings.HasPrefix(err.Error(), "no manylinux policy allows these files on x86_64; what the newest we know (manylinux_2_41_x86_64) refuses:\n  ") {
		t.Errorf("error's first line: %v", err)
	}
	if strings.Contains(err.Error(), "GLIBC_2.17") {
		t.Errorf("error names an allowed version:\n%v", err)
	}
	if _, err := Tag([]Needs{needs("a", archX86, nil), needs("b", archARM, nil)}); err == nil || !strings.Contains(err.Error(), "one architecture") {
		t.Errorf("mixed architectures: %v", err)
	}
}

const tlsLibrary = "#include <stdio.h>\n__thread int counter;\nint next(void) { printf(\"%d\\n\", counter); return ++counter; }\n"

// TestReadNeedsRealFiles reads files the system's compilers make, for
// x86_64 and aarch64 whatever the host, and compares what we read and the
// tag with what the pinned auditwheel makes of the same files.
func TestReadNeedsRealFiles(t *testing.T) {
	builds := []struct {
		name, compiler, lang, src, arch string
		args                            []string
		libs                            []string // among the libraries it must link
		prefixes                        []string // symbol-version prefixes it must need
	}{
		{"x86_64 C", "gcc", "c", wheeltest.CProgram, archX86, nil, []string{"libc.so.6"}, []string{"GLIBC"}},
		{"x86_64 C++", "g++", "c++", wheeltest.CXXProgram, archX86, []string{"-pthread"}, []string{"libc.so.6", "libstdc++.so.6"}, []string{"GLIBC", "GLIBCXX"}},
		{"x86_64 C++ library", "g++", "c++", wheeltest.CXXLibrary, archX86, []string{"-shared", "-fPIC"}, []string{"libstdc++.so.6"}, []string{"GLIBCXX", "CXXABI"}},
		// Thread-local data in a library imports __tls_get_addr from the
		// loader, whose versions auditwheel does not count.
		{"x86_64 C library with TLS", "gcc", "c", tlsLibrary, archX86, []string{"-shared", "-fPIC"}, []string{"libc.so.6"}, nil},
		{"aarch64 C library with TLS", "aarch64-linux-gnu-gcc", "c", tlsLibrary, archARM, []string{"-shared", "-fPIC", "-mtls-dialect=trad"}, []string{"libc.so.6"}, nil},
		{"aarch64 C++", "aarch64-linux-gnu-g++", "c++", wheeltest.CXXProgram, archARM, []string{"-pthread"}, []string{"libc.so.6", "libstdc++.so.6"}, []string{"GLIBC", "GLIBCXX"}},
		{"aarch64 C++ library", "aarch64-linux-gnu-g++", "c++", wheeltest.CXXLibrary, archARM, []string{"-shared", "-fPIC"}, []string{"libstdc++.so.6"}, []string{"GLIBCXX", "CXXABI"}},
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			file := wheeltest.Compile(t, b.compiler, b.lang, b.src, b.args...)
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			n, err := ReadNeeds("out", f)
			if err != nil {
				t.Fatal(err)
			}
			if n.Arch != b.arch {
				t.Errorf("arch %q, want %q", n.Arch, b.arch)
			}
			for _, l := range b.libs {
				if !slices.Contains(n.Libraries, l) {
					t.Errorf("libraries %q lack %s", n.Libraries, l)
				}
			}
			for _, l := range n.Libraries {
				if isLoader(l) {
					t.Errorf("libraries %q hold the loader", n.Libraries)
				}
			}
			have := map[string]bool{}
			for v, sym := range n.Versions {
				p, _, _ := cutPrefix(v)
				have[p] = true
				if sym == "" {
					t.Errorf("%s names no symbol", v)
				}
			}
			for _, p := range b.prefixes {
				if !have[p] {
					t.Errorf("versions %v lack a %s_ one", n.Versions, p)
				}
			}
			tag, err := Tag([]Needs{n})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(tag, "_"+b.arch) {
				t.Errorf("tag %s is not for %s", tag, b.arch)
			}

			// auditwheel's reading and verdict on the same file.
			py := wheeltest.DistPython(t)
			out, err := exec.Command(py, "testdata/auditwheel_tag.py", b.arch, file).Output()
			if err != nil {
				t.Fatalf("auditwheel_tag.py: %v", err)
			}
			var theirs struct {
				Versions []string
				Tag      string
			}
			if err := json.Unmarshal(out, &theirs); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var ours []string
			for v := range n.Versions {
				ours = append(ours, v)
			}
			sort.Strings(ours)
			if !reflect.DeepEqual(ours, theirs.Versions) {
				t.Errorf("symbol versions:\n ours %v\n auditwheel's %v", ours, theirs.Versions)
			}
			if tag != theirs.Tag {
				t.Errorf("tag %s, auditwheel's %s", tag, theirs.Tag)
			}
		})
	}
}

// TestReadNeedsRefuses: a file that is not ELF, or not for an architecture
// we ship, is an error naming it.
func TestReadNeedsRefuses(t *testing.T) {
	if _, err := ReadNeeds("README.md", strings.NewReader("# not ELF")); err == nil || !strings.Contains(err.Error(), "README.md: not an ELF file") {
		t.Errorf("a text file: %v", err)
	}
	obj := wheeltest.Compile(t, "gcc", "c", "int f(void) { return 1; }\n", "-m32", "-c")
	f, err := os.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadNeeds("x", f); err == nil || !strings.Contains(err.Error(), "x86_64 and aarch64 only") {
		t.Errorf("a 32-bit file: %v", err)
	}
}
