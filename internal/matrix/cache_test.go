package matrix

import (
	"path/filepath"
	"strings"
	"testing"
)

const simBuild = "builds:\n  - {name: a, backend: sim}\n"

func TestCacheKey(t *testing.T) {
	repo, m := repoWithMatrix(t, "cache: {dir: ../.trt-cache, max-size: 20GiB}\n"+simBuild)
	f, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Cache
	if c == nil || c.Dir != filepath.Join(repo, ".trt-cache") || c.MaxSize != 20<<30 {
		t.Fatalf("Cache = %+v, want dir %s and 20 GiB", c, filepath.Join(repo, ".trt-cache"))
	}
	if c.Pos.Line != 2 || c.Pos.Column != 1 {
		t.Errorf("Pos = %+v, want 2:1", c.Pos)
	}

	_, m = repoWithMatrix(t, "cache:\n  dir: c\n"+simBuild)
	if f, err := Load(m); err != nil || f.Cache.MaxSize != 0 {
		t.Errorf("without max-size: %+v, %v; want no limit", f.Cache, err)
	}
	// Without dir the folder comes from --cache; the size still holds.
	_, m = repoWithMatrix(t, "cache: {max-size: 1GiB}\n"+simBuild)
	if f, err := Load(m); err != nil || f.Cache == nil || f.Cache.Dir != "" || f.Cache.MaxSize != 1<<30 || f.Cache.Pos.Line != 2 {
		t.Errorf("max-size alone: %+v, %v; want no folder, 1 GiB", f.Cache, err)
	}
	_, m = repoWithMatrix(t, simBuild)
	if f, err := Load(m); err != nil || f.Cache != nil {
		t.Errorf("without cache: %+v, %v; want nil (off)", f.Cache, err)
	}
	// The shared store behind it: its URL as written, its mode; a mode
	// alone (the store from the variable or the flag) is no error.
	_, m = repoWithMatrix(t, "cache:\n  dir: c\n  remote: s3://engines/ci?region=eu-west-1\n  remote-mode: read-only\n"+simBuild)
	if f, err := Load(m); err != nil || f.Cache.Remote != "s3://engines/ci?region=eu-west-1" || f.Cache.RemoteMode != "read-only" ||
		f.Cache.RemotePos.Line != 4 || f.Cache.RemoteModePos.Line != 5 {
		t.Errorf("remote: %+v, %v", f.Cache, err)
	}
	_, m = repoWithMatrix(t, "cache: {dir: c, remote-mode: read-only}\n"+simBuild)
	if f, err := Load(m); err != nil || f.Cache.Remote != "" || f.Cache.RemoteMode != "read-only" {
		t.Errorf("remote-mode alone: %+v, %v", f.Cache, err)
	}
}

func TestCacheKeyErrors(t *testing.T) {
	tests := []struct {
		body  string
		at    string
		parts []string
	}{
		{"cache: 3\n", "2:8", []string{"cache: expected a mapping like {dir: .trt-cache, max-size: 20GiB}, got the number 3; allowed keys: dir, max-size"}},
		{"cache: {dir: c, max-size: lots}\n", "2:27", []string{`cache.max-size: invalid size "lots"`, "KiB, MiB, GiB"}},
		{"cache: {dir: c, maxsize: 1GiB}\n", "2:17", []string{`unknown key "maxsize" in cache`, `did you mean "max-size"`, "allowed: dir, max-size"}},
		{"cache:\n", "2:1", []string{"cache: expected a mapping", "remove the key"}},
		{"cache: .trt-cache\n", "2:8", []string{"cache: expected a mapping"}},
		{"cache: {dir: /var/tmp/elsewhere}\n", "2:14", []string{"cache.dir", "outside the workspace", "allow-paths"}},
		{"cache: {dir: c, remote: https://ghcr.io/acme/e}\n", "2:25", []string{"cache.remote:", `unknown scheme "https"`, "oci://HOST[:PORT]/REPOSITORY or s3://BUCKET[/PREFIX][?endpoint=URL&region=R]"}},
		{"cache: {dir: c, remote: oci://ghcr.io}\n", "2:25", []string{"cache.remote:", "no REPOSITORY"}},
		{"cache: {dir: c, remote: 's3://me:pw@bucket'}\n", "2:25", []string{"cache.remote:", "credentials do not belong in the URL", `"s3://bucket"`}},
		{"cache: {dir: c, remote: [oci://h/r]}\n", "2:25", []string{"cache.remote: expected a URL: oci://"}},
		{"cache: {dir: c, remote-mode: write}\n", "2:30", []string{`cache.remote-mode: unknown value "write"`, "allowed: read-write, read-only"}},
		{"cache: {dir: c, remote: oci://h/r, remotemode: read-only}\n", "2:36", []string{`unknown key "remotemode" in cache`, "allowed: dir, max-size, remote, remote-mode"}},
		{"cache: {dir: m.yml}\n", "2:14", []string{"cache.dir", "is not a folder"}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.body), func(t *testing.T) {
			_, m := repoWithMatrix(t, tt.body+simBuild)
			wantPathError(t, m, tt.at, tt.parts...)
		})
	}
	t.Run("allowed outside", func(t *testing.T) {
		other := realDir(t, t.TempDir())
		_, m := repoWithMatrix(t, "allow-paths: ["+other+"]\ncache: {dir: "+filepath.Join(other, "c")+"}\n"+simBuild)
		if _, err := Load(m); err != nil {
			t.Errorf("a cache in allow-paths: %v", err)
		}
	})
}
