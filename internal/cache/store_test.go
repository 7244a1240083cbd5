package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runfiles"
)

// testKey is a valid key made from a word.
func testKey(word string) Key {
	sum := sha256.Sum256([]byte(word))
	return Key(hex.EncodeToString(sum[:]))
}

// engineFor writes an engine of size bytes whose content depends on word.
func engineFor(t testing.TB, dir, word string, size int) string {
	t.Helper()
	p := filepath.Join(dir, word+".engine")
	if err := os.WriteFile(p, engineBytes(word, size), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func engineBytes(word string, size int) []byte {
	return bytes.Repeat([]byte(word+"|"), size/(len(word)+1)+1)[:size]
}

func openCache(t testing.TB, dir string, maxSize int64) *Cache {
	t.Helper()
	c, err := Open(Options{Dir: dir, MaxSize: maxSize})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func store(t testing.TB, c *Cache, word string, size int) Key {
	t.Helper()
	k := testKey(word)
	eng := engineFor(t, t.TempDir(), word, size)
	if _, err := c.Store(k, eng, Entry{Build: word, Backend: "sim"}); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestStoreThenFetch(t *testing.T) {
	for _, how := range []string{"clone where the file system can", "copy"} {
		t.Run(how, func(t *testing.T) {
			if how == "copy" {
				cloneFile = func(*os.File, *os.File) error { return syscall.EOPNOTSUPP }
				t.Cleanup(func() { cloneFile = cloneOrNot })
			}
			c := openCache(t, t.TempDir(), 0)
			k := testKey("mlp")
			eng := engineFor(t, t.TempDir(), "mlp", 5000)
			built := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
			orig := &report.Build{Name: "mlp", Status: report.StatusOK, DurationMs: 843000}
			if _, err := c.Store(k, eng, Entry{Build: "mlp", Backend: "tensorrt-rtx", BuiltAt: built, Duration: 843 * time.Second, Original: orig}); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), "out", "mlp.engine")
			e, hit, err := c.Fetch(k, dest)
			if err != nil || !hit {
				t.Fatalf("Fetch = %v, %v", hit, err)
			}
			if got, _ := os.ReadFile(dest); !bytes.Equal(got, engineBytes("mlp", 5000)) {
				t.Error("the fetched engine differs from the stored one")
			}
			if e.Key != k || e.Build != "mlp" || !e.BuiltAt.Equal(built) || e.Duration != 843*time.Second || e.Bytes() != 5000 ||
				e.Original == nil || e.Original.DurationMs != 843000 || e.LastUsed.IsZero() {
				t.Errorf("entry %+v", e)
			}
			if leftovers, _ := filepath.Glob(dest + ".partial-*"); len(leftovers) > 0 {
				t.Errorf("partial files left: %v", leftovers)
			}
			// Again to the same path.
			if _, hit, err := c.Fetch(k, dest); !hit || err != nil {
				t.Fatalf("second Fetch = %v, %v", hit, err)
			}
			if leftovers, _ := filepath.Glob(dest + ".partial-*"); len(leftovers) > 0 {
				t.Errorf("the second fetch left partial files: %v", leftovers)
			}
			if got, _ := os.ReadFile(dest); !bytes.Equal(got, engineBytes("mlp", 5000)) {
				t.Error("the second fetch changed the engine")
			}
			if _, hit, err := c.Fetch(testKey("other"), filepath.Join(t.TempDir(), "x")); hit || err != nil {
				t.Errorf("a missing key: hit %v, error %v", hit, err)
			}
			// A copy, not a hard link: editing either file in place leaves
			// the other as it was. Before, the engine was the cache's file.
			cached := filepath.Join(c.entryDir(k), engineName)
			a, _ := os.Stat(dest)
			b, _ := os.Stat(cached)
			if os.SameFile(a, b) {
				t.Fatal("the delivered engine is the cache's own file")
			}
			editInPlace(t, dest)
			if got, _ := os.ReadFile(cached); !bytes.Equal(got, engineBytes("mlp", 5000)) {
				t.Error("editing the delivered engine changed the cache's")
			}
			editInPlace(t, cached)
			if got, _ := os.ReadFile(dest); got[0] != engineBytes("mlp", 5000)[0]^0xff {
				t.Error("editing the cache's engine changed the one delivered")
			}
		})
	}
}

// editInPlace flips the first byte of path without replacing the file.
func editInPlace(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
}

// TestFetchNeverWritesThroughALink: a link at dest is refused, and what it
// points to is untouched.
func TestFetchNeverWritesThroughALink(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	k := store(t, c, "mlp", 100)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "mlp.engine")
	if err := os.Symlink(victim, dest); err != nil {
		t.Fatal(err)
	}
	if _, hit, err := c.Fetch(k, dest); hit || err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Fetch through a link: hit %v, error %v", hit, err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep me" {
		t.Errorf("the link's target was written: %q", got)
	}
	if _, err := os.Stat(c.entryDir(k)); err != nil {
		t.Errorf("the entry was removed: %v", err)
	}
}

// TestStoreKeepsTheFirstEntry: a second Store of a key (another shard,
// another run) leaves the first entry as it is.
func TestStoreKeepsTheFirstEntry(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	k := testKey("mlp")
	if _, err := c.Store(k, engineFor(t, t.TempDir(), "first", 100), Entry{Build: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Store(k, engineFor(t, t.TempDir(), "second", 100), Entry{Build: "second"}); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "e")
	e, hit, err := c.Fetch(k, dest)
	if !hit || err != nil || e.Build != "first" {
		t.Fatalf("Fetch = %+v, %v, %v", e, hit, err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, engineBytes("first", 100)) {
		t.Error("the engine is not the first one stored")
	}
	if staged, _ := os.ReadDir(filepath.Join(c.root, tmpName)); len(staged) != 0 {
		t.Errorf("staging left behind: %v", staged)
	}
}

// TestCorruptEntries: each kind of damage is found by Fetch (removed and
// reported, nothing put at dest) and by Verify.
func TestCorruptEntries(t *testing.T) {
	damage := map[string]func(t *testing.T, dir string){
		"flipped byte": func(t *testing.T, dir string) {
			p := filepath.Join(dir, engineName)
			data, _ := os.ReadFile(p)
			data[len(data)/2] ^= 0x40
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, engineName), 10); err != nil {
				t.Fatal(err)
			}
		},
		"bad metadata": func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, metaName), []byte(`{"format":1,"key":`), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"no metadata": func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, metaName)); err != nil {
				t.Fatal(err)
			}
		},
		"no engine": func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, engineName)); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, harm := range damage {
		t.Run(name, func(t *testing.T) {
			c := openCache(t, t.TempDir(), 0)
			k := store(t, c, "mlp", 1000)
			good := store(t, c, "good", 1000)
			harm(t, c.entryDir(k))
			dest := filepath.Join(t.TempDir(), "mlp.engine")
			_, hit, err := c.Fetch(k, dest)
			var corrupt *CorruptError
			if hit || !errors.As(err, &corrupt) || !corrupt.Removed || corrupt.Key != k {
				t.Fatalf("Fetch = hit %v, error %v; want a removed *CorruptError", hit, err)
			}
			if _, err := os.Stat(c.entryDir(k)); !os.IsNotExist(err) {
				t.Errorf("the corrupt entry is still there: %v", err)
			}
			if _, err := os.Stat(dest); !os.IsNotExist(err) {
				t.Errorf("something was put at dest: %v", err)
			}
			if leftovers, _ := filepath.Glob(dest + ".partial-*"); len(leftovers) > 0 {
				t.Errorf("partial files left: %v", leftovers)
			}
			// Verify finds the same damage.
			k = store(t, c, "mlp", 1000)
			harm(t, c.entryDir(k))
			_, bad, err := c.Verify()
			if err != nil || len(bad) != 1 || bad[0].Key != k || !bad[0].Removed {
				t.Fatalf("Verify = %+v, %v; want the one bad entry, removed", bad, err)
			}
			if _, hit, err := c.Fetch(good, filepath.Join(t.TempDir(), "g")); !hit || err != nil {
				t.Errorf("the good entry: hit %v, error %v", hit, err)
			}
		})
	}
}

