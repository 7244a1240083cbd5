package runfiles

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree makes files (with / in their names) under a new folder.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGlobMatchesAsHashFilesDoes(t *testing.T) {
	dir := tree(t, "build.py", "requirements.txt", ".hidden.py", "models/a.onnx", "models/b.onnx", "models/sub/c.onnx",
		"models/sub/c.onnx.data", "src/pkg/x.py", "src/pkg/__pycache__/x.pyc", "src/y.py", "[odd].txt")
	for _, c := range []struct {
		patterns []string
		want     []string
	}{
		{[]string{"build.py"}, []string{"build.py"}},
		{[]string{"*.py"}, []string{".hidden.py", "build.py"}}, // dot files match, as with dot: true
		{[]string{"models/*.onnx"}, []string{"models/a.onnx", "models/b.onnx"}},
		{[]string{"models/**/*.onnx"}, []string{"models/a.onnx", "models/b.onnx", "models/sub/c.onnx"}},
		{[]string{"models"}, []string{"models/a.onnx", "models/b.onnx", "models/sub/c.onnx", "models/sub/c.onnx.data"}}, // a folder: its files
		{[]string{"src/**", "!**/__pycache__"}, []string{"src/pkg/x.py", "src/y.py"}},
		{[]string{"!src/y.py", "src/**/*.py"}, []string{"src/pkg/x.py"}}, // an exclusion anywhere in the list
		{[]string{"models/?.onnx", "./build.py", "models/../requirements.txt"}, []string{"build.py", "models/a.onnx", "models/b.onnx", "requirements.txt"}},
		{[]string{`\[odd\].txt`}, []string{"[odd].txt"}},
		{[]string{"build.py", "*.py"}, []string{".hidden.py", "build.py"}}, // each file once
	} {
		got, problems := Glob(dir, c.patterns, nil)
		if len(problems) > 0 || !slices.Equal(got, c.want) {
			t.Errorf("Glob(%q) = %q, %v; want %q", c.patterns, got, problems, c.want)
		}
	}
}

// Each pattern that cannot be used is named, all at once.
func TestGlobNamesEachBadPattern(t *testing.T) {
	dir := tree(t, "build.py")
	_, problems := Glob(dir, []string{"build.py", "missing/*.onnx", "[", "", "!nothing"}, nil)
	var got []string
	for _, p := range problems {
		got = append(got, strings.Join([]string{string(rune('0' + p.Pattern)), p.Msg}, ": "))
	}
	want := []string{"1: matches no file", "2: is not a pattern: syntax error in pattern", "3: an empty pattern"}
	if !slices.Equal(got, want) {
		t.Errorf("problems\n%q\nwant\n%q", got, want)
	}
}

// A link met while walking is followed into within only: one that leads
// out is the pattern's problem, whatever it points to; the fixed part of
// a pattern is taken as written; a link back up to a folder on the way
// down is not walked again.
func TestGlobFollowsLinksOnlyWithin(t *testing.T) {
	outside := tree(t, "secret.key")
	dir := tree(t, "models/a.onnx", "data/d.bin")
	if err := os.Symlink(outside, filepath.Join(dir, "models", "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "data"), filepath.Join(dir, "models", "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "data", "up")); err != nil { // a loop
		t.Fatal(err)
	}
	within := func(real string) bool { return Within(real, Real(dir)) }
	_, problems := Glob(dir, []string{"models/**"}, within)
	if len(problems) != 1 || !strings.Contains(problems[0].Msg, "elsewhere is a symbolic link to "+Real(outside)+", outside the workspace") {
		t.Errorf("a walk into a link out of the workspace: %v", problems)
	}
	got, problems := Glob(dir, []string{"models/elsewhere/secret.key", "data/**"}, within)
	if len(problems) > 0 || !slices.Equal(got, []string{"data/d.bin", "models/elsewhere/secret.key"}) {
		t.Errorf("Glob = %q, %v", got, problems)
	}
	if got, problems := Glob(dir, []string{"models/**"}, nil); len(problems) > 0 || !slices.Contains(got, "models/elsewhere/secret.key") {
		t.Errorf("without bounds: Glob = %q, %v", got, problems)
	}
}

// A cache folder (one holding a CACHEDIR.TAG with the signature, as the
// engine cache folder does) is never walked: its files change with every
// run that stores an entry, so an input in it would give each run a key
// of its own. A tag without the signature is no tag.
func TestGlobLeavesCacheFoldersOut(t *testing.T) {
	dir := tree(t, "build.py", ".trt-cache/v3/ab/entry.json", "out/x.engine", "notes/CACHEDIR.TAG", "notes/n.txt", "sub/.cache/blob")
	for _, tagged := range []string{".trt-cache", "sub/.cache"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(tagged), CacheTagName), CacheTag, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		patterns []string
		want     []string
	}{
		{[]string{"**", "!out/**"}, []string{"build.py", "notes/CACHEDIR.TAG", "notes/n.txt"}},
		{[]string{"*", "!out"}, []string{"build.py", "notes/CACHEDIR.TAG", "notes/n.txt"}},
		{[]string{"sub", "build.py"}, []string{"build.py"}},
		{[]string{"**/*.json", "build.py"}, []string{"build.py"}},
	} {
		got, problems := Glob(dir, c.patterns, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("Glob(%q) = %q, %v; want %q", c.patterns, got, problems, c.want)
		}
	}
	_, problems := Glob(dir, []string{".trt-cache", ".trt-cache/v3/ab/entry.json", "**/entry.json"}, nil)
	if len(problems) != 3 {
		t.Fatalf("patterns of a cache folder's files alone: problems %v, want one each", problems)
	}
	for _, p := range problems {
		if !strings.Contains(p.Msg, "matches no file outside a cache folder") {
			t.Errorf("pattern %d: %q; want it to say the cache folder is left out", p.Pattern, p.Msg)
		}
	}
}
