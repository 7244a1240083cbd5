package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	orasremote "oras.land/oras-go/v2/registry/remote"

	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// A pull delivers the engine and keeps the entry in the folder (the
// backfill), which then serves the next build as a local hit; the store
// gets nothing new from a push of what it has, and a push with replace
// puts it again.
func TestPullBackfillsTheFolder(t *testing.T) {
	eachStore(t, func(t *testing.T, st *sharedStore) {
		s := st.open(t, "")
		const size = 3<<20 + 17
		k := seed(t, s, "mlp", size)
		c := openCache(t, t.TempDir(), 0)
		dest := filepath.Join(t.TempDir(), "out", "mlp.engine")
		var mu sync.Mutex
		var told [][2]int64
		p, hit, err := c.Pull(context.Background(), s, k, dest, func(done, total int64) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, [2]int64{done, total})
		})
		if err != nil || !hit {
			t.Fatalf("Pull = %v, %v", hit, err)
		}
		if got, _ := os.ReadFile(dest); !bytes.Equal(got, engineBytes("mlp", size)) {
			t.Fatalf("the pulled engine differs (%d bytes)", len(got))
		}
		if !p.Backfilled || p.Stored.Outcome != Added || p.NotKept != nil || p.Bytes != size || p.Entry.Build != "mlp" {
			t.Errorf("Pulled = %+v", p)
		}
		if last := told[len(told)-1]; last != [2]int64{size, size} {
			t.Errorf("progress ended at %v, want %d of %d", last, size, size)
		}
		assertNoLeftovers(t, c, dest)

		again := filepath.Join(t.TempDir(), "again.engine")
		if e, hit, err := c.Fetch(k, again); err != nil || !hit || e.Engine().SHA256 != p.Entry.Engine().SHA256 {
			t.Fatalf("the backfilled entry: Fetch = %v, %v", hit, err)
		}
		if pushed, err := c.Push(context.Background(), s, k, false, nil); err != nil || pushed.Pushed {
			t.Errorf("a push of what the store has = %+v, %v; want not pushed", pushed, err)
		}
		if pushed, err := c.Push(context.Background(), s, k, true, nil); err != nil || !pushed.Pushed {
			t.Errorf("a push with replace = %+v, %v; want pushed", pushed, err)
		}
	})
}

// A key the store lacks is a miss that leaves nothing.
func TestPullMiss(t *testing.T) {
	st := ociStore(t)
	c := openCache(t, t.TempDir(), 0)
	dest := filepath.Join(t.TempDir(), "x.engine")
	if _, hit, err := c.Pull(context.Background(), st.open(t, ""), testKey("nothing"), dest, nil); hit || err != nil {
		t.Fatalf("Pull of a key the store lacks = %v, %v", hit, err)
	}
	assertNothingPulled(t, c, testKey("nothing"), dest, nil)
}