// setLastUsed backdates an entry's last use.
func setLastUsed(t *testing.T, c *Cache, k Key, at time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(c.entryDir(k), metaName), at, at); err != nil {
		t.Fatal(err)
	}
}

func keysOf(entries []Entry) []Key {
	var out []Key
	for _, e := range entries {
		out = append(out, e.Key)
	}
	return out
}

// TestEvictionLeastRecentlyUsedFirst: over max-size, the entries used
// longest ago go first, and a fetch counts as a use.
func TestEvictionLeastRecentlyUsedFirst(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir, 0)
	now := time.Now()
	a, b, d := store(t, c, "a", 1000), store(t, c, "b", 1000), store(t, c, "d", 1000)
	setLastUsed(t, c, a, now.Add(-3*time.Hour))
	setLastUsed(t, c, b, now.Add(-2*time.Hour))
	setLastUsed(t, c, d, now.Add(-1*time.Hour))
	if _, hit, _ := c.Fetch(a, filepath.Join(t.TempDir(), "a")); !hit {
		t.Fatal("no hit for a")
	}
	// Room for two entries (engine and metadata each): storing a fourth
	// evicts the two least recently used, b and d.
	limited := openCache(t, dir, 2*1000+2*metaSize(t, c, a)+500)
	e := store(t, limited, "e", 1000)
	left, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(left.Entries); len(got) != 2 || got[0] != e || got[1] != a {
		t.Errorf("left %v, want [e a] (most recent first)", got)
	}
}

