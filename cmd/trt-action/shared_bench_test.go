package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry"
	orasremote "oras.land/oras-go/v2/registry/remote"

	"github.com/trt-action/trt-action/internal/cache/remote/remotetest"
	"github.com/trt-action/trt-action/internal/report"
)

// The shared store's figures (BENCHMARKS.md, "Engine cache: a shared
// store"), against the real servers the tests start: scripts/bench-remote
// runs these. Each run measures its parts side by side, in alternating
// order, on this noisy machine, and reports the medians.

// benchStore is one kind of store as the benchmarks use it.
type benchStore struct {
	url func(path string) string // the store at path (a repository, a prefix)
	env remotetest.Env
	// raw copies the blob of SHA-256 sum and size bytes (an engine) at
	// path to w with the store's own client library, nothing of
	// trt-action's between.
	raw func(path, sum string, size int64, w io.Writer) error
}

// benchStores starts each kind of store.
func benchStores(b *testing.B) map[string]benchStore {
	reg := remotetest.StartRegistry(b, remotetest.RegistryOptions{})
	s := remotetest.StartS3(b, remotetest.S3Options{})
	return map[string]benchStore{
		"oci": {
			url: func(path string) string { return reg.URL(path) },
			env: reg.Env(),
			raw: func(path, sum string, size int64, w io.Writer) error {
				repo := &orasremote.Repository{Client: http.DefaultClient, Reference: registry.Reference{Registry: reg.Host, Repository: path}, PlainHTTP: true}
				body, err := repo.Blobs().Fetch(context.Background(), ocispec.Descriptor{Digest: digest.Digest("sha256:" + sum), Size: size})
				if err != nil {
					return err
				}
				defer body.Close()
				_, err = io.Copy(w, body)
				return err
			},
		},
		"s3": {
			url: func(path string) string { return s.URL(path, s.Endpoint) },
			env: s.Env(),
			raw: func(path, sum string, _ int64, w io.Writer) error {
				client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
					Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")})
				// The store's layout: PREFIX/v2/blobs/sha256/HEX (internal/cache/remote/s3.go).
				out, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(s.Bucket),
					Key: aws.String(path + "/v2/blobs/sha256/" + sum)})
				if err != nil {
					return err
				}
				defer out.Body.Close()
				_, err = io.Copy(w, out.Body)
				return err
			},
		},
	}
}

// timedRun runs bin/trt-action in dir with env and returns its wall time,
// from start to exit, and its peak resident memory (the process itself:
// a hit starts no worker).
func timedRun(b *testing.B, dir string, env []string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := command(dir, env, args...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		b.Fatalf("%v: %v\n%s", args, err, out)
	}
	return took, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}

// median is the middle of xs (the mean of the middle two).
func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkSharedStorePull1GiB: a 1 GiB engine, built once and pushed.
// Each run then measures, in alternating order: a remote hit end to end
// (a runner with an empty folder: bin/trt-action from start to exit, the
// engine pulled, checked, written to its path and kept in the folder),
// the raw transfer of the same bytes to a file by the same client library
// (oras-go, the AWS SDK; synced as trt-action syncs what it delivers),
// and a local hit of the same engine (the folder that built it, no store).
// Reported: the medians, remote / (raw + local), and trt-action's peak
// memory during the pull.
func BenchmarkSharedStorePull1GiB(b *testing.B) {
	if binary == "" {
		b.Skip("TRT_ACTION_BIN is not set")
	}
	for kind, st := range benchStores(b) {
		b.Run(kind, func(b *testing.B) {
			dir := b.TempDir()
			// A path of this invocation's own (go test calls a benchmark
			// once with N=1 before the N asked for): its seed run builds.
			path := fmt.Sprintf("bench/pull-%d", time.Now().UnixNano())
			writeFile(b, filepath.Join(dir, "trt-builds.yml"),
				"version: 1\nbuilds:\n  - {name: big, backend: sim, engine: out/big.engine, sim: {step: 0s, engine-size: 1GiB}}\n")
			env := envList(st.env)
			timedRun(b, dir, env, "build", "--cache", "seed", "--cache-remote", st.url(path), "--report", "seed.json")
			seed := readReport(b, filepath.Join(dir, "seed.json")).Builds[0]
			if seed.Cache == nil || !seed.Cache.Pushed || seed.Engine == nil {
				b.Fatalf("the seed run pushed nothing: %+v", seed.Cache)
			}
			var remoteT, rawT, localT []time.Duration
			var ratios []float64
			var peaks []int64
			remoteHit := func(i int) {
				os.RemoveAll(filepath.Join(dir, "out"))
				folder := fmt.Sprintf("fresh-%d", i)
				took, peak := timedRun(b, dir, env, "build", "--cache", folder, "--cache-remote", st.url(path), "--report", "remote.json")
				if h := readReport(b, filepath.Join(dir, "remote.json")).Builds[0]; h.Cache == nil || h.Cache.From != report.CacheFromRemote {
					b.Fatalf("not a remote hit: %+v", h.Cache)
				}
				os.RemoveAll(filepath.Join(dir, folder))
				remoteT, peaks = append(remoteT, took), append(peaks, peak)
			}
			raw := func() {
				start := time.Now()
				f, err := os.Create(filepath.Join(dir, "raw.bin"))
				if err != nil {
					b.Fatal(err)
				}
				if err := st.raw(path, seed.Engine.SHA256, seed.Engine.Bytes, f); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				f.Close()
				rawT = append(rawT, time.Since(start))
				os.Remove(filepath.Join(dir, "raw.bin"))
			}
			localHit := func() {
				os.RemoveAll(filepath.Join(dir, "out"))
				took, _ := timedRun(b, dir, env, "build", "--cache", "seed", "--cache-remote=", "--report", "local.json")
				if h := readReport(b, filepath.Join(dir, "local.json")).Builds[0]; h.Status != report.StatusCached {
					b.Fatalf("not a local hit: %s", h.Status)
				}
				localT = append(localT, took)
			}
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					remoteHit(i)
					raw()
					localHit()
				} else {
					localHit()
					raw()
					remoteHit(i)
				}
				ratios = append(ratios, float64(remoteT[i])/float64(rawT[i]+localT[i]))
				b.Logf("run %d: remote hit %.0f ms (peak %d MB), raw %.0f ms + local hit %.0f ms, ratio %.2f",
					i+1, ms(remoteT[i]), peaks[i]>>20, ms(rawT[i]), ms(localT[i]), ratios[i])
			}
			b.StopTimer()
			b.ReportMetric(ms(median(remoteT)), "ms-remote-hit")
			b.ReportMetric(ms(median(rawT)), "ms-raw-transfer")
			b.ReportMetric(ms(median(localT)), "ms-local-hit")
			b.ReportMetric(median(ratios), "remote/(raw+local)")
			b.ReportMetric(float64(median(peaks))/(1<<20), "MiB-peak-rss")
			b.ReportMetric(float64(slices.Max(peaks))/(1<<20), "MiB-max-peak-rss")
		})
	}
}

