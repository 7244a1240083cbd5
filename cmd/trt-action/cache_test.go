package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache"
)

// cacheVersion is the folder of the cache format entries are stored in.
var cacheVersion = fmt.Sprintf("v%d", cache.FormatVersion)

// victim is a folder outside the cache with a file two hours old: what a
// link planted in the cache folder points to.
func victim(t *testing.T, dir string) (string, func(what string)) {
	t.Helper()
	v := filepath.Join(dir, "victim")
	old := filepath.Join(v, "old.txt")
	writeFile(t, old, "x\n")
	past := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{old, v} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	return v, func(what string) {
		t.Helper()
		if data, err := os.ReadFile(old); err != nil || string(data) != "x\n" {
			t.Errorf("%s: %s behind the link was removed or changed: %q, %v", what, old, data, err)
		}
	}
}

const cacheRunMatrix = `version: 1
builds:
  - {name: quick, backend: sim, engine: out/quick.engine, sim: {step: 0s}}
`

// The reproduction, as a user types it: a cache whose v1/tmp is a
// link to another folder. Before the fix, "cache ls" emptied that folder
// (the clean-up of abandoned staging went through the link), and so did a
// build. Now no command follows the link: ls names it and leaves it; a
// build, prune and verify remove the link itself and stage in a folder of
// the cache's own.
func TestACacheLinkToAnotherFolderIsNeverFollowed(t *testing.T) {
	for _, args := range [][]string{
		{"cache", "ls", "--cache", "c"},
		{"cache", "verify", "--cache", "c"},
		{"cache", "prune", "--cache", "c", "--max-size", "1"},
		{"build", "--cache", "c"},
	} {
		t.Run(args[0]+" "+args[1], func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "trt-builds.yml"), cacheRunMatrix)
			v, intact := victim(t, dir)
			if err := os.MkdirAll(filepath.Join(dir, "c", cacheVersion), 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "c", cacheVersion, "tmp")
			if err := os.Symlink(v, link); err != nil {
				t.Fatal(err)
			}
			out, err := command(dir, nil, args...).CombinedOutput()
			if code := exitCode(err); code != 0 {
				t.Fatalf("%v: exit %d\n%s", args, code, out)
			}
			intact(strings.Join(args, " "))
			want := "removed the symbolic link c/" + cacheVersion + "/tmp (to " + v + "): the cache keeps a folder of its own there"
			if args[1] == "ls" {
				want = "c/" + cacheVersion + "/tmp is a symbolic link (to " + v + "), not the cache's own: left alone"
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("%v does not say %q:\n%s", args, want, out)
			}
			fi, err := os.Lstat(link)
			switch {
			case err != nil:
				t.Fatal(err)
			case args[1] == "ls" && fi.Mode()&os.ModeSymlink == 0:
				t.Error("cache ls changed the cache folder")
			case args[1] != "ls" && !fi.IsDir():
				t.Errorf("%v left %s as %s, want a folder of the cache's own", args, link, fi.Mode())
			}
		})
	}
}

// An entry whose engine is a link is corrupt for cache verify (exit 1,
// the entry removed, the file it named kept), and a build with the cache
// builds instead of installing a link. An entry folder that is a link is
// named by cache ls and removed (the link) by prune. Before, verify called
// the linked engine ok, a build installed it as a link, and the linked
// folder was invisible to ls, verify and prune.
func TestCacheEntriesThatAreLinks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), cacheRunMatrix)
	if out, err := command(dir, nil, "build", "--cache", "c").CombinedOutput(); exitCode(err) != 0 {
		t.Fatalf("first build: %v\n%s", err, out)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "c", cacheVersion, "*", "*", "engine"))
	if len(entries) != 1 {
		t.Fatalf("entries %v", entries)
	}
	engine := entries[0]
	outside := filepath.Join(dir, "outside.engine")
	if err := os.Rename(engine, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, engine); err != nil {
		t.Fatal(err)
	}
	out, err := command(dir, nil, "build", "--cache", "c").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "symbolic link") {
		t.Fatalf("build with a linked engine: %v\n%s", err, out)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "out", "quick.engine")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the engine path holds %v, %v; want a regular file", fi.Mode(), err)
	}
	if r := readReport(t, filepath.Join(dir, "trt-report.json")); r.Builds[0].Status != "ok" || !r.Builds[0].Cache.Stored {
		t.Errorf("build with a linked entry: %s, cache %+v; want built and stored again", r.Builds[0].Status, r.Builds[0].Cache)
	}
	if err := os.Remove(engine); err != nil { // the stored again entry's engine, linked once more
		t.Fatal(err)
	}
	if err := os.Symlink(outside, engine); err != nil {
		t.Fatal(err)
	}
	out, err = command(dir, nil, "cache", "verify", "--cache", "c").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "its engine is a symbolic link (to "+outside+")") || !strings.Contains(string(out), "; removed") {
		t.Errorf("cache verify of a linked engine: %v\n%s", err, out)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("verify removed the file the link named: %v", err)
	}

	// An entry folder that is a link.
	entryDir := filepath.Dir(engine)
	away := filepath.Join(dir, "away")
	if err := os.Mkdir(away, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(away, entryDir); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, entryDir) // as the commands name it: under --cache c
	out, err = command(dir, nil, "cache", "ls", "--cache", "c").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), rel+" is a symbolic link (to "+away+"), not an entry") {
		t.Errorf("cache ls of a linked entry folder: %v\n%s", err, out)
	}
	out, err = command(dir, nil, "cache", "prune", "--cache", "c", "--older-than", "1000h").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "removed the link "+rel) {
		t.Errorf("cache prune of a linked entry folder: %v\n%s", err, out)
	}
	if _, err := os.Lstat(entryDir); !os.IsNotExist(err) {
		t.Errorf("prune left the link: %v", err)
	}
	if _, err := os.Stat(away); err != nil {
		t.Errorf("prune removed the folder the link named: %v", err)
	}
}