func metaSize(t *testing.T, c *Cache, k Key) int64 {
	fi, err := os.Stat(filepath.Join(c.entryDir(k), metaName))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestEvictionSkipsAnEntryInUse: an entry whose engine a reader holds
// (shared lock) is not removed; the next one is.
func TestEvictionSkipsAnEntryInUse(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	now := time.Now()
	old, newer := store(t, c, "old", 1000), store(t, c, "newer", 1000)
	setLastUsed(t, c, old, now.Add(-2*time.Hour))
	setLastUsed(t, c, newer, now.Add(-1*time.Hour))
	r, err := c.openEntry(old) // as Fetch holds it while it reads
	if err != nil {
		t.Fatal(err)
	}
	removed, err := c.Prune(PruneRule{MaxSize: 1000})
	r.close()
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(removed.Entries); len(got) != 1 || got[0] != newer {
		t.Errorf("removed %v, want only the entry not in use", got)
	}
	if removed, _ := c.Prune(PruneRule{MaxSize: 1000}); len(removed.Entries) != 1 || removed.Entries[0].Key != old {
		t.Errorf("after the reader let go: removed %v", keysOf(removed.Entries))
	}
}

func TestPruneUnusedFor(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	stale, fresh := store(t, c, "stale", 10), store(t, c, "fresh", 10)
	setLastUsed(t, c, stale, time.Now().Add(-48*time.Hour))
	pruned, err := c.Prune(PruneRule{UnusedFor: 24 * time.Hour})
	removed := pruned.Entries
	if err != nil || len(removed) != 1 || removed[0].Key != stale || removed[0].Build != "stale" {
		t.Errorf("removed %+v, %v", removed, err)
	}
	if _, hit, _ := c.Fetch(fresh, filepath.Join(t.TempDir(), "f")); !hit {
		t.Error("the fresh entry is gone")
	}
}

func TestStoreRefusesAnEngineOverMaxSize(t *testing.T) {
	c := openCache(t, t.TempDir(), 100)
	_, err := c.Store(testKey("big"), engineFor(t, t.TempDir(), "big", 1000), Entry{})
	if err == nil || !strings.Contains(err.Error(), "larger than the cache's max-size") {
		t.Errorf("Store of 1000 bytes into max-size 100: %v", err)
	}
}

// TestStoreRefusesAnEntryOverMaxSizeWithItsMetadata: an engine under
// max-size whose metadata (the original build's phase tree) takes it over
// is refused, not stored and evicted at once.
func TestStoreRefusesAnEntryOverMaxSizeWithItsMetadata(t *testing.T) {
	c := openCache(t, t.TempDir(), 1000)
	orig := &report.Build{Name: "mlp", Warnings: []string{strings.Repeat("w", 2000)}}
	_, err := c.Store(testKey("mlp"), engineFor(t, t.TempDir(), "mlp", 900), Entry{Original: orig})
	var tooLarge *tooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Size <= 1000 || tooLarge.MaxSize != 1000 {
		t.Fatalf("Store of 900 bytes with 2 kB of metadata into max-size 1000: %v", err)
	}
	if want := "with its metadata, larger than the cache's max-size 1.0 kB"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	if l, _ := c.List(); len(l.Entries) != 0 || c.EvictedStored() != 0 {
		t.Errorf("left %d entries, %d evicted", len(l.Entries), c.EvictedStored())
	}
}

// TestEvictionOfTheRunsOwnEntriesIsCounted: a Cache counts the entries it
// stored that its later stores evicted (max-size too small for one run),
// and not the entries other runs stored.
func TestEvictionOfTheRunsOwnEntriesIsCounted(t *testing.T) {
	dir := t.TempDir()
	earlier := openCache(t, dir, 0)
	old := store(t, earlier, "old", 1000)
	setLastUsed(t, earlier, old, time.Now().Add(-time.Hour))
	room := 2*1000 + 2*metaSize(t, earlier, old) + 100 // two entries
	c := openCache(t, dir, room)
	store(t, c, "a", 1000) // fits beside old
	if n := c.EvictedStored(); n != 0 {
		t.Fatalf("%d evicted before the cache was full", n)
	}
	store(t, c, "b", 1000) // evicts old, another run's
	if n := c.EvictedStored(); n != 0 {
		t.Errorf("another run's entry evicted: counted %d, want 0", n)
	}
	store(t, c, "d", 1000) // evicts a, this run's
	if n := c.EvictedStored(); n != 1 {
		t.Errorf("this run's entry evicted: counted %d, want 1", n)
	}
}

// TestStoreRefusesAnEngineChangedSinceTheBuild: the SHA-256 the build
// reported must be what is stored.
func TestStoreRefusesAnEngineChangedSinceTheBuild(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	eng := engineFor(t, t.TempDir(), "mlp", 100)
	_, err := c.StoreFiles(testKey("mlp"), EngineDecl(eng, strings.Repeat("0", 64)), Entry{})
	if err == nil || !strings.Contains(err.Error(), "changed since the build") {
		t.Errorf("Store with another SHA-256: %v", err)
	}
	if _, err := os.Stat(c.entryDir(testKey("mlp"))); !os.IsNotExist(err) {
		t.Error("an engine that changed was stored")
	}
	sum := sha256.Sum256(engineBytes("mlp", 100))
	if _, err := c.StoreFiles(testKey("mlp"), EngineDecl(eng, hex.EncodeToString(sum[:])), Entry{}); err != nil {
		t.Errorf("Store with the engine's own SHA-256: %v", err)
	}
}

func TestStoreErrorNamesAFullDisk(t *testing.T) {
	err := storeError(&os.PathError{Op: "write", Path: "/c/engine", Err: syscall.ENOSPC})
	if !strings.Contains(err.Error(), "disk is full") || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("storeError = %v", err)
	}
}

