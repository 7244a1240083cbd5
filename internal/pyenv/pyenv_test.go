package pyenv

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// write writes files (path: content) under root; a content starting with
// #! or named like an interpreter is made executable.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") || IsInterpreter(full) || strings.HasPrefix(p, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// A virtual environment and the programs that run in it: its python, a
// console script pip wrote (#! naming its python), one whose #! line is
// pip's /bin/sh form for a long path, and python3 found through env.
func TestFindAVirtualEnvironment(t *testing.T) {
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	write(t, venv, map[string]string{
		"pyvenv.cfg":     "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n",
		"bin/python":     "an interpreter",
		"bin/polygraphy": "#!" + filepath.Join(venv, "bin", "python") + "\n# -*- coding: utf-8 -*-\n",
		"bin/long":       "#!/bin/sh\n'''exec' \"/a/very/long/path/python\" \"$0\" \"$@\"\n' '''\n",
		"bin/tool.py":    "#!/usr/bin/env -S python\nprint(1)\n",
		"lib/python3.11/site-packages/numpy-2.2.6.dist-info/METADATA": "Metadata-Version: 2.1\nName: numpy\nVersion: 2.2.6\nLicense: BSD\n" +
			"         continued: Version: 9\n\nVersion: 0 (the description, not a header)\n",
		"lib/python3.11/site-packages/Tensorrt_RTX_cu12-1.7.dist-info/METADATA": "Name: Tensorrt_RTX.cu12\nVersion: 1.7.1.116\n",
		"lib/python3.11/site-packages/old.egg-info/PKG-INFO":                    "Name: old\nVersion: 0.1\n",
		"lib/python3.11/site-packages/flat-1.0.egg-info":                        "Name: flat\nVersion: 1.0\n",
		"lib/python3.11/site-packages/numpy/__init__.py":                        "",
	})
	if err := os.Symlink("lib", filepath.Join(venv, "lib64")); err != nil {
		t.Fatal(err)
	}
	path := map[string]string{"PATH": filepath.Join(venv, "bin") + ":/usr/bin:/bin"}
	for _, word := range []string{"python", "polygraphy", "long", filepath.Join(venv, "bin", "tool.py")} {
		p, err := Find(word, dir, env(path))
		if err != nil {
			t.Fatal(err)
		}
		if p.Python == nil || p.Python.Root != venv || !p.Python.Venv || p.Python.Interpreter != filepath.Join(venv, "bin", "python") ||
			!slices.Equal(p.Python.Sites, []string{filepath.Join(venv, "lib", "python3.11", "site-packages")}) {
			t.Errorf("%s: %+v, python %+v", word, p, p.Python)
			continue
		}
		dists, err := p.Python.Distributions()
		want := map[string]string{"numpy": "2.2.6", "tensorrt-rtx-cu12": "1.7.1.116", "old": "0.1", "flat": "1.0"}
		if err != nil || !maps.Equal(dists, want) {
			t.Errorf("%s: distributions %v, %v; want %v", word, dists, err, want)
		}
	}
}

// A program that is not Python is found, with no environment; a word
// found nowhere is an error naming the PATH looked in; a word with a / is
// relative to the command's folder.
func TestFindOtherPrograms(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"bin/trtexec": "\x7fELF", "run.sh": "#!/bin/sh\necho\n", "bin/python3-config": "#!/bin/sh\n"})
	vars := env(map[string]string{"PATH": "bin"})
	for word, want := range map[string]string{"trtexec": filepath.Join(dir, "bin", "trtexec"), "./run.sh": filepath.Join(dir, "run.sh"),
		"python3-config": filepath.Join(dir, "bin", "python3-config")} {
		p, err := Find(word, dir, vars)
		if err != nil || p.Path != want || p.Python != nil {
			t.Errorf("%s: %+v, %v; want %s, not Python", word, p, err, want)
		}
	}
	if _, err := Find("missing", dir, vars); err == nil || !strings.Contains(err.Error(), "the command missing is not found on its PATH (bin)") {
		t.Errorf("a missing command: %v", err)
	}
}

// An installation's interpreter (no pyvenv.cfg): its prefix's packages,
// Debian's dist-packages, and the user's site-packages first unless
// PYTHONNOUSERSITE; a virtual environment with the system's packages has
// its base's after its own.
func TestFindAnInstallation(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "usr")
	home := filepath.Join(dir, "home")
	write(t, prefix, map[string]string{
		"bin/python3.12": "an interpreter",
		"lib/python3.12/site-packages/a-1.dist-info/METADATA": "Name: a\nVersion: 1\n",
		"lib/python3/dist-packages/b-2.dist-info/METADATA":    "Name: b\nVersion: 2\n",
		"lib/python3.11/site-packages/c-3.dist-info/METADATA": "Name: c\nVersion: 3\n", // another Python's
	})
	write(t, home, map[string]string{".local/lib/python3.12/site-packages/a-9.dist-info/METADATA": "Name: A\nVersion: 9\n"})
	if err := os.Symlink("python3.12", filepath.Join(prefix, "bin", "python3")); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PATH": filepath.Join(prefix, "bin"), "HOME": home}
	p, err := Find("python3", dir, env(vars))
	if err != nil || p.Python == nil || p.Python.Venv || p.Python.Root != prefix {
		t.Fatalf("Find = %+v, %v", p, err)
	}
	dists, err := p.Python.Distributions()
	if err != nil || !maps.Equal(dists, map[string]string{"a": "9", "b": "2"}) {
		t.Errorf("distributions %v, %v; want the user's a 9 over the prefix's, b, and not the other Python's c", dists, err)
	}
	vars["PYTHONNOUSERSITE"] = "1"
	p, _ = Find("python3", dir, env(vars))
	if dists, _ := p.Python.Distributions(); dists["a"] != "1" {
		t.Errorf("with PYTHONNOUSERSITE: %v", dists)
	}

	venv := filepath.Join(dir, "venv")
	write(t, venv, map[string]string{
		"pyvenv.cfg": "home = " + filepath.Join(prefix, "bin") + "\ninclude-system-site-packages = true\nversion_info = 3.12.1.final.0\n",
		"bin/python": "an interpreter",
		"lib/python3.12/site-packages/b-5.dist-info/METADATA": "Name: b\nVersion: 5\n",
	})
	p, err = Find(filepath.Join(venv, "bin", "python"), dir, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if dists, err := p.Python.Distributions(); err != nil || !maps.Equal(dists, map[string]string{"a": "1", "b": "5"}) {
		t.Errorf("a venv with the system's packages: %v, %v", dists, err)
	}
}

// A record whose metadata cannot be read makes the environment unknown.
func TestDistributionsRefusesAnUnreadableRecord(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"pyvenv.cfg": "version = 3.10.1\n", "bin/python": "x",
		"lib/python3.10/site-packages/broken-1.dist-info/RECORD": ""})
	p, err := Find(filepath.Join(dir, "bin", "python"), dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Python.Distributions(); err == nil || !strings.Contains(err.Error(), "broken-1.dist-info") {
		t.Errorf("Distributions = %v; want the record named", err)
	}
}
