package wheel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/wheel/wheeltest"
)

// readNeeds reads the ELF file at path as ReadNeeds does, named name.
func readNeeds(t *testing.T, name, path string) Needs {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := ReadNeeds(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// exportsOnly is a version script that exports f alone, as
// native/backends/backend.map exports the backend ABI alone.
func exportsOnly(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "exports.map")
	if err := os.WriteFile(path, []byte("{ global: f; local: *; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckReleaseAcceptsTheReleaseCompilersFiles: files of the release
// compiler (scripts/zig-cc, glibc 2.28, libc++ linked in) for both
// architectures are within the floor, need no libstdc++, and a wheel of
// them is manylinux_2_28 or older.
func TestCheckReleaseAcceptsTheReleaseCompilersFiles(t *testing.T) {
	for _, arch := range []string{archX86, archARM} {
		t.Run(arch, func(t *testing.T) {
			target := arch + "-linux-gnu.2.28"
			files := []Needs{
				readNeeds(t, "trt-action", wheeltest.ZigCompile(t, target, "c++", wheeltest.CXXWaits, "-O2", "-pthread", "-s")),
				readNeeds(t, "lib/libtam_x.so", wheeltest.ZigCompile(t, target, "c++", wheeltest.CXXLibrary,
					"-O2", "-shared", "-fPIC", "-s", "-Wl,--version-script="+exportsOnly(t))),
			}
			if err := CheckRelease(files); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if f.Arch != arch || slices.Contains(f.Libraries, "libstdc++.so.6") || !strings.HasSuffix(f.Summary(), ", no libstdc++") {
					t.Errorf("%s: %s, libraries %v, summary %q; want %s and no libstdc++", f.File, f.Arch, f.Libraries, f.Summary(), arch)
				}
				if v := f.Newest("GLIBC"); v == "" || compareVersionNames(v, "GLIBC_2.28") > 0 {
					t.Errorf("%s needs %s", f.File, v)
				}
			}
			if got := files[1].Exports; !slices.Equal(got, []string{"f"}) {
				t.Errorf("the library exports %v, want [f]", got)
			}
		})
	}
}

// TestCheckReleaseRefusesFilesAboveTheFloor: what the system's compilers
// make on Debian 12 needs glibc 2.34 (every program's __libc_start_main),
// GCC 12's libstdc++ when it waits on a condition variable, and a library
// linked without a version script exports its C++ runtime: each is refused,
// named with its file and symbol, all at once.
func TestCheckReleaseRefusesFilesAboveTheFloor(t *testing.T) {
	t.Run(archX86, func(t *testing.T) {
		// Linked without a version script, a library exports libc++'s
		// operator new with the rest.
		library := readNeeds(t, "lib/libtam_x.so", wheeltest.ZigCompile(t, "x86_64-linux-gnu.2.28", "c++", wheeltest.CXXLibrary,
			"-O2", "-shared", "-fPIC"))
		if cxx := cxxRuntimeExports(library.Exports); !slices.Contains(cxx, "_Znwm") {
			t.Errorf("a library of the release compiler without a version script exports %v, not operator new (_Znwm)", cxx)
		}
		err := CheckRelease([]Needs{
			readNeeds(t, "trt-action", wheeltest.Compile(t, "g++", "c++", wheeltest.CXXWaits, "-pthread")),
			readNeeds(t, "lib/plain.so", wheeltest.Compile(t, "gcc", "c", wheeltest.CProgram)),
			library,
		})
		wantAll(t, err,
			"these files need more than the release floor, "+FloorText+":\n  ",
			"trt-action: symbol __libc_start_main needs GLIBC_2.34, and the release floor allows GLIBC_ up to 2.28",
			"trt-action: symbol _ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE needs GLIBCXX_3.4.30, and the release floor allows GLIBCXX_ up to 3.4.25",
			"lib/plain.so: symbol __libc_start_main needs GLIBC_2.34",
			"lib/libtam_x.so exports ",
			"a wheel of these files is manylinux_2_35_x86_64, and pip refuses it where glibc is older than 2.35",
		)
	})
	t.Run(archARM, func(t *testing.T) {
		err := CheckRelease([]Needs{readNeeds(t, "trt-action", wheeltest.Compile(t, "aarch64-linux-gnu-gcc", "c", wheeltest.CProgram))})
		wantAll(t, err, "trt-action: symbol __libc_start_main needs GLIBC_2.34, and the release floor allows GLIBC_ up to 2.28",
			"a wheel of these files is manylinux_2_34_aarch64")
	})
}

func wantAll(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("CheckRelease accepted files above the floor")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error lacks %q:\n%v", w, err)
		}
	}
}

// TestCheckReleaseFloor: the floor is GCC 8's libstdc++ for a tarball, but
// a wheel must be manylinux_2_28, whose policy stops at GLIBCXX_3.4.24: a
// file needing 3.4.25 is within the floor and its wheel is not.
func TestCheckReleaseFloor(t *testing.T) {
	ok := [][]Needs{
		{needs("a", archX86, cxxLibs, "GLIBC_2.28", "GLIBCXX_3.4.24", "CXXABI_1.3.11", "GCC_7.0.0", "CXXABI_FLOAT128")},
		{needs("a", archARM, []string{"libc.so.6"}, "GLIBC_2.17"), needs("b", archARM, nil)},
	}
	for _, files := range ok {
		if err := CheckRelease(files); err != nil {
			t.Errorf("%v: %v", files, err)
		}
	}
	err := CheckRelease([]Needs{needs("a", archX86, cxxLibs, "GLIBC_2.28", "GLIBCXX_3.4.25", "CXXABI_1.3.12")})
	wantAll(t, err, "a: symbol sym_cxxabi_1_3_12 needs CXXABI_1.3.12, and the release floor allows CXXABI_ up to 1.3.11",
		"a wheel of these files is manylinux_2_31_x86_64")
	if strings.Contains(err.Error(), "needs GLIBCXX_3.4.25") {
		t.Errorf("GLIBCXX_3.4.25, within the floor, was refused:\n%v", err)
	}
	err = CheckRelease([]Needs{needs("a", archARM, []string{"libcuda.so.1"}, "GLIBC_2.29")})
	wantAll(t, err, "a links libcuda.so.1", "a: symbol sym_glibc_2_29 needs GLIBC_2.29", "no manylinux policy allows a wheel of these files")
}

// TestCxxRuntimeExports: the names of a C++ runtime are told from a
// backend's own and from C's.
func TestCxxRuntimeExports(t *testing.T) {
	runtime := []string{
		"_Znwm", "_ZnamSt11align_val_t", "_ZdlPv", "_ZdaPvm", // operator new and delete
		"_ZNSt3__112basic_stringIcNS_11char_traitsIcEENS_9allocatorIcEEEC2B9nie220108ILi0EEEPKc", // libc++'s std::__1
		"_ZNKSt8functionIFvvEEclEv", "_ZNSt6vectorIiSaIiEED2Ev", "_ZSt9terminatev", "_ZNSaIcED1Ev", "_ZNSsC1Ev",
		"_ZTISt9exception", "_ZTVSt9bad_alloc", "_ZTSSt9type_info", "_ZZNSt3__16vectorIiE4dataEvE1x",
		"_ZTIN10__cxxabiv117__class_type_infoE", "_ZN10__cxxabiv119__terminate_handlerE",
		"__cxa_throw", "__gxx_personality_v0", "_Unwind_Resume", "__dynamic_cast",
	}
	ours := []string{
		"tam_backend_build", "sigaction", "_ZN11tam_monitor6recordEiPKcS1_i", "_ZN8nvinfer17IBuilderD2Ev",
		"_ZTIN8nvinfer116IProgressMonitorE", "_ZN3tam5StoreC1Ev", "main", "__libc_csu_init", "_Z3fooi",
	}
	got := cxxRuntimeExports(append(append([]string(nil), ours...), runtime...))
	want := slices.Sorted(slices.Values(runtime))
	if !slices.Equal(got, want) {
		t.Errorf("C++ runtime names:\n got %v\nwant %v", got, want)
	}
}

func TestSummary(t *testing.T) {
	for _, c := range []struct {
		n    Needs
		want string
	}{
		{needs("a", archX86, []string{"libc.so.6"}, "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.9"), "GLIBC_2.17, no libstdc++"},
		{needs("a", archX86, cxxLibs, "GLIBC_2.34", "GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "CXXABI_1.3.13", "CXXABI_TM_1", "GCC_3.0"),
			"GLIBC_2.34, GLIBCXX_3.4.30, CXXABI_1.3.13, GCC_3.0"},
		{needs("a", archARM, nil), "no libstdc++"},
	} {
		if got := c.n.Summary(); got != c.want {
			t.Errorf("Summary of %v = %q, want %q", c.n.Versions, got, c.want)
		}
	}
}
