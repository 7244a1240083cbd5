package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
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
				if bad, err := reader.Verify(); len(bad) != 0 || err != nil {
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
