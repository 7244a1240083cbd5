package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layOut makes files (empty; a name ending in "/" is a folder) under root,
// and links (name to target).
func layOut(t *testing.T, root string, files []string, links map[string]string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		content := ""
		if filepath.Base(f) == "go.mod" {
			content = "module " + module + "\n\ngo 1.26\n"
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range links {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.ReplaceAll(target, "ROOT", root), filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
}

const ourDistInfo = "trt_action-1.2.3.dist-info/"

// TestOfEachKind: each way trt-action is installed is told from where the
// binary is and what lies beside it.
func TestOfEachKind(t *testing.T) {
	for _, c := range []struct {
		name, exe string
		files     []string
		links     map[string]string
		kind      Kind
		root      string   // under the test's folder
		sites     []string // under the test's folder
	}{
		{name: "pip into a venv", exe: "bin/trt-action",
			files: []string{"bin/trt-action", "lib/python3.12/site-packages/" + ourDistInfo, "lib/trt-action/libtam_host.so"},
			links: map[string]string{"lib64": "lib"},
			kind:  Wheel, root: ".", sites: []string{"lib/python3.12/site-packages"}},
		{name: "pip into Debian's /usr/local", exe: "bin/trt-action",
			files: []string{"bin/trt-action", "lib/python3.11/dist-packages/" + ourDistInfo},
			kind:  Wheel, root: ".", sites: []string{"lib/python3.11/dist-packages"}},
		{name: "pip install --target", exe: "bin/trt-action",
			files: []string{"bin/trt-action", ourDistInfo, "trt_action/__init__.py"},
			kind:  WheelTarget, root: ".", sites: []string{"."}},
		{name: "a link to a pip-installed binary", exe: "elsewhere/bin/trt-action",
			files: []string{"venv/bin/trt-action", "venv/lib/python3.11/site-packages/" + ourDistInfo},
			links: map[string]string{"elsewhere/bin/trt-action": "ROOT/venv/bin/trt-action"},
			kind:  Wheel, root: "venv", sites: []string{"venv/lib/python3.11/site-packages"}},
		{name: "a source checkout", exe: "bin/trt-action",
			files: []string{"bin/trt-action", "bin/lib/libtam_host.so", "go.mod", "README.md", "docs/commands.md"},
			kind:  Source, root: "."},
		{name: "a release tarball", exe: "trt-action_v1.2.3_linux_amd64/trt-action",
			files: []string{"trt-action_v1.2.3_linux_amd64/trt-action", "trt-action_v1.2.3_linux_amd64/README.md",
				"trt-action_v1.2.3_linux_amd64/docs/commands.md", "trt-action_v1.2.3_linux_amd64/lib/libtam_host.so"},
			kind: Tarball, root: "trt-action_v1.2.3_linux_amd64"},
		{name: "a release tarball without its lib/", exe: "t/trt-action",
			files: []string{"t/trt-action", "t/README.md", "t/docs/"},
			kind:  Tarball, root: "t"},
		{name: "the container image's prefix", exe: "usr/local/bin/trt-action",
			files: []string{"usr/local/bin/trt-action", "usr/local/lib/trt-action/libtam_trt10.so"},
			kind:  Prefix, root: "usr/local"},
		{name: "a binary on its own", exe: "tools/trt-action",
			files: []string{"tools/trt-action", "tools/README.md"},
			kind:  Alone, root: "tools"},
		{name: "another module's bin", exe: "bin/trt-action",
			files: []string{"bin/trt-action", "other/go.mod"},
			kind:  Alone, root: "bin"},
		{name: "a Python beside it that pip did not put trt-action in", exe: "bin/trt-action",
			files: []string{"bin/trt-action", "lib/python3.11/site-packages/other-1.0.dist-info/"},
			kind:  Alone, root: "bin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dir, _ = filepath.EvalSymlinks(dir)
			layOut(t, dir, c.files, c.links)
			if c.name == "another module's bin" {
				if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := Of(filepath.Join(dir, c.exe))
			var sites []string
			for _, s := range c.sites {
				sites = append(sites, filepath.Join(dir, s))
			}
			if got.Kind != c.kind || got.Root != filepath.Join(dir, c.root) || !slices.Equal(got.Sites, sites) {
				t.Errorf("Of = %v %s %v, want %v %s %v", got.Kind, got.Root, got.Sites, c.kind, filepath.Join(dir, c.root), sites)
			}
		})
	}
	if got := Of(""); got.Kind != Alone {
		t.Errorf("Of(\"\") = %+v, want Alone", got)
	}
}

// TestAdviceFitsEachKind: what each kind says about a missing backend and
// how it describes itself name only what that installation has.
func TestAdviceFitsEachKind(t *testing.T) {
	for _, c := range []struct {
		kind      Kind
		describe  string
		want, not []string
	}{
		{Wheel, "with pip, in /p", []string{"/p/lib/trt-action", "pip install --force-reinstall trt-action", "VAR"}, []string{"make", "--target"}},
		{WheelTarget, "with pip install --target /p, which leaves the backends out",
			[]string{"pip install --target (/p)", "leaves a wheel's data files out", "venv, --user or --prefix", "VAR"}, []string{"make", "reinstall"}},
		{Tarball, "from a release tarball, in /p", []string{"lib/ beside the binary (/p/lib)", "unpack it again", "VAR"}, []string{"make", "pip"}},
		{Prefix, "in the prefix /p", []string{"/p/lib/trt-action", "VAR"}, []string{"make", "pip"}},
		{Alone, "a binary on its own, in /p", []string{"copy that folder along with it", "VAR"}, []string{"make", "pip"}},
		{Source, "built in a source checkout, /p", nil, nil},
	} {
		in := Installation{Kind: c.kind, Root: "/p"}
		if d := in.Describe(); !strings.HasPrefix(d, c.describe) {
			t.Errorf("%v: Describe() = %q, want it to start %q", c.kind, d, c.describe)
		}
		if c.kind == Source {
			continue // a checkout builds what it lacks: the registry says how
		}
		hint := in.MissingBackends("VAR")
		for _, w := range c.want {
			if !strings.Contains(hint, w) {
				t.Errorf("%v: %q lacks %q", c.kind, hint, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(hint, n) {
				t.Errorf("%v: %q says %q, which does not fit", c.kind, hint, n)
			}
		}
	}
}
