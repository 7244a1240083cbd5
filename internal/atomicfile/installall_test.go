package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// stageSet writes, for each name, a partial file beside dir/name holding
// "new NAME", and returns the set InstallAll takes.
func stageSet(t *testing.T, dir string, names ...string) []Staged {
	t.Helper()
	var set []Staged
	for _, n := range names {
		path := filepath.Join(dir, n)
		tmp := PartialName(path)
		if err := os.WriteFile(tmp, []byte("new "+n), 0o644); err != nil {
			t.Fatal(err)
		}
		set = append(set, Staged{Tmp: tmp, Path: path})
	}
	return set
}

// removeTmps does what a caller of InstallAll does after an error.
func removeTmps(set []Staged) {
	for _, s := range set {
		os.Remove(s.Tmp)
	}
}

func TestInstallAllInstallsEveryFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.engine"), []byte("old a.engine"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := stageSet(t, dir, "a.engine", "b.engine", "config.json")
	if err := InstallAll(set); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.engine", "b.engine", "config.json"} {
		if got := read(t, filepath.Join(dir, n)); got != "new "+n {
			t.Errorf("%s holds %q, want the new file", n, got)
		}
	}
	checkOnly(t, dir, "a.engine", "b.engine", "config.json") // no old file kept, no partial file left
}

// failRename makes the nth rename of a path ending in target fail (n from
// 1), for the rest of the test.
func failRename(t *testing.T, target string, n int) {
	t.Helper()
	seen := 0
	rename = func(from, to string) error {
		if strings.HasSuffix(to, target) {
			if seen++; seen == n {
				return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EIO}
			}
		}
		return os.Rename(from, to)
	}
	t.Cleanup(func() { rename = os.Rename })
}

// The second of three renames fails: the first path gets its old file
// back, the path that had none stays empty, and nothing else is left.
func TestInstallAllPutsTheSetBackWhenARenameFails(t *testing.T) {
	for _, hardLinks := range []bool{true, false} {
		name := "with hard links"
		if !hardLinks {
			name = "without hard links" // the old files are moved aside instead
		}
		t.Run(name, func(t *testing.T) {
			if !hardLinks {
				link = func(string, string) error { return syscall.EPERM }
				t.Cleanup(func() { link = os.Link })
			}
			dir := t.TempDir()
			for _, n := range []string{"a.engine", "b.engine"} {
				if err := os.WriteFile(filepath.Join(dir, n), []byte("old "+n), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			set := stageSet(t, dir, "a.engine", "b.engine", "config.json")
			failRename(t, "/b.engine", 1) // the install of b.engine; without hard links, after its old file was moved aside
			err := InstallAll(set)
			if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "b.engine") {
				t.Fatalf("InstallAll = %v, want the failed rename of b.engine", err)
			}
			removeTmps(set)
			for _, n := range []string{"a.engine", "b.engine"} {
				if got := read(t, filepath.Join(dir, n)); got != "old "+n {
					t.Errorf("%s holds %q after the failed set, want its old file back", n, got)
				}
			}
			checkOnly(t, dir, "a.engine", "b.engine") // config.json had none: none now; nothing kept aside left
		})
	}
}

// A path that cannot take its file fails the set before anything moves.
func TestInstallAllChecksEveryPathFirst(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.engine"), []byte("old a.engine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/elsewhere", filepath.Join(dir, "config.json")); err != nil {
		t.Fatal(err)
	}
	set := stageSet(t, dir, "a.engine", "config.json")
	err := InstallAll(set)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("InstallAll = %v, want the link refused", err)
	}
	removeTmps(set)
	if got := read(t, filepath.Join(dir, "a.engine")); got != "old a.engine" {
		t.Errorf("a.engine holds %q, want it untouched", got)
	}
	checkOnly(t, dir, "a.engine", "config.json")
}
