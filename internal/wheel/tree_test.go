package wheel

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/wheel/wheeltest"
)

// testSources makes a stage (a C++ binary and two backends, as make dist
// stages them), a stand-in of internal/pyhook/wheel and a hook package
// with caches and a non-Python file beside its sources.
func testSources(t *testing.T) Sources {
	t.Helper()
	dir := t.TempDir()
	src := Sources{Stage: filepath.Join(dir, "stage"), Python: filepath.Join(dir, "pywheel"), Hook: filepath.Join(dir, "hook"),
		License: filepath.Join(dir, "repo", "LICENSE")}
	files := map[string]string{
		"pywheel/trt_action/__init__.py":        "__version__ = '0'\n",
		"pywheel/trt_action/__pycache__/x.pyc":  "cache",
		"pywheel/trt_action.pth":                "import trt_action\n",
		"pywheel/trt_action.start":              "trt_action._activate:activate\n",
		"hook/__init__.py":                      "# hook\n",
		"hook/wire.py":                          "# wire\n",
		"hook/notes.txt":                        "not Python",
		"hook/__pycache__/wire.cpython-311.pyc": "cache",
		"stage/README.md":                       "the tarball's, not the wheel's",
		"stage/lib/not-a-backend.txt":           "x",
		"repo/LICENSE":                          "the licence\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	binary := wheeltest.Compile(t, "g++", "c++", wheeltest.CXXProgram, "-pthread", "-s")
	library := wheeltest.Compile(t, "g++", "c++", wheeltest.CXXLibrary, "-shared", "-fPIC", "-s")
	copyFile(t, binary, filepath.Join(src.Stage, Binary))
	copyFile(t, library, filepath.Join(src.Stage, "lib", "libtam_a.so"))
	copyFile(t, library, filepath.Join(src.Stage, "lib", "libtam_b.so"))
	return src
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}

var testMeta = Metadata{Version: "1.2.3", RTXVersion: "1.7.1.116", Description: "# r\n[d](d.md)\n", Ref: "v1.2.3"}

// listing is the tree's files and folders with their modes, one a line.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		lines = append(lines, fmt.Sprintf("%v %s", info.Mode(), filepath.ToSlash(rel)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestLayout: the tree of the design, with fixed modes whatever the umask
// (sources are 0600 here, the umask 077), no caches, and the tag the
// files' needs give.
func TestLayout(t *testing.T) {
	src := testSources(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	tag, err := Layout(dir, src, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "layout.golden", listing(t, dir))
	if !strings.HasPrefix(tag, "manylinux_2_") || !strings.HasSuffix(tag, "_x86_64") {
		t.Errorf("tag %q", tag)
	}
	wheelFile, err := os.ReadFile(filepath.Join(dir, "trt_action-1.2.3.dist-info", "WHEEL"))
	if err != nil || string(wheelFile) != WheelText(tag) {
		t.Errorf("WHEEL %q, %v; want the tag %s", wheelFile, err, tag)
	}
	meta, err := os.ReadFile(filepath.Join(dir, "trt_action-1.2.3.dist-info", "METADATA"))
	if err != nil || string(meta) != testMeta.Text() {
		t.Errorf("METADATA %q, %v", meta, err)
	}
	license, err := os.ReadFile(filepath.Join(dir, "trt_action-1.2.3.dist-info", "licenses", "LICENSE"))
	if err != nil || string(license) != "the licence\n" {
		t.Errorf("the wheel's licence %q, %v; want the repository's LICENSE", license, err)
	}
	stageBinary, _ := os.ReadFile(filepath.Join(src.Stage, Binary))
	wheelBinary, _ := os.ReadFile(filepath.Join(dir, "trt_action-1.2.3.data", "scripts", Binary))
	if len(stageBinary) == 0 || string(stageBinary) != string(wheelBinary) {
		t.Error("the wheel's binary is not the stage's")
	}
}

// TestLayoutRefusesLinks: nothing is read through a symbolic link, so
// nothing from outside the sources gets into a wheel.
func TestLayoutRefusesLinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	writeFile(t, filepath.Join(outside, "lib", "libtam_x.so"), "outside")
	writeFile(t, filepath.Join(outside, "file"), "outside")
	cases := []struct {
		name, link, target, want string
	}{
		{"binary", "stage/" + Binary, outside + "/file", "is not a regular file"},
		{"backend", "stage/lib/libtam_a.so", outside + "/file", "is not a regular file"},
		{"backends' folder", "stage/lib", outside + "/lib", "escapes"},
		{"hook file", "hook/wire.py", outside + "/file", "is a symbolic link"},
		{"python file", "pywheel/trt_action.pth", outside + "/file", "is a symbolic link"},
		{"licence", "repo/LICENSE", outside + "/file", "is not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := testSources(t)
			base := filepath.Dir(src.Stage)
			link := filepath.Join(base, c.link)
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(c.target, link); err != nil {
				t.Fatal(err)
			}
			_, err := Layout(t.TempDir(), src, testMeta)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Layout with %s a link out: %v, want an error saying %q", c.link, err, c.want)
			}
		})
	}
}

// TestLayoutRefusesUnstripped: a binary or backend with its symbol table
// or debug information is refused, naming the file and the sections.
func TestLayoutRefusesUnstripped(t *testing.T) {
	program := []string{"-pthread"}
	library := []string{"-shared", "-fPIC"}
	cases := []struct {
		name, file string
		flags      []string
		want       string
	}{
		{"backend", "lib/libtam_b.so", library, "lib/libtam_b.so is not stripped (it has .symtab)"},
		{"backend with debug information", "lib/libtam_b.so", append(library, "-g"), ".debug_info"},
		{"binary", Binary, program, Binary + " is not stripped (it has .symtab)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := testSources(t)
			code := wheeltest.CXXLibrary
			if c.file == Binary {
				code = wheeltest.CXXProgram
			}
			copyFile(t, wheeltest.Compile(t, "g++", "c++", code, c.flags...), filepath.Join(src.Stage, filepath.FromSlash(c.file)))
			_, err := Layout(t.TempDir(), src, testMeta)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Layout with %s unstripped: %v, want an error saying %q", c.file, err, c.want)
			}
		})
	}
}

// TestLayoutRefusesTwoSources: a file two sources put at one path is an
// error, not one of them silently.
func TestLayoutRefusesTwoSources(t *testing.T) {
	src := testSources(t)
	writeFile(t, filepath.Join(src.Python, "trt_action_hook", "wire.py"), "# another\n")
	_, err := Layout(t.TempDir(), src, testMeta)
	if err == nil || !strings.Contains(err.Error(), "two sources put a file at trt_action_hook/wire.py") {
		t.Errorf("Layout: %v", err)
	}
}
