package cache

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/text/texttest"
)

// listed is a store's entry as List gives it, with metadata meta.
func listed(key string, size int64, uploaded time.Time, meta string) remote.Listed {
	l := remote.Listed{Key: key, Size: size, Uploaded: uploaded}
	if meta != "" {
		l.Meta = []byte(meta)
	}
	return l
}

// What cache ls --remote and prune --remote print, from what a store
// lists: each entry's metadata checked as a local entry's is (another
// key's, a size that disagrees, unreadable or too large: broken, with
// why), and the store's text shown inert.
func TestStoreListingGolden(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	k := func(c string) string { return strings.Repeat(c, 64) }
	meta := func(key, build string, size int64, extra string) string {
		return `{"format":3,"key":"` + key + `","build":"` + build + `","backend":"tensorrt","files":[{"name":"engine","role":"engine","size":` +
			strconv.FormatInt(size, 10) + `,"sha256":"` + k("9") + `"}]` + extra + `}`
	}
	entries := []StoredEntry{
		storedEntry(listed(k("a"), 812_000_000, now.Add(-3*time.Hour), meta(k("a"), "resnet-fp16", 812_000_000,
			`,"library":"libnvinfer.so.10.16.0 gnu-build-id 5c1a","target":"NVIDIA H100 80GB HBM3, compute capability 9.0","original":{"name":"resnet-fp16","backend":"tensorrt","status":"ok","library":"TensorRT 10.16.0.72"}`))),
		storedEntry(listed(k("b"), 14_000_000, now.Add(-49*time.Hour), meta(k("c"), "stolen", 14_000_000, ""))),
		storedEntry(listed(k("d"), 5, now.Add(-time.Minute), meta(k("d"), "::error::x @octocat", 6, ""))),
		storedEntry(listed(k("e"), 1, time.Time{}, "")),
		storedEntry(listed(k("f"), 1, now, strings.Repeat(" ", remote.MaxMetaBytes+1))),
	}
	got := StoreListingTable("oci://ghcr.io/acme/engines", entries, now)
	golden.Check(t, "store-ls.golden", got)
	if live := texttest.LiveIn(got); len(live) > 0 {
		t.Errorf("the listing mentions %v", live)
	}
	for i, want := range []string{"", "its metadata names key " + k("c"), "its files hold 5 bytes in the store, its metadata says 6",
		"its metadata could not be read", "its metadata has 1048577 bytes"} {
		if !strings.HasPrefix(entries[i].Broken, want) || want == "" && entries[i].Broken != "" {
			t.Errorf("entry %d: broken %q, want %q", i, entries[i].Broken, want)
		}
	}
	if entries[0].Library != "TensorRT 10.16.0.72" || entries[0].GPU != "NVIDIA H100 80GB HBM3, compute capability 9.0" {
		t.Errorf("entry 0: %+v", entries[0])
	}
	pruned := StorePruned{Entries: entries[:2], Undated: 1, Swept: remote.Swept{Files: 2, Bytes: 826_000_000}}
	golden.Check(t, "store-prune.golden", StorePrunedText("s3://engines/ci", pruned, now))
}
