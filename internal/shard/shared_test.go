package shard

import (
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// shardOf is the Shared sample cut to the builds named, as one shard's
// report, with its own store.
func shardOf(remote string, warnings []string, names ...string) *report.Report {
	r := reporttest.Shared()
	var kept []report.Build
	for _, b := range r.Builds {
		for _, n := range names {
			if b.Name == n {
				kept = append(kept, b)
			}
		}
	}
	r.Builds = kept
	if remote == "" {
		r.Cache = nil
	} else {
		r.Cache.Remote, r.Cache.Warnings = remote, warnings
	}
	return r
}

// A merge keeps what each build did with the store (its report entry,
// whole) and one store for the run: the first shard's, every shard's
// warnings once, and each shard's store when they differ.
func TestMergeKeepsTheStore(t *testing.T) {
	const other = "s3://engines/ci"
	same := "the store said no"
	a := shardOf(reporttest.SharedRemote, []string{"slow", same}, "resnet-fp16", "yolo_v8")
	b := shardOf(reporttest.SharedRemote, []string{same}, "bert-int8")
	b.Cache.ModeNote = "read-only: a fork"
	c := shardOf(other, nil, "mobilenet")
	d := shardOf("", nil, "vit-b16")
	merged, err := Merge([]*report.Report{a, b, c, d})
	if err != nil {
		t.Fatal(err)
	}
	mc := merged.Cache
	if mc == nil || mc.Remote != reporttest.SharedRemote || mc.RemoteMode != "read-write" {
		t.Fatalf("merged store %+v", mc)
	}
	if got := strings.Join(mc.Warnings, " | "); got != "shard 1: slow | the store said no" {
		t.Errorf("warnings %q", got)
	}
	if mc.ModeNote != "shard 2: read-only: a fork" {
		t.Errorf("mode note %q", mc.ModeNote)
	}
	if got := strings.Join(mc.Remotes, ", "); got != "shard 1: oci://ghcr.io/acme/engines, shard 2: oci://ghcr.io/acme/engines, shard 3: s3://engines/ci, shard 4: none" {
		t.Errorf("remotes %q", got)
	}
	if h := merged.Builds[0].Cache; h.From != report.CacheFromRemote || h.Transfer == nil || h.Transfer.Bytes != 1_234_567_890 {
		t.Errorf("the remote hit lost its fields: %+v", h)
	}
	if u := report.SharedCacheUse(merged); u.Hits != 1 || u.Pushes != 2 {
		t.Errorf("merged use %+v", u)
	}
	same2, err := Merge([]*report.Report{shardOf(reporttest.SharedRemote, nil, "resnet-fp16"), shardOf(reporttest.SharedRemote, nil, "yolo_v8")})
	if err != nil || same2.Cache == nil || len(same2.Cache.Remotes) != 0 {
		t.Errorf("shards of one store: %+v, %v", same2.Cache, err)
	}
	none, err := Merge([]*report.Report{shardOf("", nil, "resnet-fp16")})
	if err != nil || none.Cache != nil {
		t.Errorf("no store: %+v, %v", none.Cache, err)
	}
	uses := CacheByShard([]*report.Report{a, b, c, d})
	golden.Check(t, "cache-by-shard-shared.golden.md", CacheTable(uses))
	if got := uses[0].Line(); got != "shard 1: engine cache hits 1 (1 from the shared cache), misses 1, pushed 1 (2 builds)" {
		t.Errorf("line %q", got)
	}
	if got := uses[3].Line(); got != "shard 4: engine cache hits 0, misses 1 (1 build)" {
		t.Errorf("a shard without a store: %q", got)
	}
}
