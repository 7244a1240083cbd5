package cache

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// victimFolder is a folder outside the cache with an old file and an old
// folder in it: what a link planted in the cache points to. check fails
// the test when anything in it was removed or changed.
func victimFolder(t *testing.T) (dir string, check func()) {
	t.Helper()
	dir = t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{filepath.Join(dir, "old.txt"), filepath.Join(dir, "sub", "deep.txt")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{p, filepath.Dir(p)} {
			if err := os.Chtimes(q, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir, func() {
		t.Helper()
		for _, p := range []string{filepath.Join(dir, "old.txt"), filepath.Join(dir, "sub", "deep.txt")} {
			if got, err := os.ReadFile(p); err != nil || string(got) != "keep me" {
				t.Errorf("%s behind a link in the cache: %q, %v", p, got, err)
			}
		}
	}
}

func isLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// The reproduction: v1/tmp is a link to a folder of old files.
// Opening the cache to look (ls) leaves the link and says so; opening it
// to prune or verify, or for a build, removes the link itself (never what
// it names) and stages in a folder of its own. Before the fix, the
// clean-up of abandoned staging removed everything in the link's target.
func TestLinkAtStagingIsNeverFollowed(t *testing.T) {
	for _, o := range []Options{{Look: true}, {Existing: true}, {}} {
		name := map[bool]string{true: "look"}[o.Look] + map[bool]string{true: "existing"}[o.Existing]
		t.Run(cmpOr(name, "build"), func(t *testing.T) {
			victim, check := victimFolder(t)
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, versionName), 0o755); err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(dir, versionName, "tmp")
			if err := os.Symlink(victim, tmp); err != nil {
				t.Fatal(err)
			}
			o.Dir = dir
			c, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.List(); err != nil {
				t.Fatal(err)
			}
			check()
			notices := strings.Join(c.Notices(), "\n")
			// One sentence each (before: "removed X is a symbolic link
			// (to …), not the cache's own; …; the cache keeps a folder").
			want := "removed the symbolic link " + tmp + " (to " + victim + "): the cache keeps a folder of its own there and never follows a link inside it"
			if o.Look {
				want = tmp + " is a symbolic link (to " + victim + ")"
			}
			if !strings.Contains(notices, want) {
				t.Errorf("notices %q do not say %q", notices, want)
			}
			if o.Look != isLink(tmp) {
				t.Errorf("look-only %v, yet the link is there: %v", o.Look, isLink(tmp))
			}
			if o.Look {
				return
			}
			if c.ReadOnly() {
				t.Fatal("the cache opened read-only")
			}
			k := store(t, c, "mlp", 100) // stages in a folder of its own
			if _, hit, err := c.Fetch(k, filepath.Join(t.TempDir(), "e")); !hit || err != nil {
				t.Errorf("Fetch after the store: %v, %v", hit, err)
			}
			check()
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// An entry whose engine is a link (to a file with the very bytes the entry
// names, so no hash could tell) is corrupt: Fetch installs nothing and
// removes the entry, Verify says so, and the file the link named stays.
// Before the fix, Fetch hard-linked the link itself to the engine path.
func TestEngineLinkIsCorrupt(t *testing.T) {
	for _, file := range []string{engineName, metaName} {
		t.Run(file, func(t *testing.T) {
			c := openCache(t, t.TempDir(), 0)
			k := store(t, c, "mlp", 1000)
			outside := filepath.Join(t.TempDir(), "outside")
			p := filepath.Join(c.entryDir(k), file)
			if err := os.Rename(p, outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(outside)
			dest := filepath.Join(t.TempDir(), "mlp.engine")
			_, hit, err := c.Fetch(k, dest)
			var corrupt *CorruptError
			if hit || !errors.As(err, &corrupt) || !corrupt.Removed || !strings.Contains(corrupt.Reason, "symbolic link (to "+outside+")") {
				t.Fatalf("Fetch = hit %v, %v; want a removed *CorruptError naming the link", hit, err)
			}
			if _, err := os.Lstat(dest); !os.IsNotExist(err) {
				t.Errorf("something was installed at %s: %v", dest, err)
			}
			if got, _ := os.ReadFile(outside); !bytes.Equal(got, want) {
				t.Error("the link's target changed")
			}
			// Verify calls the same damage corrupt.
			k = store(t, c, "mlp", 1000)
			p = filepath.Join(c.entryDir(k), file)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
			_, bad, err := c.Verify()
			if err != nil || len(bad) != 1 || bad[0].Key != k || !bad[0].Removed || !strings.Contains(bad[0].Reason, "symbolic link") {
				t.Fatalf("Verify = %+v, %v; want the entry corrupt for its link", bad, err)
			}
			if got, _ := os.ReadFile(outside); !bytes.Equal(got, want) {
				t.Error("Verify changed the link's target")
			}
		})
	}
}

// linkedEntry makes k's entry folder a link to a copy of a real entry
// outside the cache, and returns that copy.
func linkedEntry(t *testing.T, c *Cache, k Key) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), "entry")
	if err := os.Rename(c.entryDir(k), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, c.entryDir(k)); err != nil {
		t.Fatal(err)
	}
	return outside
}

// An entry folder that is a link is seen by ls (a stray), verify (corrupt,
// the link removed) and prune (the link removed), and never followed: the
// folder it names keeps its files. Before the fix the three skipped it
// without a word.
func TestEntryFolderLinkIsSeen(t *testing.T) {
	for _, cmd := range []string{"ls", "verify", "prune", "fetch"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			c := openCache(t, dir, 0)
			k, good := store(t, c, "mlp", 1000), store(t, c, "good", 1000)
			outside := linkedEntry(t, c, k)
			link := c.entryDir(k)
			switch cmd {
			case "ls":
				l, err := openLook(t, dir).List()
				if err != nil || len(l.Strays) != 1 || l.Strays[0].Path != link || l.Strays[0].Target != outside ||
					len(l.Entries) != 1 || l.Entries[0].Key != good {
					t.Fatalf("List = %+v, %v; want the good entry and the link as a stray", l, err)
				}
				if !isLink(link) {
					t.Error("ls removed the link")
				}
			case "verify":
				_, bad, err := c.Verify()
				if err != nil || len(bad) != 1 || bad[0].Path != link || !bad[0].Removed {
					t.Fatalf("Verify = %+v, %v; want the link, removed", bad, err)
				}
			case "prune":
				pruned, err := c.Prune(PruneRule{UnusedFor: 24 * time.Hour})
				if err != nil || len(pruned.Strays) != 1 || pruned.Strays[0].Path != link || len(pruned.Entries) != 0 {
					t.Fatalf("Prune = %+v, %v; want the link removed and no entry", pruned, err)
				}
			case "fetch":
				_, hit, err := c.Fetch(k, filepath.Join(t.TempDir(), "e"))
				var corrupt *CorruptError
				if hit || !errors.As(err, &corrupt) || !corrupt.Removed {
					t.Fatalf("Fetch = %v, %v; want the link corrupt and removed", hit, err)
				}
			}
			if cmd != "ls" {
				if _, err := os.Lstat(link); !os.IsNotExist(err) {
					t.Errorf("the link is still there: %v", err)
				}
			}
			for _, f := range []string{engineName, metaName} {
				if _, err := os.Stat(filepath.Join(outside, f)); err != nil {
					t.Errorf("the folder the link named lost %s: %v", f, err)
				}
			}
		})
	}
}

func openLook(t *testing.T, dir string) *Cache {
	t.Helper()
	c, err := Open(Options{Dir: dir, Look: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A shard folder (v1/ab) that is a link: its entries are not the cache's.
// ls reports it, prune removes the link, and the target keeps its files.
func TestShardLinkIsAStray(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir, 0)
	k := store(t, c, "mlp", 1000)
	shard := filepath.Dir(c.entryDir(k))
	outside := filepath.Join(t.TempDir(), "shard")
	if err := os.Rename(shard, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, shard); err != nil {
		t.Fatal(err)
	}
	if l, err := openLook(t, dir).List(); err != nil || len(l.Strays) != 1 || l.Strays[0].Path != shard || len(l.Entries) != 0 {
		t.Fatalf("List = %+v, %v", l, err)
	}
	if _, hit, err := c.Fetch(k, filepath.Join(t.TempDir(), "e")); hit || err == nil {
		t.Errorf("Fetch through a linked shard: hit %v, %v", hit, err)
	}
	if _, err := os.Lstat(shard); !os.IsNotExist(err) {
		t.Errorf("the shard link is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, string(k), engineName)); err != nil {
		t.Errorf("the linked shard's target lost its entry: %v", err)
	}
}

// A cache whose tmp/ was dropped (artifact uploads and s3 sync drop empty
// folders): verify and prune create it and remove what they should, ls
// creates nothing. Before the fix, verify called every bad entry "not
// removed (a read-only cache…)" and prune removed nothing.
func TestVerifyAndPruneWithoutStaging(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir, 0)
	bad := store(t, c, "bad", 1000)
	store(t, c, "good", 1000)
	if err := os.Truncate(filepath.Join(c.entryDir(bad), engineName), 10); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, versionName, tmpName)
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	openLook(t, dir)
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("ls created %s: %v", tmp, err)
	}
	existing, err := Open(Options{Dir: dir, Existing: true})
	if err != nil || existing.ReadOnly() {
		t.Fatalf("Open = read-only %v, %v", existing.ReadOnly(), err)
	}
	_, found, err := existing.Verify()
	if err != nil || len(found) != 1 || !found[0].Removed {
		t.Fatalf("Verify = %+v, %v; want the bad entry removed", found, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	existing, err = Open(Options{Dir: dir, Existing: true})
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := existing.Prune(PruneRule{MaxSize: 1})
	if err != nil || len(pruned.Entries) != 1 {
		t.Fatalf("Prune --max-size 1 = %+v, %v; want the one entry removed", pruned, err)
	}
}

// A staging folder is a leftover when no process holds its lock: one whose
// process died goes at the next Open once it is a minute old, however
// young that is against the hour the age rule waits; one a live process
// holds stays, however old. ls counts leftovers and removes nothing.
func TestStagingLeftoversGoByTheirLock(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir, 0)
	root, err := c.openRoot(false)
	if err != nil {
		t.Fatal(err)
	}
	defer root.close()
	held, err := c.newStage(root, "store-") // as a store under way holds it
	if err != nil {
		t.Fatal(err)
	}
	defer held.remove()
	tmp := filepath.Join(c.root, tmpName)
	dead := filepath.Join(tmp, "store-dead")
	if err := os.MkdirAll(filepath.Join(dead, stagedName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, stagedName, engineName), make([]byte, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	twoMinutes, twoHours := time.Now().Add(-2*time.Minute), time.Now().Add(-2*time.Hour)
	if err := os.Chtimes(dead, twoMinutes, twoMinutes); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(tmp, held.name), twoHours, twoHours); err != nil {
		t.Fatal(err)
	}
	if l, err := openLook(t, dir).List(); err != nil || l.Leftovers != 1 {
		t.Errorf("ls: %+v, %v; want 1 leftover", l, err)
	}
	if _, err := os.Stat(dead); err != nil {
		t.Fatal("ls removed a leftover")
	}
	openCache(t, dir, 0)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Error("a staging folder nobody holds was kept")
	}
	if _, err := os.Stat(filepath.Join(tmp, held.name)); err != nil {
		t.Error("a staging folder a live process holds was removed")
	}
}

// A store takes the lock of the staging folder it has just made even when
// another process's leftover check (unheld, which an Open and every ls
// run on each staging folder) holds it that instant: the store waits for
// the check to let go. Before, it tried the lock without waiting, and a
// --rebuild with an ls beside it now and then failed with "resource
// temporarily unavailable". The check here holds the lock longer than
// unheld's instant, so that the store comes to it while it is held.
func TestStoreWaitsForALeftoverCheckOfItsStagingFolder(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir, 0)
	k := testKey("mlp")
	if _, err := c.Store(k, engineFor(t, t.TempDir(), "old", 100), Entry{Build: "old"}); err != nil {
		t.Fatal(err)
	}
	var released atomic.Bool
	held := false
	c.hooks.staged = func(name string) {
		if held {
			return
		}
		f, err := os.Open(filepath.Join(c.root, tmpName, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			t.Fatalf("the check could not take the new staging folder's lock: %v", err)
		}
		held = true
		time.AfterFunc(100*time.Millisecond, func() {
			released.Store(true)
			f.Close()
		})
	}
	got, err := c.Replace(k, engineFor(t, t.TempDir(), "new", 100), Entry{Build: "new"})
	if err != nil || got.Outcome != Replaced {
		t.Fatalf("Replace while a leftover check holds its staging folder = %+v, %v; want Replaced", got, err)
	}
	if !held || !released.Load() {
		t.Errorf("the staging folder's lock was taken: %v; released before Replace ended: %v", held, released.Load())
	}
	if word := fetchWord(t, c, k, 100); word != "new" {
		t.Errorf("after the replacement: %q, want the new entry", word)
	}
}

// Replace puts the new entry where the old one was; Store keeps the old.
// The outcomes say which.
func TestReplaceReplaces(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	k := testKey("mlp")
	got, err := c.Store(k, engineFor(t, t.TempDir(), "old", 100), Entry{Build: "old"})
	if err != nil || got.Outcome != Added {
		t.Fatalf("Store = %+v, %v; want Added", got, err)
	}
	got, err = c.Store(k, engineFor(t, t.TempDir(), "second", 100), Entry{Build: "second"})
	if err != nil || got.Outcome != Kept {
		t.Fatalf("Store of a key there = %+v, %v; want Kept", got, err)
	}
	got, err = c.Replace(k, engineFor(t, t.TempDir(), "new", 100), Entry{Build: "new"})
	if err != nil || got.Outcome != Replaced {
		t.Fatalf("Replace = %+v, %v; want Replaced", got, err)
	}
	dest := filepath.Join(t.TempDir(), "e")
	e, hit, err := c.Fetch(k, dest)
	if data, _ := os.ReadFile(dest); !hit || err != nil || e.Build != "new" || !bytes.Equal(data, engineBytes("new", 100)) {
		t.Fatalf("after Replace: %+v %v %v %q", e, hit, err, data)
	}
	if staged, _ := os.ReadDir(filepath.Join(c.root, tmpName)); len(staged) != 0 {
		t.Errorf("the old entry was left in staging: %v", staged)
	}
	got, err = c.Replace(testKey("fresh"), engineFor(t, t.TempDir(), "fresh", 100), Entry{})
	if err != nil || got.Outcome != Added {
		t.Errorf("Replace of a new key = %+v, %v; want Added", got, err)
	}
}

// While one goroutine replaces an entry again and again, every Fetch of
// it is a hit whose engine is the one its metadata names: the old entry
// whole or the new one whole, never a mix and never nothing; and Verify
// and List, run beside them from other Caches on the folder (as another
// process would), never call it corrupt or broken. Before, a reader could
// find the old folder half removed, call it corrupt, and remove the new
// entry (the review's stress test, from which this one is made).
func TestReplaceUnderConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	c := openCache(t, dir, 0)
	k := testKey("mlp")
	words := []string{"alpha", "bravo"}
	engines := map[string]string{}
	for _, w := range words {
		engines[w] = engineFor(t, t.TempDir(), w, 64<<10)
	}
	if _, err := c.Store(k, engines["alpha"], Entry{Build: "alpha"}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	problems := make(chan string, 100)
	loop := func(what string, once func() string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if p := once(); p != "" {
					problems <- what + ": " + p
					return
				}
			}
		}()
	}
	replacer := openCache(t, dir, 0)
	loop("replace", func() string {
		w := words[rand.IntN(2)]
		if got, err := replacer.Replace(k, engines[w], Entry{Build: w}); err != nil || got.Outcome != Replaced {
			return fmt.Sprintf("%+v, %v", got, err)
		}
		return ""
	})
	verifier := openCache(t, dir, 0)
	loop("verify", func() string {
		if _, bad, err := verifier.Verify(); len(bad) > 0 || err != nil {
			return fmt.Sprintf("%v, %v", bad, err)
		}
		return ""
	})
	lister := openLook(t, dir)
	loop("ls", func() string {
		l, err := lister.List()
		if err != nil || len(l.Entries) != 1 || l.Entries[0].Broken != "" {
			return fmt.Sprintf("%+v, %v", l.Entries, err)
		}
		return ""
	})
	dest := filepath.Join(t.TempDir(), "e")
	seen := map[string]int{}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline) && len(problems) == 0; {
		e, hit, err := c.Fetch(k, dest)
		if !hit || err != nil {
			t.Errorf("a Fetch during replacement: hit %v, %v", hit, err)
			break
		}
		data, _ := os.ReadFile(dest)
		if !slices.Contains(words, e.Build) || !bytes.Equal(data, engineBytes(e.Build, 64<<10)) {
			t.Errorf("entry %q delivered another engine", e.Build)
			break
		}
		seen[e.Build]++
	}
	close(stop)
	wg.Wait()
	close(problems)
	for p := range problems {
		t.Error(p)
	}
	t.Logf("fetches: %v", seen)
}