// A cache folder without v1/tmp (artifact uploads and s3 sync drop empty
// folders): verify removes a bad entry and prune --max-size 1 removes
// every entry, creating tmp/ to do it; ls creates nothing. Before, verify
// said "not removed (a read-only cache…)" and exited 1 for ever, and prune
// removed nothing and exited 0.
func TestCacheWithoutItsStagingFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), cacheRunMatrix)
	if out, err := command(dir, nil, "build", "--cache", "c").CombinedOutput(); exitCode(err) != 0 {
		t.Fatalf("first build: %v\n%s", err, out)
	}
	tmp := filepath.Join(dir, "c", cacheVersion, "tmp")
	engines, _ := filepath.Glob(filepath.Join(dir, "c", cacheVersion, "*", "*", "engine"))
	if len(engines) != 1 {
		t.Fatalf("engines %v", engines)
	}
	writeFile(t, engines[0], "damaged")
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if out, err := command(dir, nil, "cache", "ls", "--cache", "c").CombinedOutput(); exitCode(err) != 0 {
		t.Fatalf("cache ls: %v\n%s", err, out)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("cache ls created %s", tmp)
	}
	out, err := command(dir, nil, "cache", "verify", "--cache", "c").CombinedOutput()
	if exitCode(err) != 1 || !strings.Contains(string(out), "; removed") {
		t.Errorf("cache verify: exit %d\n%s", exitCode(err), out)
	}
	if out, err := command(dir, nil, "cache", "verify", "--cache", "c").CombinedOutput(); exitCode(err) != 0 {
		t.Errorf("cache verify after the bad entry went: exit %d\n%s", exitCode(err), out)
	}
	if out, err := command(dir, nil, "build", "--cache", "c").CombinedOutput(); exitCode(err) != 0 {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	out, err = command(dir, nil, "cache", "prune", "--cache", "c", "--max-size", "1").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "removed 1 entry") {
		t.Errorf("cache prune --max-size 1: exit %d\n%s", exitCode(err), out)
	}
}

// cache prune of a cache it cannot write says so, and nothing else:
// before, it printed "removed 0 entries, 0 B" and then its error. As root,
// whom permission bits do not stop, the binary runs as user nobody.
func TestCachePruneOfAReadOnlyCacheSaysOnlyThat(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), cacheRunMatrix)
	if out, err := command(dir, nil, "build", "--cache", "c").CombinedOutput(); exitCode(err) != 0 {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := command(dir, nil, "cache", "prune", "--cache", "c", "--max-size", "1")
	if os.Geteuid() == 0 {
		for p := dir; p != filepath.Dir(os.TempDir()); p = filepath.Dir(p) { // nobody must reach it
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		exe := filepath.Join(dir, "trt-action") // nor the binary, wherever it was built
		if err := exec.Command("cp", binary, exe).Run(); err != nil {
			t.Fatal(err)
		}
		cmd.Path, cmd.Args[0] = exe, exe
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		if err := exec.Command("chmod", "-R", "a-w", filepath.Join(dir, "c")).Run(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", dir).Run() })
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exitCode(err) != 1 || stdout.String() != "" || !strings.Contains(stderr.String(), "read-only") || strings.Contains(stderr.String(), "removed") {
		t.Errorf("cache prune of a read-only cache: exit %d\nstdout %q\nstderr %q", exitCode(err), stdout.String(), stderr.String())
	}
}

// A build whose cache folder holds an older format's folder (v1/ after an
// upgrade) says so once, with its size and how to remove it, and leaves it.
func TestABuildNamesAnOlderCacheFormatOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), cacheRunMatrix)
	writeFile(t, filepath.Join(dir, "c", "v1", "ab", "abcd", "engine"), strings.Repeat("x", 4_000))
	out, err := command(dir, nil, "build", "--cache", "c").CombinedOutput()
	named := fmt.Sprintf("c/v1/ (cache format 1, 4.0 kB) is never read by this version (cache format %d); trt-action cache prune --other-formats removes it", cache.FormatVersion)
	if exitCode(err) != 0 || strings.Count(string(out), named) != 1 {
		t.Errorf("build: exit %d, want %q once:\n%s", exitCode(err), named, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "c", "v1", "ab", "abcd", "engine")); err != nil {
		t.Errorf("a build removed the older format's folder: %v", err)
	}
}
