package logview

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// A run with a shared cache store: a pull tells its start, a progress
// line at most every 5 s and its end with size and rate; pushes that go
// on after their build tell theirs, and whether the entry was pushed.
func TestPlainViewOfASharedStoreGolden(t *testing.T) {
	var out bytes.Buffer
	events := reporttest.SharedEvents(reporttest.Shared(), reporttest.SharedStopped)
	if err := play(NewPlainView(&out, PlainOptions{}), events); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	golden.Check(t, "plain-shared.golden", got)
	for _, want := range []string{
		"[resnet-fp16]     0.0s  ⇣ pulling 1.2 GB from the shared cache\n",
		"[resnet-fp16]    14.1s  ⇣ 1.2 GB pulled from the shared cache in 14.1s (87.6 MB/s)\n",
		"[resnet-fp16] ✔ cached in 14.3s — engine out/resnet-fp16.engine (1.2 GB); from the shared cache, built 2025-02-27 11:00 UTC in 41m0s\n",
		"[yolo_v8] ✔ ok in 15.0s — engine out/yolo_v8.engine (12.3 MB); stored in the cache\n", // its push ends later
		"[yolo_v8]    17.3s  ⇡ pushed to the shared cache\n",
		"[mobilenet]     9.9s  ⇡ not pushed to the shared cache\n",
		"[vit-b16]    14.0s  ⇡ push to the shared cache stopped after 5.0 MB: HTTP 503 Service Unavailable after 3 tries\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no line %q in\n%s", want, got)
		}
	}
	// Bounded: 14.1 s of progress every 250 ms is three lines, not 56.
	if n := strings.Count(got, "[resnet-fp16]") - 3; n > 3 || n < 2 {
		t.Errorf("%d progress lines for a 14 s pull, want 2 or 3 (one every 5 s):\n%s", n, got)
	}
}

// In the Actions log a push that outlives its build is never written into
// another build's group: it waits until no group is open.
func TestActionsViewKeepsLatePushesOutOfOtherGroups(t *testing.T) {
	for _, jobs := range []int{1, 2} {
		var out bytes.Buffer
		events := reporttest.SharedEvents(reporttest.Shared(), reporttest.SharedStopped)
		if err := play(NewActionsView(&out, testFence(t), ActionsOptions{Jobs: jobs}), events); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		assertInert(t, got, testFence(t))
		if jobs == 1 {
			golden.Check(t, "actions-shared.golden", got)
		}
		for _, group := range groupBodies(got) {
			names := map[string]bool{}
			for _, m := range buildTag.FindAllStringSubmatch(group, -1) {
				names[m[1]] = true
			}
			if len(names) > 1 {
				t.Errorf("jobs %d: one group holds the lines of %v:\n%s", jobs, names, group)
			}
		}
		if !strings.Contains(got, "[yolo_v8]    17.3s  ⇡ pushed to the shared cache") || strings.Contains(got, "did not finish") {
			t.Errorf("jobs %d: the late push is lost, or its build reads as unfinished:\n%s", jobs, got)
		}
	}
}

var buildTag = regexp.MustCompile(`\[([^\]]+)\]`)

// groupBodies are the lines of each ::group:: of an Actions log.
func groupBodies(log string) []string {
	var groups []string
	for _, part := range strings.Split(log, "::group::")[1:] {
		body, _, _ := strings.Cut(part, "::endgroup::")
		groups = append(groups, body)
	}
	return groups
}

// What the store said (a refused entry's original build name, the
// reason a transfer stopped) stays inert in the Actions log. (A log is
// not Markdown: GitHub mentions no one from it.)
func TestSharedStoreTextIsInertInTheLog(t *testing.T) {
	stopped := map[string]string{"resnet-fp16": "::error::cut short @octocat ##[warning]x"}
	events := reporttest.SharedEvents(reporttest.HostileShared(), stopped)
	for _, jobs := range []int{1, 2} {
		var out bytes.Buffer
		if err := play(NewActionsView(&out, testFence(t), ActionsOptions{Jobs: jobs}), events); err != nil {
			t.Fatal(err)
		}
		assertInert(t, out.String(), testFence(t))
		if !strings.Contains(out.String(), "stopped after 1.2 GB: ::error::cut short") {
			t.Errorf("jobs %d: the transfer's error is not shown:\n%s", jobs, out.String())
		}
	}
}

// Builds with run: in the engine cache: a hit names every engine it
// delivered and where they came from; a build not stored says why.
func TestPlainViewOfCachedScriptsGolden(t *testing.T) {
	var out bytes.Buffer
	if err := play(NewPlainView(&out, PlainOptions{}), reporttest.SharedEvents(reporttest.CachedScripts(), nil)); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	golden.Check(t, "plain-cached-scripts.golden", got)
	for _, want := range []string{
		"[trtllm-llama] ✔ cached in 9.2s — engines engines/rank0.engine (2.1 GB), engines/rank1.engine (2.1 GB); from the shared cache, built 2025-02-27 11:00 UTC in 38m0s\n",
		"[polygraphy]     3.1s  ⚠ engine cache: not stored: output out/model.json is left from before this build: the command did not write it\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no line %q in\n%s", want, got)
		}
	}
}
