package logview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/golden"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// The log lines of a cache hit, and of the warnings a run works around.

func TestLogLinesOfAHit(t *testing.T) {
	hit := reporttest.OKBuild("bert-int8", 0, 80)
	hit.Status = report.StatusCached
	hit.Cache = &report.CacheUse{Hit: true, BuiltAt: time.Date(2025, 2, 27, 9, 30, 0, 0, time.UTC), BuildMs: 843_000}
	if got, want := resultText(&hit), "✔ cached in 0.1s — engine out/bert-int8.engine (12.3 MB); built 2025-02-27 09:30 UTC in 14m3s"; got != want {
		t.Errorf("result line %q\nwant %q", got, want)
	}
	if got, want := groupTitle("bert-int8", &hit), "✔ bert-int8 — cached in 0.1s"; got != want {
		t.Errorf("group title %q, want %q", got, want)
	}
}

// The log says what a build did to the cache: a --rebuild replaced the
// entry, a plain build stored its engine. Before, "[mlp] ✔ ok in 0.1s"
// alone.
func TestPlainViewOfARebuildGolden(t *testing.T) {
	var out bytes.Buffer
	if err := play(NewPlainView(&out, PlainOptions{}), runScript(reporttest.Rebuilt(), false)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "plain-rebuilt.golden", out.String())
	for _, want := range []string{"[resnet-fp16] ✔ ok in 20.0s — engine out/resnet-fp16.engine (12.3 MB); rebuilt; cache entry replaced\n",
		"[yolo_v8] ✔ ok in 15.0s — engine out/yolo_v8.engine (12.3 MB); stored in the cache\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in\n%s", want, out.String())
		}
	}
}

// A warning (a corrupt cache entry, say) is a line of its build, and a
// hostile message in it stays inert in the Actions log.
func TestWarningLinesAreInert(t *testing.T) {
	r := reporttest.Parallel()
	events := runScript(r, true)
	hostile := "engine cache: cache entry /c/::error::pwned is corrupt (wrong hash) and removed; the build runs"
	warning := event.Event{Kind: event.Warning, At: events[2].At, Build: 0, Name: r.Builds[0].Name, Message: hostile}
	events = append(events[:3], append([]event.Event{warning}, events[3:]...)...)
	for _, jobs := range []int{1, 2} {
		var out bytes.Buffer
		fence := testFence(t)
		if err := play(NewActionsView(&out, fence, ActionsOptions{Jobs: jobs}), events); err != nil {
			t.Fatal(err)
		}
		assertInert(t, out.String(), fence)
		if !strings.Contains(out.String(), "⚠ engine cache: cache entry /c/") {
			t.Errorf("jobs %d: the warning is not shown:\n%s", jobs, out.String())
		}
	}
	plain := newLiner(PlainOptions{})
	for _, ev := range events[:3] {
		plain.lines(ev)
	}
	if got := plain.lines(warning); len(got) != 1 || !strings.HasPrefix(got[0], "["+r.Builds[0].Name+"]") || !strings.Contains(got[0], "⚠ engine cache:") {
		t.Errorf("plain line of a warning: %q", got)
	}
}
