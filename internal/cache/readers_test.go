package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests of cache.go's "Who may remove what": each puts another
// process's operation (another Cache on the same folder) between two steps
// of a reader or a remover, through the hooks, where the review
// found an entry stored meanwhile removed in place of the one checked.

// fetchWord fetches k and returns the build its entry names, failing the
// test unless it is a hit whose engine is that word's.
func fetchWord(t *testing.T, c *Cache, k Key, size int) string {
	t.Helper()
	dest := filepath.Join(t.TempDir(), "e")
	e, hit, err := c.Fetch(k, dest)
	if !hit || err != nil {
		t.Fatalf("Fetch = hit %v, %v; want a hit", hit, err)
	}
	if data, _ := os.ReadFile(dest); !bytes.Equal(data, engineBytes(e.Build, size)) {
		t.Fatalf("entry %q delivered another engine", e.Build)
	}
	return e.Build
}

// replaceWhenSwapped starts replacer.Replace(k, engine) and returns once
// the new entry is in place; the channel gives Replace's error once it
// has removed the old entry too.
func replaceWhenSwapped(t *testing.T, replacer *Cache, k Key, engine, word string) <-chan error {
	t.Helper()
	swapped := make(chan struct{})
	replacer.hooks.swapped = func(Key) { close(swapped) }
	done := make(chan error, 1)
	go func() {
		got, err := replacer.Replace(k, engine, Entry{Build: word})
		if err == nil && got.Outcome != Replaced {
			err = os.ErrExist
		}
		done <- err
	}()
	select {
	case <-swapped:
	case err := <-done:
		t.Fatalf("Replace ended before it swapped the entries: %v", err)
	}
	return done
}

// A reader that opened the old entry's folder just before a --rebuild
// swapped it out reads the old entry whole: the removal of the old folder
// waits for it. Before, the replacer emptied the folder under the reader,
// which found its engine missing, called the entry corrupt, and removed
// what was at the key by then: the new entry.
func TestReaderDuringReplaceGetsTheOldEntryWhole(t *testing.T) {
	dir := t.TempDir()
	reader, replacer := openCache(t, dir, 0), openCache(t, dir, 0)
	k := testKey("mlp")
	if _, err := reader.Store(k, engineFor(t, t.TempDir(), "old", 4096), Entry{Build: "old"}); err != nil {
		t.Fatal(err)
	}
	newEngine := engineFor(t, t.TempDir(), "new", 4096)
	var once sync.Once
	var replaced <-chan error
	reader.hooks.opened = func(Key) {
		once.Do(func() {
			replaced = replaceWhenSwapped(t, replacer, k, newEngine, "new")
			// Time for the old folder's removal, which went through
			// before readers locked it, and now waits for this one.
			time.Sleep(200 * time.Millisecond)
		})
	}
	if got := fetchWord(t, reader, k, 4096); got != "old" {
		t.Errorf("the reader got %q; want the old entry it opened, whole", got)
	}
	if err := <-replaced; err != nil {
		t.Fatalf("Replace: %v", err)
	}
	reader.hooks.opened = nil
	if got := fetchWord(t, reader, k, 4096); got != "new" {
		t.Errorf("after the replacement: %q, want the new entry", got)
	}
}

// A reader that found the entry it opened corrupt removes that entry
// only: when a --rebuild put a new entry at the key meanwhile, the new one
// stays, and the reader reads it (Fetch) or has nothing to report
// (Verify). Before, discard removed whatever was at the key: the fresh
// entry.
func TestDiscardRemovesOnlyTheEntryItChecked(t *testing.T) {
	for _, how := range []string{"fetch", "verify"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			reader, replacer := openCache(t, dir, 0), openCache(t, dir, 0)
			k := testKey("mlp")
			if _, err := reader.Store(k, engineFor(t, t.TempDir(), "old", 4096), Entry{Build: "old"}); err != nil {
				t.Fatal(err)
			}
			editInPlace(t, filepath.Join(reader.entryDir(k), engineName)) // the bad engine --rebuild is for
			newEngine := engineFor(t, t.TempDir(), "new", 4096)
			var once sync.Once
			var replaced <-chan error
			reader.hooks.bad = func(Key) {
				once.Do(func() { replaced = replaceWhenSwapped(t, replacer, k, newEngine, "new") })
			}
			switch how {
			case "fetch":
				if got := fetchWord(t, reader, k, 4096); got != "new" {
					t.Errorf("Fetch got %q; want the new entry, read again", got)
				}
			case "verify":
				if _, bad, err := reader.Verify(); len(bad) != 0 || err != nil {
					t.Errorf("Verify = %v, %v; want nothing (the bad entry was replaced while checked)", bad, err)
				}
			}
			if replaced == nil {
				t.Fatal("the reader never found the old entry bad")
			}
			if err := <-replaced; err != nil {
				t.Fatalf("Replace: %v", err)
			}
			reader.hooks.bad = nil
			if got := fetchWord(t, reader, k, 4096); got != "new" {
				t.Errorf("the new entry: %q", got)
			}
		})
	}
}

