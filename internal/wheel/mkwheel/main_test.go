package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/wheel/wheeltest"
)

// setup makes a stage (a C++ binary and a backend), a stand-in of
// internal/pyhook/wheel and TensorRT-RTX's version header, and returns
// mkwheel's arguments for them (the repository's LICENSE, docs/pypi.md
// and hook).
func setup(t *testing.T, out string) []string {
	t.Helper()
	dir := t.TempDir()
	stage := filepath.Join(dir, "stage")
	put := func(path string, content []byte) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	put(filepath.Join(stage, "trt-action"), read(wheeltest.Compile(t, "g++", "c++", wheeltest.CXXProgram, "-pthread", "-s")))
	put(filepath.Join(stage, "lib", "libtam_x.so"), read(wheeltest.Compile(t, "g++", "c++", wheeltest.CXXLibrary, "-shared", "-fPIC", "-s")))
	put(filepath.Join(dir, "pywheel", "trt_action", "__init__.py"), []byte("__version__ = '0'\n"))
	put(filepath.Join(dir, "pywheel", "trt_action.pth"), []byte("import trt_action\n"))
	put(filepath.Join(dir, "rtx", "NvInferVersion.h"), []byte("#define TRT_MAJOR_RTX 1\n#define TRT_MINOR_RTX 7\n#define TRT_PATCH_RTX 1\n#define TRT_BUILD_RTX 116\n"))
	return []string{"-stage", stage, "-out", out, "-version", "v1.2.3-4-gabc1234", "-repo", "../../..",
		"-pywheel", filepath.Join(dir, "pywheel"), "-rtx-include", filepath.Join(dir, "rtx"),
		"-ref", "v1.2.3", "-epoch", "1700000000", "-python", wheeltest.DistPython(t)}
}

