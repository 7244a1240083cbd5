package cache

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/trt-action/trt-action/internal/report"
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
// engine path, SHA-256 check included. "delivered" is Fetch as it is: a
// reflink where the file system clones (btrfs, XFS), else a copy; "copy"
// forces the copy. "hard link" is the delivery trt-action used before
// engines were copies (a link and one read for the hash), measured beside
// them for the comparison in BENCHMARKS.md.
//
//	go test -run '^$' -bench Fetch -benchtime 5x -count 5 ./internal/cache
func BenchmarkFetch(b *testing.B) {
	size := benchEngineMiB() << 20
	dir := b.TempDir()
	c := openCache(b, filepath.Join(dir, "cache"), 0)
	k := testKey("large")
	if _, err := c.Store(k, engineFor(b, dir, "large", size), Entry{Build: "large"}); err != nil {
		b.Fatal(err)
	}
	for _, how := range []string{"delivered", "copy", "hard link"} {
		b.Run(strings.ReplaceAll(how, " ", "-"), func(b *testing.B) {
			if how == "copy" {
				cloneFile = func(*os.File, *os.File) error { return syscall.EOPNOTSUPP }
				defer func() { cloneFile = cloneOrNot }()
			}
			dest := filepath.Join(dir, "out", strings.ReplaceAll(how, " ", "-")+".engine")
			b.SetBytes(int64(size))
			for b.Loop() {
				if how == "hard link" {
					linkAndHash(b, filepath.Join(c.entryDir(k), engineName), dest)
					continue
				}
				if _, hit, err := c.Fetch(k, dest); !hit || err != nil {
					b.Fatal(hit, err)
				}
			}
		})
	}
}

// linkAndHash is the old delivery: a hard link beside dest, renamed into
// place, and the file read once for its SHA-256.
func linkAndHash(b *testing.B, src, dest string) {
	tmp := dest + ".link"
	_ = os.Remove(dest) // rename(2) of a link over another link to the same file does nothing
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Link(src, tmp); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(tmp)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(sha256.New(), f)
	f.Close()
	if err == nil {
		err = os.Rename(tmp, dest)
	}
	if err != nil {
		b.Fatal(err)
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
		if _, err := c.Store(k, engine, Entry{Build: "large"}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(c.entryDir(k)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkPruneListing is what the listing costs that every store under
// a max-size makes before it evicts (and cache ls and prune make once):
// a cache of 1,000 entries, each a small engine and metadata of about
// 8.5 kB (an original build with a long log; meta-bytes), pruned with room
// for all of them, so it lists and removes nothing: "first" by a newly
// opened Cache, "again" by one that listed before (a run's later stores).
// Since the listing reads each entry's metadata (a broken entry is
// evicted first), it is compared in BENCHMARKS.md with the listing
// before, which looked at names and sizes only.
//
//	go test -run '^$' -bench PruneListing -benchtime 20x -count 5 ./internal/cache
func BenchmarkPruneListing(b *testing.B) {
	dir := b.TempDir()
	c := openCache(b, dir, 0)
	orig := &report.Build{Name: "orig", Status: report.StatusOK}
	for i := range 50 {
		orig.Log = append(orig.Log, report.LogLine{Severity: "warning", Text: strings.Repeat("a long line from TensorRT's log ", 4) + strconv.Itoa(i)})
	}
	eng := engineFor(b, dir, "small", 4096)
	for i := range 1000 {
		if _, err := c.Store(testKey(strconv.Itoa(i)), eng, Entry{Build: "b" + strconv.Itoa(i), Original: orig}); err != nil {
			b.Fatal(err)
		}
	}
	fi, err := os.Stat(filepath.Join(c.entryDir(testKey("0")), metaName))
	if err != nil {
		b.Fatal(err)
	}
	for _, how := range []string{"first", "again"} {
		b.Run(how, func(b *testing.B) {
			for b.Loop() {
				pruner := c
				if how == "first" { // a cache prune, or the first store of a run
					pruner = openCache(b, dir, 0)
				}
				if done, err := pruner.Prune(PruneRule{MaxSize: 1 << 40}); err != nil || len(done.Entries) != 0 {
					b.Fatal(done, err)
				}
			}
			b.ReportMetric(float64(fi.Size()), "meta-bytes") // after the loop, which resets the metrics
		})
	}
}
