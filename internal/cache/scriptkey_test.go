package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/matrix"
)

// scriptProject is a checkout with a builder script and a virtual
// environment it runs in, made of files (nothing runs), and a build with
// run: of it: python build.py, the venv's python first on PATH.
func scriptProject(t *testing.T, root string) matrix.Build {
	t.Helper()
	t.Setenv("PATH", filepath.Join(root, "venv/bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	files := map[string]string{
		"venv/pyvenv.cfg": "home = /usr/bin\nversion = 3.11.7\n",
		"venv/bin/python": "an interpreter, 3.11.7",
		"venv/lib/python3.11/site-packages/numpy-2.2.6.dist-info/METADATA":                    "Name: numpy\nVersion: 2.2.6\n",
		"venv/lib/python3.11/site-packages/tensorrt_rtx_cu12-1.7.1.116.dist-info/METADATA":    "Name: tensorrt_rtx_cu12\nVersion: 1.7.1.116\n",
		"venv/lib/python3.11/site-packages/tensorrt_rtx_libs/libtensorrt_rtx.so.1":            "the library",
		"venv/lib/python3.11/site-packages/tensorrt_rtx_libs/libtensorrt_onnxparser_rtx.so.1": "its parser",
		"work/build.py":   "print('building')\n",
		"work/ckpt/w.bin": "weights",
		"work/ckpt/x.tmp": "scratch",
	}
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	work := filepath.Join(root, "work")
	return matrix.Build{Name: "llm", Backend: "tensorrt-rtx", Script: &matrix.Script{
		Argv: []string{"python", "build.py", "--out", "out"}, Workdir: work,
		Env: []string{"MODE=fp16"}, Engines: []string{filepath.Join(work, "out/rank0.engine"), filepath.Join(work, "out/rank1.engine")},
		Outputs: []string{filepath.Join(work, "out/config.json")}, Inputs: []string{"build.py", "ckpt", "!**/*.tmp"},
		Workspace: root, Roots: []string{root},
	}}
}

// scriptKey is b's key as a run computes it: the library its program's
// environment holds (Hasher.BuildEnv), then the key.
func scriptKey(t *testing.T, b matrix.Build) Key {
	t.Helper()
	h := NewHasher()
	env, err := h.BuildEnv(b, "", "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := h.Key(context.Background(), b, env)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// The key of a build with run: changes with every part that decides its
// engines (an input's content, an input added, the command, an env:
// value, an installed distribution's version, the interpreter, the
// declared files, the library its program loads), and with nothing else:
// not with a file its patterns exclude, nor with where the checkout is.
func TestScriptKeyChangesWithWhatDecidesTheEngines(t *testing.T) {
	base := scriptProject(t, t.TempDir())
	k := scriptKey(t, base)
	write := func(p, content string) func(*testing.T, *matrix.Build) {
		return func(t *testing.T, b *matrix.Build) {
			root := filepath.Dir(b.Script.Workdir)
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	site := "venv/lib/python3.11/site-packages/"
	for name, c := range map[string]struct {
		change  func(*testing.T, *matrix.Build)
		changes bool
	}{
		"an input's content":       {write("work/ckpt/w.bin", "other weights"), true},
		"an input added":           {write("work/ckpt/more/w2.bin", "more"), true},
		"an excluded file":         {write("work/ckpt/x.tmp", "other scratch"), false},
		"a file no pattern names":  {write("work/README.md", "docs"), false},
		"the command":              {func(_ *testing.T, b *matrix.Build) { b.Script.Argv = append(b.Script.Argv, "--fp8") }, true},
		"an env: value":            {func(_ *testing.T, b *matrix.Build) { b.Script.Env = []string{"MODE=fp8"} }, true},
		"a distribution's version": {write(site+"numpy-2.2.6.dist-info/METADATA", "Name: numpy\nVersion: 2.3.0\n"), true},
		"a distribution added":     {write(site+"onnx-1.20.1.dist-info/METADATA", "Name: onnx\nVersion: 1.20.1\n"), true},
		"a package's code":         {write(site+"numpy/__init__.py", "changed"), false},
		"the interpreter":          {write("venv/bin/python", "an interpreter, 3.11.8"), true},
		"the library it loads":     {write(site+"tensorrt_rtx_libs/libtensorrt_rtx.so.1", "another library"), true},
		"an output added": {func(_ *testing.T, b *matrix.Build) {
			b.Script.Outputs = append(b.Script.Outputs, filepath.Join(b.Script.Workdir, "out/tokenizer.json"))
		}, true},
		"an engine's path": {func(_ *testing.T, b *matrix.Build) {
			b.Script.Engines = b.Script.Engines[:1]
		}, true},
		"its name and budgets": {func(_ *testing.T, b *matrix.Build) { b.Name, b.Budgets.Build = "other", 1 }, false},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			b := scriptProject(t, root)
			if again := scriptKey(t, b); again != k {
				t.Fatalf("the same project elsewhere has key %s, want %s: the key holds where the checkout is", again, k)
			}
			s := *b.Script
			s.Argv, s.Engines, s.Outputs = append([]string(nil), s.Argv...), append([]string(nil), s.Engines...), append([]string(nil), s.Outputs...)
			b.Script = &s
			c.change(t, &b)
			if changed := scriptKey(t, b) != k; changed != c.changes {
				t.Errorf("key changed: %v, want %v", changed, c.changes)
			}
		})
	}
}

// A command that is not Python is keyed by its program's content; a
// build with run: without inputs has none, and one whose patterns match
// nothing now cannot be keyed (it runs uncached, saying why).
func TestScriptKeyOfOtherPrograms(t *testing.T) {
	root := t.TempDir()
	b := scriptProject(t, root)
	t.Setenv("TRT_ACTION_RTX_LIB", filepath.Join(root, "venv/lib/python3.11/site-packages/tensorrt_rtx_libs")) // no Python: the library as any build finds it
	tool := filepath.Join(root, "work", "build.sh")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b.Script.Argv = []string{"./build.sh"}
	k := scriptKey(t, b)
	if err := os.WriteFile(tool, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if scriptKey(t, b) == k {
		t.Error("the key did not change with the program's content")
	}
	h := NewHasher()
	b.Script.Inputs = []string{"gone/*"}
	if _, err := h.Key(context.Background(), b, Env{}); err == nil || !strings.Contains(err.Error(), `inputs: "gone/*" matches no file`) {
		t.Errorf("inputs that match nothing: %v", err)
	}
	b.Script.Inputs = nil
	if _, err := h.Key(context.Background(), b, Env{}); !errors.Is(err, ErrNoInputs) {
		t.Errorf("no inputs: %v", err)
	}
	b.Script.Inputs, b.Script.Argv = []string{"build.sh"}, []string{"no-such-command"}
	if _, err := h.Key(context.Background(), b, Env{}); err == nil || !strings.Contains(err.Error(), "run: the command no-such-command is not found on its PATH") {
		t.Errorf("a command found nowhere: %v", err)
	}
}

// cache key --explain shows each part of a build with run:'s key, and the
// file each content hash is of; an env: value shows as its SHA-256 only.
func TestScriptKeyExplained(t *testing.T) {
	root := t.TempDir()
	b := scriptProject(t, root)
	h := NewHasher()
	env, err := h.BuildEnv(b, "", "")
	if err != nil {
		t.Fatal(err)
	}
	k, parts, err := h.Explain(context.Background(), b, env)
	if err != nil || k != scriptKey(t, b) {
		t.Fatalf("Explain = %s, %v; want the key %s", k, err, scriptKey(t, b))
	}
	got := map[string]KeyPart{}
	for _, p := range parts {
		got[p.Name] = p
	}
	for name, want := range map[string]KeyPart{
		"script.command":                                        {Value: `["python","build.py","--out","out"]`},
		"script.workdir":                                        {Value: "work"},
		"script.engines":                                        {Value: `["out/rank0.engine","out/rank1.engine"]`},
		"script.outputs":                                        {Value: `["out/config.json"]`},
		"script.inputs.build.py":                                {File: filepath.Join(root, "work/build.py")},
		"script.inputs.ckpt/w.bin":                              {File: filepath.Join(root, "work/ckpt/w.bin")},
		"script.program.python.interpreter":                     {File: filepath.Join(root, "venv/bin/python")},
		"script.program.python.distributions.numpy":             {Value: "2.2.6"},
		"script.program.python.distributions.tensorrt-rtx-cu12": {Value: "1.7.1.116"},
	} {
		p, ok := got[name]
		if !ok || want.Value != "" && p.Value != want.Value || p.File != want.File {
			t.Errorf("part %s = %+v (present %v), want %+v", name, p, ok, want)
		}
	}
	if v := got["script.env.MODE"].Value; len(v) != 64 || strings.Contains(v, "fp16") {
		t.Errorf("script.env.MODE = %q, want the value's SHA-256", v)
	}
	if _, ok := got["script.inputs.ckpt/x.tmp"]; ok {
		t.Error("an excluded file is a part of the key")
	}
	if lib := got["library"].Value; !strings.Contains(lib, "libtensorrt_rtx.so.1 sha256 ") {
		t.Errorf("library = %q, want the one in the program's environment", lib)
	}
}

// A Python program's library that trt-action finds nowhere (NVIDIA's
// tensorrt wheels, which trt-action does not look in) is its environment's:
// the key goes by its distributions; a program that is not Python has no
// key then, as a build without run: has none.
func TestScriptKeyOfALibraryFoundNowhere(t *testing.T) {
	b := scriptProject(t, t.TempDir())
	b.Backend = "tensorrt"
	t.Setenv("TRT_ACTION_TRT_LIB", t.TempDir()) // a folder without the library
	env, err := NewHasher().BuildEnv(b, "", "")
	if err != nil || env.Library != libraryOfEnvironment {
		t.Fatalf("BuildEnv = %+v, %v; want the environment's library", env, err)
	}
	b.Script.Argv = []string{"sh", "-c", "true"}
	if _, err := NewHasher().BuildEnv(b, "", ""); !isLibraryUnknown(err) {
		t.Errorf("a program that is not Python: %v; want the library unknown", err)
	}
}
