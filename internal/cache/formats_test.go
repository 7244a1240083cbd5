package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oldFormatCache makes a cache folder as upgrades leave it: an entry of
// this format, a v1/ folder of 3,000 bytes in two files (one a level
// down), a v2/ entry of the format before this one (500 bytes), a v9/ of
// a newer trt-action (100 bytes), and names that are no format's (a file
// v7, a folder v01).
func oldFormatCache(t *testing.T) (dir string, k Key) {
	t.Helper()
	dir = t.TempDir()
	k = store(t, openCache(t, dir, 0), "current", 500)
	files := map[string]int{"v1/ab/old/engine": 2_000, "v1/ab/old/entry.json": 1_000, "v2/cd/older/engine": 400, "v2/cd/older/entry.json": 100,
		"v9/new": 100, "v7": 7, "v01/x": 5}
	for name, size := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, k
}

func TestListNamesOtherFormatsWithTheirSizes(t *testing.T) {
	dir, k := oldFormatCache(t)
	c, err := Open(Options{Dir: dir, Look: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 1 || l.Entries[0].Key != k {
		t.Fatalf("entries %v, want only this format's", keysOf(l.Entries))
	}
	want := []OtherFormat{{Path: filepath.Join(dir, "v1") + "/", Format: 1, Bytes: 3_000}, {Path: filepath.Join(dir, "v2") + "/", Format: 2, Bytes: 500},
		{Path: filepath.Join(dir, "v9") + "/", Format: 9, Bytes: 100}}
	if len(l.OtherFormats) != len(want) {
		t.Fatalf("other formats %+v, want %+v", l.OtherFormats, want)
	}
	for i, w := range want {
		if got := l.OtherFormats[i]; got.Path != w.Path || got.Format != w.Format || got.Bytes != w.Bytes || got.Link != "" {
			t.Errorf("other format %d: %+v, want %+v", i, got, w)
		}
	}
	warnings := strings.Join(l.Warnings(), "\n")
	for _, w := range []string{"v1/ (cache format 1, 3.0 kB) is never read by this version (cache format 3); trt-action cache prune --other-formats removes it",
		"v2/ (cache format 2, 500 B) is never read by this version (cache format 3); trt-action cache prune --other-formats removes it",
		"v9/ (cache format 9, 100 B) is a newer trt-action's: this version (cache format 3) never reads or removes it"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("ls warnings lack %q:\n%s", w, warnings)
		}
	}
}

// A link at v1 is named as a link; nothing behind it is read or counted.
func TestOtherFormatLinkIsNeverFollowed(t *testing.T) {
	victim, check := victimFolder(t)
	dir := t.TempDir()
	if err := os.Symlink(victim, filepath.Join(dir, "v1")); err != nil {
		t.Fatal(err)
	}
	c, err := Open(Options{Dir: dir, Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.OtherFormats) != 1 || l.OtherFormats[0].Link != victim || l.OtherFormats[0].Bytes != 0 {
		t.Fatalf("other formats %+v, want v1 as a link to %s with no size", l.OtherFormats, victim)
	}
	done, err := c.Prune(PruneRule{OtherFormats: true})
	if err != nil {
		t.Fatal(err)
	}
	check()
	if len(done.Formats) != 1 || isLink(filepath.Join(dir, "v1")) {
		t.Errorf("prune --other-formats removed %+v; the link must go (never what it names)", done.Formats)
	}
}

func TestPruneOtherFormatsRemovesOnlyOlderFormats(t *testing.T) {
	dir, k := oldFormatCache(t)
	c, err := Open(Options{Dir: dir, Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	// Without --other-formats, a prune leaves them.
	if _, err := c.Prune(PruneRule{MaxSize: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "v1", "ab", "old", "engine")); err != nil {
		t.Fatalf("a prune by size removed v1/: %v", err)
	}
	done, err := c.Prune(PruneRule{OtherFormats: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Formats) != 2 || done.Formats[0].Format != 1 || done.Formats[0].Bytes != 3_000 ||
		done.Formats[1].Format != 2 || done.Formats[1].Bytes != 500 || len(done.Entries) != 0 {
		t.Fatalf("pruned %+v, want v1/ (3000 bytes), v2/ (500 bytes) and no entry", done)
	}
	for _, gone := range []string{"v1", "v2"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s/ is still there: %v", gone, err)
		}
	}
	for _, keep := range []string{"v9/new", "v7", "v01/x"} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s went with the older format: %v", keep, err)
		}
	}
	l, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 1 || l.Entries[0].Key != k || l.Leftovers != 0 {
		t.Errorf("after the prune: entries %v, %d leftovers; want this format's entry and no leftover", keysOf(l.Entries), l.Leftovers)
	}
}

// A cache without this format's folder (only v1/, as a cache restored
// from before an upgrade) is pruned as well: the prune makes what it
// stages through.
func TestPruneOtherFormatsWithoutThisFormatsFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "v1", "ab"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Open(Options{Dir: dir, Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Prune(PruneRule{OtherFormats: true})
	if err != nil || len(done.Formats) != 1 {
		t.Fatalf("pruned %+v, %v; want v1/", done, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "v1")); !os.IsNotExist(err) {
		t.Errorf("v1/ is still there: %v", err)
	}
}

// A build is told once of an older format's folder; the cache commands,
// which list or remove them themselves, are not.
func TestBuildIsToldOfOlderFormats(t *testing.T) {
	dir, _ := oldFormatCache(t)
	c := openCache(t, dir, 0)
	notices := strings.Join(c.Notices(), "\n")
	if !strings.Contains(notices, "v1/ (cache format 1, 3.0 kB) is never read") || !strings.Contains(notices, "v2/ (cache format 2, 500 B) is never read") ||
		strings.Contains(notices, "v9") {
		t.Errorf("a build's notices: %q; want v1/ and v2/ named, and not the newer v9/", notices)
	}
	for _, o := range []Options{{Dir: dir, Existing: true}, {Dir: dir, Look: true}} {
		c, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Notices(); len(n) != 0 {
			t.Errorf("%+v: notices %q", o, n)
		}
	}
}
