package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
)

// fixture is a store with the server the test started (remotetest.Store),
// opened by this package's tests with their options.
type fixture struct{ *remotetest.Store }

func ociFixture(t testing.TB, o remotetest.RegistryOptions) *fixture {
	return &fixture{remotetest.StartOCIStore(t, o)}
}

func s3Fixture(t testing.TB) *fixture {
	return &fixture{remotetest.StartS3Store(t, remotetest.S3Options{})}
}

// eachStore runs f as a subtest for each store kind, with its server.
func eachStore(t *testing.T, f func(t *testing.T, fx *fixture)) {
	remotetest.EachStore(t, func(t *testing.T, st *remotetest.Store) { f(t, &fixture{st}) })
}

// open opens the store at url with fx's environment.
func (fx *fixture) open(t testing.TB, url string, mod ...func(*Options)) Store {
	t.Helper()
	o := Options{Getenv: fx.Env.Getenv}
	for _, m := range mod {
		m(&o)
	}
	s, err := Open(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testFile is a file of size deterministic bytes (by seed), as an Upload.
func testFile(t testing.TB, name string, size int64, seed uint64) Upload {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	h := sha256.New()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	buf := make([]byte, 1<<20)
	for left := size; left > 0; {
		n := min(int64(len(buf)), left)
		for i := range buf[:n] {
			buf[i] = byte(r.Uint32())
		}
		f.Write(buf[:n])
		h.Write(buf[:n])
		left -= n
	}
	return Upload{File: File{Name: name, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}, Body: f}
}

// keyOf is a key made from s.
func keyOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// testMeta is metadata bytes for key.
func testMeta(key string) []byte {
	return []byte(fmt.Sprintf(`{"key":%q,"format":%d,"build":"quick"}`, key, FormatVersion))
}

// put puts one file under key, failing the test on an error.
func put(t testing.TB, s Store, key string, f Upload, replace bool) bool {
	t.Helper()
	pushed, err := s.Put(context.Background(), key, testMeta(key), []Upload{f}, replace)
	if err != nil {
		t.Fatal(err)
	}
	return pushed
}

// readAll reads file i of key's entry: its bytes and the read's error.
func readAll(t testing.TB, s Store, key string, i int) ([]byte, error) {
	t.Helper()
	ctx := context.Background()
	e, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	r, err := s.Open(ctx, e, i)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// sameBytes checks got against the upload's bytes.
func sameBytes(t testing.TB, got []byte, want Upload) {
	t.Helper()
	b := make([]byte, want.Size)
	if _, err := want.Body.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b) {
		t.Fatalf("read %d bytes that differ from the %d put", len(got), want.Size)
	}
}

// within runs f and fails the test when it has not returned after d (it
// is left running then: the test's clean-up ends what it waits for).
func within(t testing.TB, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not end within %s", what, d)
	}
}

// wantErr checks that err wraps target.
func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want one wrapping %q", err, target)
	}
}
