package cache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A build with run:'s files, as a test declares them: two engines and a
// config.json, each written (with content made from its name) in a folder
// of the test's.
type declared struct {
	decls []Decl
	sizes []int
}

func declareFiles(t *testing.T, word string, sizes ...int) declared {
	t.Helper()
	dir := t.TempDir()
	paths := []string{"engines/rank0.engine", "engines/rank1.engine", "engines/config.json"}
	roles := []string{RoleEngine, RoleEngine, RoleOutput}
	var d declared
	for i, p := range paths[:len(sizes)] {
		local := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(local, engineBytes(word+p, sizes[i]), 0o644); err != nil {
			t.Fatal(err)
		}
		d.decls = append(d.decls, Decl{Role: roles[i], Path: p, Local: local})
	}
	d.sizes = sizes
	return d
}

// at is the same declaration, its files put under dir (where a hit goes).
func (d declared) at(dir string) []Decl {
	out := slices.Clone(d.decls)
	for i := range out {
		out[i].Local = filepath.Join(dir, filepath.FromSlash(out[i].Path))
	}
	return out
}

// check asserts that want's files hold what d's did, byte for byte.
func (d declared) check(t *testing.T, word string, want []Decl) {
	t.Helper()
	for i, w := range want {
		got, err := os.ReadFile(w.Local)
		if err != nil || !bytes.Equal(got, engineBytes(word+w.Path, d.sizes[i])) {
			t.Errorf("%s: %d bytes, %v; want what the build wrote (%d bytes)", w.Local, len(got), err, d.sizes[i])
		}
	}
}

// checkUntouched asserts that want's paths hold what they held before:
// old (nil: nothing), and no partial file.
func checkUntouched(t *testing.T, want []Decl, old map[string][]byte) {
	t.Helper()
	for _, w := range want {
		got, err := os.ReadFile(w.Local)
		switch o, had := old[w.Local]; {
		case !had && !errors.Is(err, os.ErrNotExist):
			t.Errorf("%s is there (%d bytes, %v) after a hit that delivered nothing", w.Local, len(got), err)
		case had && !bytes.Equal(got, o):
			t.Errorf("%s changed after a hit that delivered nothing", w.Local)
		}
		if partials, _ := filepath.Glob(w.Local + ".partial-*"); len(partials) > 0 {
			t.Errorf("partial files left: %v", partials)
		}
	}
}

func TestStoreFilesThenFetchFiles(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	k := testKey("llm")
	d := declareFiles(t, "llm", 5000, 4000, 120)
	if _, err := c.StoreFiles(k, d.decls, Entry{Build: "llm", Backend: "tensorrt-rtx"}); err != nil {
		t.Fatal(err)
	}
	names, _ := os.ReadDir(c.entryDir(k))
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	if want := []string{"engine", "engine-2", "entry.json", "output-1"}; !slices.Equal(got, want) {
		t.Errorf("the entry's folder holds %v, want %v", got, want)
	}
	want := d.at(t.TempDir())
	e, hit, err := c.FetchFiles(k, want)
	if err != nil || !hit {
		t.Fatalf("FetchFiles = %v, %v", hit, err)
	}
	d.check(t, "llm", want)
	if len(e.Files) != 3 || e.Files[1].Name != "engine-2" || e.Files[2].Role != RoleOutput || e.Files[2].Path != "engines/config.json" ||
		e.Bytes() != 9120 || e.Engine().Size != 5000 {
		t.Errorf("entry files %+v", e.Files)
	}
	// cache ls counts every file.
	l, err := c.List()
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Bytes() != 9120 || l.Entries[0].DiskSize <= 9120 {
		t.Fatalf("List = %+v, %v", l.Entries, err)
	}
	if n, bad, err := c.Verify(); n != 1 || len(bad) != 0 || err != nil {
		t.Errorf("Verify = %d, %v, %v", n, bad, err)
	}
}

// An entry that lost one of its files (or whose file changed) is a miss:
// nothing is delivered (old files stay), and the entry is removed.
func TestFetchFilesOfAnEntryMissingAFileIsAMiss(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, dir string){
		"an engine removed": func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "engine-2")); err != nil {
				t.Fatal(err)
			}
		},
		"an output cut short": func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "output-1"), 10); err != nil {
				t.Fatal(err)
			}
		},
		"an engine's bytes changed": func(t *testing.T, dir string) {
			editInPlace(t, filepath.Join(dir, "engine-2"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := openCache(t, t.TempDir(), 0)
			k := testKey("llm")
			d := declareFiles(t, "llm", 5000, 4000, 120)
			if _, err := c.StoreFiles(k, d.decls, Entry{Build: "llm"}); err != nil {
				t.Fatal(err)
			}
			damage(t, c.entryDir(k))
			want := d.at(t.TempDir())
			old := map[string][]byte{want[0].Local: []byte("an engine of an earlier run")}
			if err := os.MkdirAll(filepath.Dir(want[0].Local), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(want[0].Local, old[want[0].Local], 0o644); err != nil {
				t.Fatal(err)
			}
			_, hit, err := c.FetchFiles(k, want)
			var corrupt *CorruptError
			if hit || !errors.As(err, &corrupt) || !corrupt.Removed {
				t.Fatalf("FetchFiles = %v, %v; want a corrupt entry, removed", hit, err)
			}
			t.Log(err)
			checkUntouched(t, want, old)
			if _, err := os.Stat(c.entryDir(k)); !errors.Is(err, os.ErrNotExist) {
				t.Error("the damaged entry is still there")
			}
		})
	}
}