// TestOpenRemovesAbandonedStaging: a staging folder of a killed process
// goes after an hour; a recent one (a Store under way) stays.
func TestOpenRemovesAbandonedStaging(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir, 0)
	old, recent := filepath.Join(c.root, tmpName, "store-old"), filepath.Join(c.root, tmpName, "store-recent")
	for _, p := range []string{old, recent} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	openCache(t, dir, 0)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("an abandoned staging folder was kept")
	}
	if _, err := os.Stat(recent); err != nil {
		t.Error("a staging folder in use was removed")
	}
}

func TestKeyMustBeAKey(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	for _, k := range []Key{"", "../../etc", Key(strings.Repeat("A", 64)), testKey("x")[:63]} {
		if _, err := c.Store(k, "/dev/null", Entry{}); err == nil {
			t.Errorf("Store(%q) accepted", k)
		}
		if _, _, err := c.Fetch(k, filepath.Join(t.TempDir(), "e")); err == nil {
			t.Errorf("Fetch(%q) accepted", k)
		}
	}
}

// lockHeld reports whether someone holds a lock on path's file.
func lockHeld(t *testing.T, path string) bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	return errors.Is(err, unix.EWOULDBLOCK)
}

// TestFetchReleasesItsLock: after Fetch, eviction can take the entry.
func TestFetchReleasesItsLock(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	k := store(t, c, "mlp", 100)
	if _, hit, err := c.Fetch(k, filepath.Join(t.TempDir(), "e")); !hit || err != nil {
		t.Fatal(hit, err)
	}
	if lockHeld(t, filepath.Join(c.entryDir(k), engineName)) {
		t.Error("Fetch kept its lock on the engine")
	}
}

