package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// The shared tier's tests run against real servers the tests start on
// 127.0.0.1 (remotetest): the CNCF Distribution registry and Versity's S3
// gateway.

// sharedStore is a store kind with its server.
type sharedStore struct {
	kind   string
	url    string
	env    remotetest.Env
	target string                   // the server's HOST:PORT, for a proxy in front of it
	via    func(addr string) string // the store's URL through a proxy at addr
	blob   func(sum string) string  // the server's file of the blob whose SHA-256 is sum
	reg    *remotetest.Registry     // the OCI store's
	s3     *remotetest.S3           // the S3 store's
}

func ociStore(t *testing.T) *sharedStore {
	r := remotetest.StartRegistry(t, remotetest.RegistryOptions{})
	return &sharedStore{kind: "oci", url: r.URL("trt/engines"), env: r.Env(), target: r.Host,
		via:  func(addr string) string { return "oci://" + addr + "/trt/engines" },
		blob: r.BlobFile, reg: r}
}

func s3Store(t *testing.T) *sharedStore {
	s := remotetest.StartS3(t, remotetest.S3Options{})
	return &sharedStore{kind: "s3", url: s.URL("team", s.Endpoint), env: s.Env(), target: strings.TrimPrefix(s.Endpoint, "http://"),
		via: func(addr string) string { return s.URL("team", "http://"+addr) },
		blob: func(sum string) string {
			return s.ObjectFile(fmt.Sprintf("team/v%d/blobs/sha256/%s", remote.FormatVersion, sum))
		}, s3: s}
}

// eachStore runs f for each store kind, on a server of its own.
func eachStore(t *testing.T, f func(t *testing.T, st *sharedStore)) {
	t.Run("oci", func(t *testing.T) { f(t, ociStore(t)) })
	t.Run("s3", func(t *testing.T) { f(t, s3Store(t)) })
}

// open opens the store at url (st.url when ""), with st's environment.
func (st *sharedStore) open(t *testing.T, url string) remote.Store {
	t.Helper()
	if url == "" {
		url = st.url
	}
	s, err := remote.Open(context.Background(), url, remote.Options{Getenv: st.env.Getenv})
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