// BenchmarkSharedStoreTwoRunners: a 20-build matrix (engines of 1 to 20
// MiB) on two "runners", two cache folders behind one store: the first
// builds and pushes every engine, the second, with an empty folder, builds
// nothing. Each run uses a store path of its own, so its first runner
// builds everything. Reported: each runner's median wall time and what
// the second built.
func BenchmarkSharedStoreTwoRunners(b *testing.B) {
	if binary == "" {
		b.Skip("TRT_ACTION_BIN is not set")
	}
	for kind, st := range benchStores(b) {
		b.Run(kind, func(b *testing.B) {
			dir := b.TempDir()
			writeFile(b, filepath.Join(dir, "trt-builds.yml"), `version: 1
defaults: {backend: sim}
builds:
  - name: m${{ matrix.n }}
    engine: out/m${{ matrix.n }}.engine
    sim: {step: 0s, engine-size: "${{ matrix.n }}MiB"}
    matrix: {n: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]}
`)
			env := envList(st.env)
			var first, second []time.Duration
			b.ResetTimer()
			for i := range b.N {
				url := st.url(fmt.Sprintf("bench/two-%d", time.Now().UnixNano()))
				os.RemoveAll(filepath.Join(dir, "out"))
				tookA, _ := timedRun(b, dir, env, "build", "--jobs", "2", "--cache", fmt.Sprintf("a-%d", i), "--cache-remote", url, "--report", "a.json")
				os.RemoveAll(filepath.Join(dir, "out"))
				tookB, _ := timedRun(b, dir, env, "build", "--jobs", "2", "--cache", fmt.Sprintf("b-%d", i), "--cache-remote", url, "--report", "b.json")
				built, pulled := 0, 0
				for _, bb := range readReport(b, filepath.Join(dir, "b.json")).Builds {
					switch {
					case bb.Status == report.StatusOK:
						built++
					case bb.Cache != nil && bb.Cache.From == report.CacheFromRemote:
						pulled++
					}
				}
				pushed := report.SharedCacheUse(readReport(b, filepath.Join(dir, "a.json"))).Pushes
				if built != 0 || pulled != 20 || pushed != 20 {
					b.Fatalf("run %d: the first runner pushed %d, the second built %d and pulled %d of 20", i+1, pushed, built, pulled)
				}
				first, second = append(first, tookA), append(second, tookB)
				b.Logf("run %d: first runner %.0f ms (20 built, 20 pushed), second %.0f ms (0 built, 20 pulled)", i+1, ms(tookA), ms(tookB))
				for _, f := range []string{fmt.Sprintf("a-%d", i), fmt.Sprintf("b-%d", i)} {
					os.RemoveAll(filepath.Join(dir, f))
				}
			}
			b.StopTimer()
			b.ReportMetric(ms(median(first)), "ms-first-runner")
			b.ReportMetric(ms(median(second)), "ms-second-runner")
			b.ReportMetric(0, "builds-second-runner")
		})
	}
}