func ExampleCache_Fetch() {
	dir, _ := os.MkdirTemp("", "cache-example-")
	defer os.RemoveAll(dir)
	c, _ := Open(Options{Dir: filepath.Join(dir, "cache"), MaxSize: 20 << 30})
	engine := filepath.Join(dir, "mlp.engine")
	_ = os.WriteFile(engine, []byte("plan"), 0o644)
	k := testKey("mlp")
	_, _ = c.Store(k, engine, Entry{Build: "mlp", Backend: "tensorrt-rtx"})
	e, hit, err := c.Fetch(k, filepath.Join(dir, "out", "mlp.engine"))
	fmt.Println(hit, err, e.Build, e.Bytes())
	// Output: true <nil> mlp 4
}

// TestConcurrentStoresKeepWhatFits: stores side by side into a cache with
// room for one entry leave one entry, and count the others as evicted.
// Before prunes took turns (pruneLock), two prunes that listed the cache
// before either removed anything each removed the whole excess, and the
// cache could end empty; an entry evicted before its store had counted it
// was not counted at all.
func TestConcurrentStoresKeepWhatFits(t *testing.T) {
	for range 20 {
		c := openCache(t, t.TempDir(), 1900) // one engine of 1000 bytes and its metadata
		var wg sync.WaitGroup
		for _, w := range []string{"a", "b", "c"} {
			eng := engineFor(t, t.TempDir(), w, 1000)
			wg.Go(func() {
				if _, err := c.Store(testKey(w), eng, Entry{Build: w}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if l, _ := c.List(); len(l.Entries) != 1 || c.EvictedStored() != 2 {
			t.Fatalf("%d entries left, %d counted evicted; want 1 and 2", len(l.Entries), c.EvictedStored())
		}
	}
}

// Open tags a folder it may write as a cache (CACHEDIR.TAG): a build's
// inputs: never walk into it (runfiles.Glob), so a key never reads the
// entries stored in it. A tag there is kept; a file there that is not one
// (cut short) is made one; a link there is never followed or replaced;
// a folder opened to look at is not written.
func TestOpenTagsTheFolderAsACache(t *testing.T) {
	tagOf := func(dir string) string {
		b, _ := os.ReadFile(filepath.Join(dir, runfiles.CacheTagName))
		return string(b)
	}
	dir := t.TempDir()
	openCache(t, dir, 0)
	if !runfiles.IsCacheFolder(dir) || tagOf(dir) != string(runfiles.CacheTag) {
		t.Fatalf("after Open: tag %q; want %q", tagOf(dir), runfiles.CacheTag)
	}

	other := []byte("Signature: 8a477f597d28d172789f06886806bc55\n# another tool's words\n")
	os.WriteFile(filepath.Join(dir, runfiles.CacheTagName), other, 0o644)
	openCache(t, dir, 0)
	if tagOf(dir) != string(other) {
		t.Errorf("a tag there was rewritten: %q", tagOf(dir))
	}

	os.WriteFile(filepath.Join(dir, runfiles.CacheTagName), []byte("Signa"), 0o644)
	openCache(t, dir, 0)
	if !runfiles.IsCacheFolder(dir) {
		t.Errorf("a tag cut short was left: %q", tagOf(dir))
	}

	linked, target := t.TempDir(), filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(linked, runfiles.CacheTagName)); err != nil {
		t.Fatal(err)
	}
	openCache(t, linked, 0)
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("Open wrote through a link where the tag goes (%v)", err)
	}

	looked := t.TempDir()
	if _, err := Open(Options{Dir: looked, Look: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(looked, runfiles.CacheTagName)); !os.IsNotExist(err) {
		t.Errorf("a folder opened to look at was tagged (%v)", err)
	}
}