// An entry of the key whose files are not the ones the build declares
// was not made for it: corrupt, never delivered where it says.
func TestFetchFilesRefusesOtherFiles(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	k := testKey("llm")
	d := declareFiles(t, "llm", 500, 400, 12)
	if _, err := c.StoreFiles(k, d.decls, Entry{}); err != nil {
		t.Fatal(err)
	}
	want := d.at(t.TempDir())
	want[2].Path = "engines/other.json"
	_, hit, err := c.FetchFiles(k, want)
	if hit || err == nil || !strings.Contains(err.Error(), `the build declares [engine "engines/rank0.engine", engine "engines/rank1.engine", output "engines/other.json"]`) {
		t.Fatalf("FetchFiles = %v, %v; want the files named as not the build's", hit, err)
	}
	checkUntouched(t, want, nil)
}

// A path that cannot take its file fails the hit before any file is
// renamed: every path keeps what it had, and the entry stays.
func TestFetchFilesDeliversAllOrNone(t *testing.T) {
	c := openCache(t, t.TempDir(), 0)
	k := testKey("llm")
	d := declareFiles(t, "llm", 500, 400, 12)
	if _, err := c.StoreFiles(k, d.decls, Entry{}); err != nil {
		t.Fatal(err)
	}
	want := d.at(t.TempDir())
	if err := os.MkdirAll(want[2].Local, 0o755); err != nil { // a folder where config.json goes
		t.Fatal(err)
	}
	old := map[string][]byte{want[0].Local: []byte("old rank0")}
	if err := os.WriteFile(want[0].Local, old[want[0].Local], 0o644); err != nil {
		t.Fatal(err)
	}
	_, hit, err := c.FetchFiles(k, want)
	if hit || err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Fatalf("FetchFiles = %v, %v; want the folder refused", hit, err)
	}
	checkUntouched(t, want[:2], old)
	if _, hit, err := c.FetchFiles(k, d.at(t.TempDir())); !hit || err != nil {
		t.Errorf("the entry after a delivery that failed: FetchFiles = %v, %v; want it whole", hit, err)
	}
}

// The shared tier carries entries of several files: a push of all of
// them, a pull that delivers and backfills all of them, and a store entry
// that lost one of its files is refused (a miss) with nothing left at any
// path or in the folder.
func TestPushAndPullSeveralFiles(t *testing.T) {
	eachStore(t, func(t *testing.T, st *sharedStore) {
		s := st.open(t, "")
		k := testKey(st.Kind + " llm")
		d := declareFiles(t, "llm", 3<<20+5, 2<<20, 300)
		seeder := openCache(t, t.TempDir(), 0)
		if _, err := seeder.StoreFiles(k, d.decls, Entry{Build: "llm"}); err != nil {
			t.Fatal(err)
		}
		if p, err := seeder.Push(context.Background(), s, k, false, nil); err != nil || !p.Pushed || p.Bytes != 5<<20+305 {
			t.Fatalf("Push = %+v, %v", p, err)
		}
		c := openCache(t, t.TempDir(), 0)
		want := d.at(t.TempDir())
		p, hit, err := c.PullFiles(context.Background(), s, k, want, nil)
		if err != nil || !hit || !p.Backfilled || p.Bytes != 5<<20+305 {
			t.Fatalf("PullFiles = %+v, %v, %v", p, hit, err)
		}
		d.check(t, "llm", want)
		again := d.at(t.TempDir())
		if _, hit, err := c.FetchFiles(k, again); !hit || err != nil {
			t.Fatalf("the backfilled entry: FetchFiles = %v, %v", hit, err)
		}
		d.check(t, "llm", again)

		// The store loses the second engine's bytes.
		sum := seederFile(t, seeder, k, 1).SHA256
		if err := os.Remove(st.BlobFile(t, sum)); err != nil {
			t.Fatal(err)
		}
		fresh := openCache(t, t.TempDir(), 0)
		lost := d.at(t.TempDir())
		_, hit, err = fresh.PullFiles(context.Background(), s, k, lost, nil)
		var refused *RefusedError
		if hit || !errors.As(err, &refused) {
			t.Fatalf("PullFiles of an entry that lost a file = %v, %v; want it refused", hit, err)
		}
		t.Log(err)
		for _, w := range lost {
			assertNothingPulled(t, fresh, k, w.Local, nil)
		}
	})
}

// seederFile is file i of k's entry in c.
func seederFile(t *testing.T, c *Cache, k Key, i int) File {
	t.Helper()
	l, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if e.Key == k {
			return e.Files[i]
		}
	}
	t.Fatalf("no entry %s", k)
	return File{}
}
