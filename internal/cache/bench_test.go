package cache

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// benchEngineMiB is the engine size of BenchmarkFetch: a large engine, a
// few hundred MB (TRT_ACTION_BENCH_ENGINE_MIB overrides).
func benchEngineMiB() int {
	if n, err := strconv.Atoi(os.Getenv("TRT_ACTION_BENCH_ENGINE_MIB")); err == nil && n > 0 {
		return n
	}
	return 300
}

// BenchmarkFetch is what a hit costs: Fetch of one large entry to an
// engine path, SHA-256 check included, by hard link (the cache and the
// engine on one file system) and by copy (another file system).
//
//	go test -run '^$' -bench Fetch -benchtime 5x -count 5 ./internal/cache
func BenchmarkFetch(b *testing.B) {
	size := benchEngineMiB() << 20
	dir := b.TempDir()
	c := openCache(b, filepath.Join(dir, "cache"), 0)
	k := testKey("large")
	if err := c.Store(k, engineFor(b, dir, "large", size), Entry{Build: "large"}); err != nil {
		b.Fatal(err)
	}
	for _, how := range []string{"link", "copy"} {
		b.Run(how, func(b *testing.B) {
			if how == "copy" {
				link = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EXDEV} }
				defer func() { link = os.Link }()
			}
			dest := filepath.Join(dir, "out", how+".engine")
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, hit, err := c.Fetch(k, dest); !hit || err != nil {
					b.Fatal(hit, err)
				}
			}
		})
	}
}

// BenchmarkStore is what keeping a new engine costs after a build: a copy
// into the cache, hashed and synced, and the rename into place.
//
//	go test -run '^$' -bench Store -benchtime 5x -count 5 ./internal/cache
func BenchmarkStore(b *testing.B) {
	size := benchEngineMiB() << 20
	dir := b.TempDir()
	c := openCache(b, filepath.Join(dir, "cache"), 0)
	engine := engineFor(b, dir, "large", size)
	b.SetBytes(int64(size))
	i := 0
	for b.Loop() {
		i++
		k := testKey("large" + strconv.Itoa(i))
		if err := c.Store(k, engine, Entry{Build: "large"}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(c.entryDir(k)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
