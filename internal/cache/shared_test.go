package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// The shared tier's tests run against real servers the tests start on
// 127.0.0.1 (remotetest): the CNCF Distribution registry and Versity's S3
// gateway.

// sharedStore is a store with the server the test started
// (remotetest.Store).
type sharedStore struct{ *remotetest.Store }

func ociStore(t *testing.T) *sharedStore {
	return &sharedStore{remotetest.StartOCIStore(t, remotetest.RegistryOptions{})}
}

// eachStore runs f for each store kind, on a server of its own.
func eachStore(t *testing.T, f func(t *testing.T, st *sharedStore)) {
	remotetest.EachStore(t, func(t *testing.T, st *remotetest.Store) { f(t, &sharedStore{st}) })
}

// open opens the store at url (st.URL when ""), with st's environment.
func (st *sharedStore) open(t *testing.T, url string) remote.Store {
	t.Helper()
	if url == "" {
		url = st.URL
	}
	s, err := remote.Open(context.Background(), url, remote.Options{Getenv: st.Env.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seed stores an engine of size bytes made from word in a cache folder of
// its own (another runner's) and pushes that entry to s: what a pull then
// finds.
func seed(t *testing.T, s remote.Store, word string, size int) Key {
	t.Helper()
	c := openCache(t, t.TempDir(), 0)
	k := store(t, c, word, size)
	p, err := c.Push(context.Background(), s, k, false, nil)
	if err != nil || !p.Pushed {
		t.Fatalf("Push = %+v, %v", p, err)
	}
	return k
}

// mountTmpfs mounts a tmpfs of size at a new folder and unmounts it at the
// test's end; ro mounts it read-only. It needs root (these machines run
// the tests as root): elsewhere the test skips, and under CI it fails.
func mountTmpfs(t *testing.T, size string, ro bool) string {
	t.Helper()
	dir := t.TempDir()
	opts := "size=" + size
	if ro {
		opts += ",ro"
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		remotetest.Need(t, "a tmpfs mount", fmt.Sprintf("mount -t tmpfs as root: %v: %s", err, bytes.TrimSpace(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// assertNothingPulled checks that a pull left nothing: dest holds what it
// held before (old; nil for nothing), no partial file is beside it, and
// the cache has neither k's entry nor anything in its staging folder.
func assertNothingPulled(t *testing.T, c *Cache, k Key, dest string, old []byte) {
	t.Helper()
	got, err := os.ReadFile(dest)
	switch {
	case old == nil && !errors.Is(err, os.ErrNotExist):
		t.Errorf("%s is there (%d bytes, %v) after a pull that failed", dest, len(got), err)
	case old != nil && !bytes.Equal(got, old):
		t.Errorf("%s changed (%d bytes, %v) after a pull that failed", dest, len(got), err)
	}
	if partials, _ := filepath.Glob(dest + ".partial-*"); len(partials) > 0 {
		t.Errorf("partial files left beside the engine: %v", partials)
	}
	if _, err := os.Stat(c.entryDir(k)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cache has an entry for %s after a pull that failed (%v)", k, err)
	}
	if staged, _ := os.ReadDir(filepath.Join(c.root, tmpName)); len(staged) != 0 {
		t.Errorf("staging left behind: %v", staged)
	}
}
