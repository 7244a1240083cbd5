package terminal

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report"
)

// script is a short run: two builds, heartbeats every 50ms (twice the
// supervisor's rate, to show the cap), a Ctrl-C, and the end.
func script() []event.Event {
	evs := []event.Event{
		{Kind: event.RunStarted, Total: 2},
		started(0, 0, "mnist-fp32"),
		started(0, 1, "resnet50-fp16"),
	}
	for at := 50 * time.Millisecond; at <= 400*time.Millisecond; at += 50 * time.Millisecond {
		steps := int(at / (50 * time.Millisecond))
		evs = append(evs,
			beat(at, 0, at, -1, "", ph("Building engine", 1, 6, at), ph("Optimizing graph", steps, 33, at/2)),
			beat(at, 1, at, 3*s-at, "build", ph("Building engine", 0, 6, at)))
	}
	evs = append(evs,
		event.Event{Kind: event.Stopping, At: 420 * time.Millisecond, Build: -1, Message: "SIGINT"},
		finished(450*time.Millisecond, 0, "mnist-fp32", report.StatusCancelled, 450*time.Millisecond, "cancelled by SIGINT"),
		finished(460*time.Millisecond, 1, "resnet50-fp16", report.StatusCancelled, 460*time.Millisecond, "cancelled by SIGINT"),
		event.Event{Kind: event.RunFinished, At: 470 * time.Millisecond, Run: &report.Report{DurationMs: 470, Builds: []report.Build{
			{Name: "mnist-fp32", Status: report.StatusCancelled, DurationMs: 450, Reason: "cancelled by SIGINT"},
			{Name: "resnet50-fp16", Status: report.StatusCancelled, DurationMs: 460, Reason: "cancelled by SIGINT"},
		}}},
	)
	return evs
}

func TestViewStream(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Width: func() int { return 61 }, Height: func() int { return 24 }})
	for _, e := range script() {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "view_stream", out.String())

	// Frames are written whole, then the cursor goes back up over them:
	// count the moves. Draws at 0, 100, 200, 300, 400ms, one for the
	// Ctrl-C, and the final table replaces the last one.
	if n := strings.Count(out.String(), "\x1b[J"); n != 6 {
		t.Errorf("%d frames were replaced, want 6 (5 at 10/s, 1 for Stopping)", n)
	}
	if !strings.Contains(out.String(), stopHint) {
		t.Error("the stopping state never reached the screen")
	}
	if !strings.HasSuffix(out.String(), "2 builds in 0.5s: 2 cancelled\n") {
		t.Errorf("the run does not end with the final table:\n%s", visible(out.String()))
	}
}

func TestViewRateUsesTheClock(t *testing.T) {
	var out bytes.Buffer
	now := time.Duration(0)
	v := New(&out, Options{Now: func() time.Duration { return now }, MaxRate: 2})
	v.Handle(started(0, 0, "a"))
	for range 20 {
		now += 100 * time.Millisecond
		v.Handle(beat(0, 0, 0, -1, "", ph("Building engine", 0, 6, 0)))
	}
	// 2/s over 2s: the first frame, then one every 500ms.
	if n := strings.Count(out.String(), "▶ a"); n != 5 {
		t.Errorf("%d frames at MaxRate 2 over 2s, want 5", n)
	}
}

func TestViewFollowsResize(t *testing.T) {
	var out bytes.Buffer
	w := 100
	v := New(&out, Options{Width: func() int { return w }})
	long := "a-very-long-build-name-that-needs-forty-cells"
	v.Handle(started(0, 0, long))
	w = 30
	v.Handle(beat(time.Second, 0, time.Second, -1, ""))
	frames := strings.Split(out.String(), "\x1b[J")
	if len(frames) != 2 {
		t.Fatalf("want 2 frames, got %d", len(frames))
	}
	if !strings.Contains(frames[0], long) {
		t.Errorf("wide frame shortened the name: %q", frames[0])
	}
	for _, l := range strings.Split(frames[1], "\n") {
		if width(l) > 29 {
			t.Errorf("after the resize a line is %d cells: %q", width(l), l)
		}
	}
}

func TestCloseAfterInterruptKeepsTheLastFrame(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{})
	v.Handle(started(0, 0, "a"))
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Errorf("Close moved the cursor over the last frame: %q", visible(out.String()))
	}
	if !strings.Contains(out.String(), "▶ a") {
		t.Errorf("last frame missing: %q", out.String())
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errClosed }

var errClosed = bytes.ErrTooLarge

func TestCloseReportsWriteErrors(t *testing.T) {
	v := New(failing{}, Options{})
	v.Handle(started(0, 0, "a"))
	if err := v.Close(); err != errClosed {
		t.Errorf("Close() = %v, want the write error", err)
	}
}

// A warning that comes during the run is printed at once above the live
// area and stays there through later frames and the final table.
func TestViewPrintsWarningsAboveTheLiveArea(t *testing.T) {
	var out bytes.Buffer
	v := New(&out, Options{Width: func() int { return 61 }, Height: func() int { return 24 }})
	ms := time.Millisecond
	const warning = "engine cache: entry 3f2a was corrupt (sha256 mismatch) and was removed; building"
	for _, e := range []event.Event{
		{Kind: event.RunStarted, Total: 1},
		started(0, 0, "mnist-fp32"),
		beat(10*ms, 0, 10*ms, -1, "", ph("Building engine", 1, 6, 10*ms)),
		{Kind: event.Warning, At: 20 * ms, Build: 0, Name: "mnist-fp32", Message: warning},
		beat(200*ms, 0, 200*ms, -1, "", ph("Building engine", 3, 6, 200*ms)),
		finished(300*ms, 0, "mnist-fp32", report.StatusOK, 300*ms, ""),
		{Kind: event.RunFinished, At: 310 * ms, Run: &report.Report{DurationMs: 310, Builds: []report.Build{
			{Name: "mnist-fp32", Status: report.StatusOK, DurationMs: 300},
		}}},
	} {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "view_warnings", out.String())
	got := out.String()
	if strings.Count(got, "⚠ mnist-fp32: engine cache:") != 1 {
		t.Errorf("the warning is not printed exactly once:\n%s", visible(got))
	}
	// It is written just before the frame the warning brought, after the
	// cursor went back over the previous frame, so no later frame clears it.
	at := strings.Index(got, "⚠ ")
	if before := got[:at]; !strings.HasSuffix(before, "\x1b[J") {
		t.Errorf("the warning does not start where the live area was cleared:\n%s", visible(got))
	}
}