// A folder that cannot be written takes no entry: the engine is
// delivered all the same, and NotKept says why.
func TestPullIntoAReadOnlyFolder(t *testing.T) {
	st := ociStore(t)
	s := st.open(t, "")
	k := seed(t, s, "ro", 1<<20)
	c := openCache(t, mountTmpfs(t, "1m", true), 0)
	if !c.ReadOnly() {
		t.Fatal("a cache on a read-only mount opened writable")
	}
	dest := filepath.Join(t.TempDir(), "ro.engine")
	p, hit, err := c.Pull(context.Background(), s, k, dest, nil)
	if err != nil || !hit || p.Backfilled || !errors.Is(p.NotKept, ErrReadOnly) {
		t.Fatalf("Pull = %+v, %v, %v; want delivered, not kept (read-only)", p, hit, err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, engineBytes("ro", 1<<20)) {
		t.Error("the engine was not delivered")
	}
}

// An entry larger than max-size is delivered and not kept, with the
// warning a store gives.
func TestPullLargerThanMaxSize(t *testing.T) {
	st := ociStore(t)
	s := st.open(t, "")
	k := seed(t, s, "big", 2<<20)
	c := openCache(t, t.TempDir(), 1<<20)
	dest := filepath.Join(t.TempDir(), "big.engine")
	p, hit, err := c.Pull(context.Background(), s, k, dest, nil)
	var tooLarge *tooLargeError
	if err != nil || !hit || p.Backfilled || !errors.As(p.NotKept, &tooLarge) || !strings.Contains(p.NotKept.Error(), "larger than the cache's max-size") {
		t.Fatalf("Pull = %+v, %v, %v; want delivered, not kept (too large)", p, hit, err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, engineBytes("big", 2<<20)) {
		t.Error("the engine was not delivered")
	}
	assertNoLeftovers(t, c, dest)
	if _, err := os.Stat(c.entryDir(k)); !errors.Is(err, os.ErrNotExist) {
		t.Error("an entry larger than max-size was kept")
	}
}

// A folder whose disk fills during the pull drops the backfill (and what
// it wrote) and delivers the engine; an engine path whose disk fills gets
// nothing, and neither does the folder.
func TestPullWithTheDiskFull(t *testing.T) {
	st := ociStore(t)
	s := st.open(t, "")
	const size = 12 << 20
	k := seed(t, s, "full", size)

	full := openCache(t, mountTmpfs(t, "8m", false), 0)
	dest := filepath.Join(t.TempDir(), "full.engine")
	p, hit, err := full.Pull(context.Background(), s, k, dest, nil)
	if err != nil || !hit || p.Backfilled || p.NotKept == nil || !strings.Contains(p.NotKept.Error(), "the disk is full") {
		t.Fatalf("Pull into a full folder = %+v, %v, %v; want delivered, not kept (disk full)", p, hit, err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, engineBytes("full", size)) {
		t.Error("the engine was not delivered")
	}
	assertNothingPulled(t, full, k, filepath.Join(t.TempDir(), "unused"), nil) // no entry, no staging

	c := openCache(t, t.TempDir(), 0)
	onFull := filepath.Join(mountTmpfs(t, "8m", false), "full.engine")
	if _, hit, err := c.Pull(context.Background(), s, k, onFull, nil); hit || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Pull onto a full disk = %v, %v; want ENOSPC", hit, err)
	}
	assertNothingPulled(t, c, k, onFull, nil)
}

// Entries the store holds that are not this build's, or whose bytes are
// not what their records say, are refused: a miss, with nothing left at
// the engine path (an old engine there stays) or in the folder.
func TestPullRefusesPoisonedEntries(t *testing.T) {
	eachStore(t, func(t *testing.T, st *sharedStore) {
		s := st.open(t, "")
		engine := engineBytes("poison", 1<<20)
		sum := sha256.Sum256(engine)
		file := File{Name: engineName, Role: RoleEngine, Size: int64(len(engine)), SHA256: hex.EncodeToString(sum[:])}
		good := Entry{Build: "poison", Backend: "sim", Files: []File{file}}
		lies := map[string]func(k Key) []byte{
			"size": func(k Key) []byte {
				e, f := good, file
				f.Size++
				e.Key, e.Files = k, []File{f}
				return metaOf(t, e, FormatVersion)
			},
			"hash": func(k Key) []byte {
				e, f := good, file
				f.SHA256 = string(testKey("other"))
				e.Key, e.Files = k, []File{f}
				return metaOf(t, e, FormatVersion)
			},
			"another file": func(k Key) []byte { // a second file the store's records do not name
				e := good
				e.Key, e.Files = k, []File{file, {Name: "output-1", Role: RoleOutput, Path: "config.json", Size: 2, SHA256: file.SHA256}}
				return metaOf(t, e, FormatVersion)
			},
			"an output's path": func(k Key) []byte { // the build declares one engine and no path: nothing reaches a path the entry names
				e, f := good, file
				f.Path = "../../etc/passwd"
				e.Key, e.Files = k, []File{f}
				return metaOf(t, e, FormatVersion)
			},
			"another key's": func(Key) []byte { e := good; e.Key = testKey("another"); return metaOf(t, e, FormatVersion) },
			"format":        func(k Key) []byte { e := good; e.Key = k; return metaOf(t, e, FormatVersion-1) },
			"not JSON":      func(Key) []byte { return []byte(`{"format": 3, "key": "` + "\x1b]8;;" + `"`) },
		}
		for name, lie := range lies {
			t.Run(name, func(t *testing.T) {
				k := testKey(st.Kind + name)
				putRaw(t, s, k, lie(k), engine)
				pullRefused(t, s, k)
			})
		}
		t.Run("blob bytes changed", func(t *testing.T) {
			k := testKey(st.Kind + "flipped")
			e := good
			e.Key = k
			flipped := bytes.Clone(engine)
			flipped[len(flipped)/2] ^= 0xff // an engine no other test stores: its blob is this entry's alone
			fsum := sha256.Sum256(flipped)
			f := file
			f.SHA256 = hex.EncodeToString(fsum[:])
			e.Files = []File{f}
			putRaw(t, s, k, metaOf(t, e, FormatVersion), flipped)
			blob := st.BlobFile(t, f.SHA256)
			if err := os.WriteFile(blob, engine, 0o644); err != nil { // the other bytes, under the old name
				t.Fatal(err)
			}
			pullRefused(t, s, k)
		})
	})
}

// 100 MB of metadata in the registry is refused unread.
func TestPullRefusesHugeMetadata(t *testing.T) {
	st := ociStore(t)
	s := st.open(t, "")
	theirs := seed(t, s, "huge", 64<<10)
	ctx := context.Background()
	repo, err := orasremote.NewRepository(strings.TrimPrefix(st.URL, "oci://"))
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	_, rc, err := repo.Manifests().FetchReference(ctx, string(theirs))
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	err = json.NewDecoder(rc).Decode(&m)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	k := testKey("huge metadata")
	big := bytes.Repeat([]byte(" "), 100<<20)
	copy(big, metaOf(t, Entry{Key: k, Files: []File{{Name: engineName, Role: RoleEngine, Size: 64 << 10}}}, FormatVersion))
	m.Annotations["com.github.trt-action.cache.key"] = string(k) // the key's own manifest, but for its metadata
	m.Config = ocispec.Descriptor{MediaType: m.Config.MediaType, Digest: digest.FromBytes(big), Size: int64(len(big))}
	if err := repo.Blobs().Push(ctx, m.Config, bytes.NewReader(big)); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(b), Size: int64(len(b))}
	if err := repo.Manifests().PushReference(ctx, desc, bytes.NewReader(b), string(k)); err != nil {
		t.Fatal(err)
	}
	pullRefused(t, s, k)
}

// A pull stopped part way (a signal, a budget: ctx) and a response cut
// short leave nothing.
func TestPullCutShortLeavesNothing(t *testing.T) {
	st := ociStore(t)
	proxy := remotetest.StartProxy(t, st.Target)
	s := st.open(t, st.Via(proxy.Addr))
	const size = 8 << 20
	k := seed(t, st.open(t, ""), "cut", size)
	dest := filepath.Join(t.TempDir(), "cut.engine")
	old := []byte("the engine of an earlier run")
	if err := os.WriteFile(dest, old, 0o644); err != nil {
		t.Fatal(err)
	}
	c := openCache(t, t.TempDir(), 0)

	proxy.Throttle(1 << 20)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted by SIGINT")
	var once sync.Once
	start := time.Now()
	_, hit, err := c.Pull(ctx, s, k, dest, func(done, total int64) {
		if done > 0 {
			once.Do(func() { cancel(stop) })
		}
	})
	if hit || !errors.Is(err, stop) || time.Since(start) > 5*time.Second {
		t.Fatalf("a pull stopped part way = %v, %v after %s; want the stop's cause at once", hit, err, time.Since(start))
	}
	assertNothingPulled(t, c, k, dest, old)

	proxy.Clear()
	proxy.CutAfter(2 << 20)
	_, hit, err = c.Pull(context.Background(), s, k, dest, nil)
	var failed *StoreError
	var refused *RefusedError
	if hit || !errors.As(err, &failed) && !errors.As(err, &refused) {
		t.Fatalf("a pull cut short = %v, %v; want a store failure or a refusal", hit, err)
	}
	t.Logf("cut short: %v", err)
	assertNothingPulled(t, c, k, dest, old)
}

// metaOf is an entry's metadata file as the folder writes it, in format.
func metaOf(t *testing.T, e Entry, format int) []byte {
	t.Helper()
	b, err := json.Marshal(entryFile{Format: format, Entry: e})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// putRaw puts meta and engine in s as k's entry, whatever they say.
func putRaw(t *testing.T, s remote.Store, k Key, meta, engine []byte) {
	t.Helper()
	sum := sha256.Sum256(engine)
	up := remote.Upload{File: remote.File{Name: engineName, Size: int64(len(engine)), SHA256: hex.EncodeToString(sum[:])}, Body: bytes.NewReader(engine)}
	if pushed, err := s.Put(context.Background(), string(k), meta, []remote.Upload{up}, false); err != nil || !pushed {
		t.Fatalf("Put = %v, %v", pushed, err)
	}
}

// pullRefused pulls k into a new folder and an engine path that holds an
// old engine, and checks it was refused and left nothing.
func pullRefused(t *testing.T, s remote.Store, k Key) {
	t.Helper()
	c := openCache(t, t.TempDir(), 0)
	dest := filepath.Join(t.TempDir(), "poisoned.engine")
	old := []byte("the engine of an earlier run")
	if err := os.WriteFile(dest, old, 0o644); err != nil {
		t.Fatal(err)
	}
	_, hit, err := c.Pull(context.Background(), s, k, dest, nil)
	var refused *RefusedError
	if hit || !errors.As(err, &refused) {
		t.Fatalf("Pull = %v, %v; want refused", hit, err)
	}
	if strings.ContainsAny(err.Error(), "\x1b\n") {
		t.Errorf("the refusal quotes the store's text raw: %q", err)
	}
	t.Logf("refused: %v", err)
	assertNothingPulled(t, c, k, dest, old)
}

// assertNoLeftovers checks that no partial file is beside dest and the
// folder's staging is empty.
func assertNoLeftovers(t *testing.T, c *Cache, dest string) {
	t.Helper()
	if partials, _ := filepath.Glob(dest + ".partial-*"); len(partials) > 0 {
		t.Errorf("partial files left beside the engine: %v", partials)
	}
	if staged, _ := os.ReadDir(filepath.Join(c.root, tmpName)); len(staged) != 0 {
		t.Errorf("staging left behind: %v", staged)
	}
}
