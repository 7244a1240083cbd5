package report

import (
	"bytes"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/text/texttest"
)

// A run with a shared cache store: the remote hit's row says where its
// engine came from, a line under the table gives what moved, and the
// store's warnings follow.
func TestSharedSummaryGolden(t *testing.T) {
	s := Summary(sharedReport(), SummaryOptions{})
	golden.Check(t, "summary-shared.golden.md", s)
	for _, want := range []string{
		"| resnet-fp16 | ♻️ cached | sim | 14.3s | cached: from the shared cache, built 2 days ago in 41m0s |",
		"**Shared engine cache:** oci://ghcr.io/acme/engines (read-write) — 1 build from the shared cache (1.2 GB pulled in 14.1s), 2 pushed (377.0 MB sent in 10.3s).",
		"- ⚠️ oci://ghcr.io/acme/engines: HTTP 503",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

func TestSharedJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, sharedReport()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "junit-shared.golden.xml", buf.String())
	for _, want := range []string{
		`<property name="trt-action.cache.remote" value="oci://ghcr.io/acme/engines"></property>`,
		`<property name="trt-action.cache.from" value="remote"></property>`,
		`<property name="trt-action.cache.pull_bytes" value="1234567890"></property>`,
		`<property name="trt-action.cache.pushed" value="true"></property>`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %s in\n%s", want, buf.String())
		}
	}
}

func TestHeadlineCountsRemoteHits(t *testing.T) {
	if got, want := Headline(sharedReport()), "✅ 3 ok, 2 cached (1 from the shared cache) — 5 builds in 35.1s"; got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
}

// Where a hit came from and what a build did with the store, in the
// words every view shares.
func TestSharedCacheNotes(t *testing.T) {
	r := sharedReport()
	for i, want := range []struct{ origin, store string }{
		{"from the shared cache, built 2025-02-27 11:00 UTC in 41m0s", ""},
		{"", "stored in the cache; pushed to the shared cache"},
		{"built in 14m3s", "pushed to the shared cache"}, // a local hit that seeded the store
		{"", "stored in the cache"},                      // another runner pushed first
		{"", "stored in the cache"},
	} {
		b := &r.Builds[i]
		if got := CacheOrigin(b, time.Time{}); got != want.origin {
			t.Errorf("%s: CacheOrigin %q, want %q", b.Name, got, want.origin)
		}
		if got := CacheStoreNote(b); got != want.store {
			t.Errorf("%s: CacheStoreNote %q, want %q", b.Name, got, want.store)
		}
	}
	bare := Build{Status: StatusCached, Cache: &CacheUse{Hit: true, From: CacheFromRemote}}
	if got := CacheNote(&bare, time.Time{}); got != "cached: from the shared cache" {
		t.Errorf("a remote hit that knows nothing of its build: %q", got)
	}
	rebuilt := Build{Status: StatusOK, Cache: &CacheUse{Rebuilt: true, Stored: true, Replaced: true, Pushed: true}}
	if got := RebuildNote(&rebuilt); got != "rebuilt; cache entry replaced; pushed to the shared cache" {
		t.Errorf("a rebuild that replaced the store's entry: %q", got)
	}
}

func TestTransferWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{TransferStart(TransferPull, 1_234_567_890), "pulling 1.2 GB from the shared cache"},
		{TransferStart(TransferPush, 0), "pushing to the shared cache"},
		{TransferProgress(300_000_000, 1_200_000_000, 3*time.Second), "300.0 MB of 1.2 GB, 100.0 MB/s, 9.0s left"},
		{TransferProgress(0, 0, 0), "0 B"},
		{TransferEnd(TransferPull, 1_200_000_000, 12*time.Second, ""), "1.2 GB pulled from the shared cache in 12.0s (100.0 MB/s)"},
		{TransferEnd(TransferPush, 48_000_000, 2*time.Second, ""), "48.0 MB sent to the shared cache in 2.0s (24.0 MB/s)"},
		{TransferEnd(TransferPull, 5_000_000, time.Second, "no bytes for 30s"), "pull from the shared cache stopped after 5.0 MB: no bytes for 30s"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	if _, ok := TransferLeft(10, 0, time.Second); ok {
		t.Error("a transfer of unknown size has an estimate")
	}
}

// Text read from the store (the original build's name, reason and
// warnings, a library it names) and the store's warnings reach the
// summary and JUnit inert: no mention, no workflow command.
func TestSharedStoreTextIsInert(t *testing.T) {
	r := hostileShared()
	s := Summary(r, SummaryOptions{})
	golden.Check(t, "summary-shared-hostile.golden.md", s)
	if live := texttest.LiveIn(s); len(live) > 0 {
		t.Errorf("the summary mentions %v:\n%s", live, s)
	}
	if !strings.Contains(s, "read-only: this pull\\_request run") {
		t.Errorf("the summary does not say why the store was read-only:\n%s", s)
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	// As a JUnit reader shows it: entities decoded. (A file, never the
	// log: a workflow command in it is not run.)
	if live := texttest.LiveIn(html.UnescapeString(buf.String())); len(live) > 0 {
		t.Errorf("JUnit mentions %v:\n%s", live, buf.String())
	}
}