// Prune evicts the entry folder it listed, never one stored in its place
// since: an entry a --rebuild replaced between the listing and the
// eviction stays. Before, eviction removed whatever was at the key.
func TestPruneEvictsOnlyTheEntryItListed(t *testing.T) {
	dir := t.TempDir()
	pruner, replacer := openCache(t, dir, 0), openCache(t, dir, 0)
	a, b := store(t, pruner, "a", 1000), store(t, pruner, "b", 1000)
	setLastUsed(t, pruner, a, time.Now().Add(-2*time.Hour))
	setLastUsed(t, pruner, b, time.Now().Add(-time.Hour))
	fresh := engineFor(t, t.TempDir(), "a2", 1000)
	pruner.hooks.listed = func(struct{}) {
		if got, err := replacer.Replace(a, fresh, Entry{Build: "a2"}); err != nil || got.Outcome != Replaced {
			t.Errorf("Replace = %+v, %v", got, err)
		}
	}
	// Room for one entry: the listing says a (least recently used) goes.
	if _, err := pruner.Prune(PruneRule{MaxSize: 1000 + metaSize(t, pruner, a) + 500}); err != nil {
		t.Fatal(err)
	}
	pruner.hooks.listed = nil
	if got := fetchWord(t, pruner, a, 1000); got != "a2" {
		t.Errorf("a: %q, want the entry stored after the listing", got)
	}
}

// An entry that can never be served (its metadata unreadable, or its
// engine or metadata a link or a FIFO) is in the one listing that ls,
// prune and max-size share: ls lists it as broken, with what it holds on
// disk, and prune evicts it first, before any good entry. Before, ls left
// out an entry whose metadata did not read while prune counted it, and
// evicted a good entry to make room while keeping the broken one; and an
// engine that was a link or a FIFO was listed as a good entry.
func TestBrokenEntriesAreListedAndEvictedFirst(t *testing.T) {
	damage := map[string]struct {
		harm   func(t *testing.T, dir string)
		reason string
		size   func(engine, meta int64) int64 // what it holds on disk
	}{
		"metadata not JSON": {func(t *testing.T, dir string) {
			writeOver(t, filepath.Join(dir, metaName), []byte("{not json"))
		}, "its metadata is not valid JSON", func(engine, _ int64) int64 { return engine + 9 }},
		"no metadata": {func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, metaName)); err != nil {
				t.Fatal(err)
			}
		}, "its metadata file (entry.json) is missing", func(engine, _ int64) int64 { return engine }},
		"metadata a link": {func(t *testing.T, dir string) {
			linkOut(t, filepath.Join(dir, metaName))
		}, "its metadata is a symbolic link", func(engine, _ int64) int64 { return engine }},
		"engine a link": {func(t *testing.T, dir string) {
			linkOut(t, filepath.Join(dir, engineName))
		}, "its engine is a symbolic link", func(_, meta int64) int64 { return meta }},
		"engine a FIFO": {func(t *testing.T, dir string) {
			p := filepath.Join(dir, engineName)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "its engine is a FIFO, not a file", func(_, meta int64) int64 { return meta }},
		"engine longer": {func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, engineName), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("x\n")
			f.Close()
		}, "its engine has 1002 bytes, the entry says 1000 (longer: bytes were added)", func(engine, meta int64) int64 { return engine + 2 + meta }},
	}
	for name, d := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c := openCache(t, dir, 0)
			old, recent, broken := store(t, c, "old", 1000), store(t, c, "recent", 1000), store(t, c, "broken", 1000)
			meta := metaSize(t, c, broken)
			setLastUsed(t, c, old, time.Now().Add(-2*time.Hour))
			setLastUsed(t, c, recent, time.Now().Add(-time.Hour))
			d.harm(t, c.entryDir(broken))
			l, err := openLook(t, dir).List()
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(l.Entries); !slices.Equal(got, []Key{recent, old, broken}) {
				t.Fatalf("List = %v; want the good entries, most recently used first, then the broken one", got)
			}
			b := l.Entries[2]
			if !strings.Contains(b.Broken, d.reason) || b.DiskSize != d.size(1000, meta) {
				t.Errorf("the broken entry: %q, %d bytes; want %q, %d bytes", b.Broken, b.DiskSize, d.reason, d.size(1000, meta))
			}
			// Room for two of the three: the broken one goes, not the
			// least recently used good one.
			pruned, err := c.Prune(PruneRule{MaxSize: 2*(1000+meta) + 500})
			if err != nil || !slices.Equal(keysOf(pruned.Entries), []Key{broken}) || pruned.Entries[0].Broken == "" {
				t.Fatalf("Prune = %+v, %v; want the broken entry only", pruned.Entries, err)
			}
			for _, k := range []Key{old, recent} {
				if _, hit, err := c.Fetch(k, filepath.Join(t.TempDir(), "e")); !hit || err != nil {
					t.Errorf("a good entry is gone: %v, %v", hit, err)
				}
			}
		})
	}
}

// writeOver replaces a file's content.
func writeOver(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// linkOut moves a file out of the cache and leaves a link to it.
func linkOut(t *testing.T, p string) {
	t.Helper()
	outside := filepath.Join(t.TempDir(), filepath.Base(p))
	if err := os.Rename(p, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
}