// mkwheel runs the program and returns the wheel's path it printed.
func mkwheel(t *testing.T, args []string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("mkwheel exited %d: %s", code, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// TestWheelIsValid: the wheel mkwheel makes passes twine check --strict,
// unpacks with wheel's own tool, every file's RECORD hash is right, it
// installs with its licence, auditwheel finds our tag, and the same inputs
// make the same bytes.
func TestWheelIsValid(t *testing.T) {
	out := t.TempDir()
	args := setup(t, out)
	py := args[len(args)-1]
	path := mkwheel(t, args)
	if want := filepath.Join(out, "trt_action-1.2.3+4.gabc1234-py3-none-manylinux_2_"); !strings.HasPrefix(path, want) || !strings.HasSuffix(path, "_x86_64.whl") {
		t.Fatalf("wheel %s, want %s*_x86_64.whl", path, want)
	}
	if b, err := exec.Command(py, "-m", "twine", "check", "--strict", path).CombinedOutput(); err != nil {
		t.Errorf("twine check --strict: %v\n%s", err, b)
	}
	if b, err := exec.Command(py, "-m", "wheel", "unpack", "--dest", t.TempDir(), path).CombinedOutput(); err != nil {
		t.Errorf("wheel unpack: %v\n%s", err, b)
	}
	checkRecord(t, path)
	checkLicense(t, py, path)
	checkDescription(t, path)
	shown, err := exec.Command(py, "-m", "auditwheel", "show", path).CombinedOutput()
	tag := strings.TrimSuffix(path[strings.LastIndex(path, "-")+1:], ".whl")
	if err != nil || !strings.Contains(strings.Join(strings.Fields(string(shown)), " "), `platform tag: "`+tag+`"`) {
		t.Errorf("auditwheel show (%v) does not find %s:\n%s", err, tag, shown)
	}

	first, _ := os.ReadFile(path)
	again := mkwheel(t, setup(t, t.TempDir()))
	second, _ := os.ReadFile(again)
	if len(first) == 0 || !bytes.Equal(first, second) {
		t.Errorf("two builds differ: %d and %d bytes", len(first), len(second))
	}
}

// checkRecord opens the wheel and checks each file against RECORD.
func checkRecord(t *testing.T, path string) {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	hashes := map[string]string{}
	var record *zip.File
	for _, f := range z.File {
		if strings.HasSuffix(f.Name, ".dist-info/RECORD") {
			record = f
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		hashes[f.Name] = "sha256=" + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
		mode := f.Mode().Perm()
		if want := os.FileMode(0o644); strings.HasSuffix(f.Name, ".data/scripts/trt-action") {
			if mode != 0o755 {
				t.Errorf("%s has mode %v, want 0755", f.Name, mode)
			}
		} else if mode != want {
			t.Errorf("%s has mode %v, want %v", f.Name, mode, want)
		}
	}
	if record == nil {
		t.Fatal("no RECORD")
	}
	r, err := record.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	listed := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 3 || strings.HasSuffix(fields[0], "/RECORD") {
			continue
		}
		listed++
		if hashes[fields[0]] != fields[1] {
			t.Errorf("RECORD says %s is %s, it is %s", fields[0], fields[1], hashes[fields[0]])
		}
	}
	if listed != len(hashes) {
		t.Errorf("RECORD lists %d files, the wheel holds %d besides it", listed, len(hashes))
	}
	for _, want := range []string{"trt_action.pth", "trt_action/__init__.py", "trt_action_hook/__init__.py",
		"trt_action-1.2.3+4.gabc1234.data/scripts/trt-action", "trt_action-1.2.3+4.gabc1234.data/data/lib/trt-action/libtam_x.so",
		"trt_action-1.2.3+4.gabc1234.dist-info/licenses/LICENSE"} {
		if _, ok := hashes[want]; !ok {
			t.Errorf("the wheel lacks %s", want)
		}
	}
}

// checkDescription: the wheel's description, its page on PyPI, is
// docs/pypi.md (its links absolute), not the README's developer commands.
func checkDescription(t *testing.T, whl string) {
	t.Helper()
	z, err := zip.OpenReader(whl)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	r, err := z.Open("trt_action-1.2.3+4.gabc1234.dist-info/METADATA")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	meta, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(meta), "\n\n")
	page, err := os.ReadFile("../../../docs/pypi.md")
	if err != nil {
		t.Fatal(err)
	}
	title, _, _ := strings.Cut(string(page), "\n## ")
	if !strings.HasPrefix(body, title) || !strings.Contains(body, "python -m pip install trt-action") ||
		!strings.Contains(body, "(https://github.com/trt-action/trt-action/blob/v1.2.3/docs/commands.md)") ||
		strings.Contains(body, "make test") {
		t.Errorf("the wheel's description is not docs/pypi.md with absolute links:\n%.600s", body)
	}
}

// checkLicense installs the wheel into a prefix (pypa's installer, as pip
// lays it out) and reads what pip show and other tools read: the installed
// distribution's License-Expression, and the licence file its License-File
// names, which must be the repository's LICENSE.
func checkLicense(t *testing.T, py, whl string) {
	t.Helper()
	prefix := t.TempDir()
	if b, err := exec.Command(py, "-m", "installer", "--prefix", prefix, whl).CombinedOutput(); err != nil {
		t.Fatalf("installer: %v\n%s", err, b)
	}
	sites, _ := filepath.Glob(filepath.Join(prefix, "lib", "python3*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("installed into %v, want one site-packages", sites)
	}
	read := `import importlib.metadata as m, sys
d = m.distribution("trt-action")
name = d.metadata["License-File"]
sys.stdout.write(d.metadata["License-Expression"] + "\n" + name + "\n" + d.read_text("licenses/" + name))`
	cmd := exec.Command(py, "-I", "-c", "import sys; sys.path.insert(0, sys.argv[1]); exec(sys.argv[2])", sites[0], read)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reading the installed metadata: %v\n%s", err, out)
	}
	license, err := os.ReadFile("../../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Apache-2.0\nLICENSE\n" + string(license); string(out) != want {
		t.Errorf("the installed distribution says\n%.200s\nwant Apache-2.0, LICENSE and the repository's LICENSE", out)
	}
}

// TestWheelReplacedWhole: a wheel of the same name is replaced only by a
// complete new one; when packing fails, the old one stays and no partial
// file is left.
func TestWheelReplacedWhole(t *testing.T) {
	out := t.TempDir()
	args := setup(t, out)
	path := mkwheel(t, args)
	good, _ := os.ReadFile(path)

	// A packer that dies halfway through writing the wheel: a zip cut short.
	packer := filepath.Join(t.TempDir(), "python")
	script := "#!/bin/sh\n# -m wheel pack --dest-dir DIR TREE\nprintf 'PK partial' > \"$5/" + filepath.Base(path) + "\"\nexit 1\n"
	if err := os.WriteFile(packer, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	failing := append(append([]string{}, args...), "-python", packer)
	var stderr bytes.Buffer
	if code := run(failing, io.Discard, &stderr); code == 0 {
		t.Fatal("mkwheel with a failing packer succeeded")
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, good) {
		t.Error("a failed build changed the wheel that was there")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries after a failed build, want the one wheel", out, len(entries))
	}

	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if mkwheel(t, args) != path {
		t.Fatal("the wheel's name changed")
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, good) {
		t.Error("the stale wheel was not replaced by the new one")
	}
}

// TestPEP440AndUsage: -pep440 prints the version or the error, and missing
// flags are named.
func TestPEP440AndUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-pep440", "v1.2.3-rc.1"}, &stdout, &stderr); code != 0 || stdout.String() != "1.2.3rc1\n" {
		t.Errorf("-pep440 v1.2.3-rc.1: %d %q %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"-pep440", "dev"}, &stdout, &stderr); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), `VERSION "dev" has no PEP 440 form`) {
		t.Errorf("-pep440 dev: %d %q %q", code, stdout.String(), stderr.String())
	}
	stderr.Reset()
	t.Setenv("TRT_RTX_INCLUDE", "")
	if code := run([]string{"-out", "x"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "missing -stage, -version, -rtx-include") {
		t.Errorf("missing flags: %d %q", code, stderr.String())
	}
}

// TestCheck: -check prints what each file of a stage needs and passes a
// stage of the release compiler's files; a stage of the system compiler's
// (glibc 2.34 on Debian 12) fails, naming what is above the floor.
func TestCheck(t *testing.T) {
	stage := func(compile func(lang, src string, args ...string) string) string {
		dir := t.TempDir()
		copyTo := func(from, to string) {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(to, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		copyTo(compile("c++", wheeltest.CXXWaits, "-O2", "-pthread", "-s"), filepath.Join(dir, "trt-action"))
		copyTo(compile("c", "int f(void) { return 1; }\n", "-O2", "-shared", "-fPIC", "-s"), filepath.Join(dir, "lib", "libtam_x.so"))
		return dir
	}
	release := stage(func(lang, src string, args ...string) string {
		return wheeltest.ZigCompile(t, "aarch64-linux-gnu.2.28", lang, src, args...)
	})
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-check", release}, &stdout, &stderr); code != 0 {
		t.Fatalf("-check of the release compiler's files exited %d: %s", code, stderr.String())
	}
	for _, want := range []string{release + "/trt-action: GLIBC_2.", ", no libstdc++\n" + release + "/lib/libtam_x.so: ",
		release + ": within the release floor (glibc 2.28 and GCC 8's libstdc++ (GLIBCXX_3.4.25, CXXABI_1.3.11), or none); a wheel of them is manylinux_2_17_aarch64\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-check's output lacks %q:\n%s", want, stdout.String())
		}
	}

	system := stage(func(lang, src string, args ...string) string {
		return wheeltest.Compile(t, map[string]string{"c": "gcc", "c++": "g++"}[lang], lang, src, args...)
	})
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-check", system}, &stdout, &stderr); code != 1 {
		t.Fatalf("-check of the system compiler's files exited %d, want 1: %s", code, stdout.String())
	}
	if want := system + "/trt-action: GLIBC_2.3"; !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "GLIBCXX_3.4.30") {
		t.Errorf("-check's output lacks %q and GLIBCXX_3.4.30:\n%s", want, stdout.String())
	}
	for _, want := range []string{"mkwheel: " + system + ": these files need more than the release floor",
		"trt-action: symbol __libc_start_main needs GLIBC_2.34", "needs GLIBCXX_3.4.30"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-check's error lacks %q:\n%s", want, stderr.String())
		}
	}
	if code := run([]string{"-check", t.TempDir()}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "the backends' folder") {
		t.Errorf("-check of an empty folder: exit %d, %s", code, stderr.String())
	}
}
