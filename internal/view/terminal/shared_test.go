package terminal

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/report/reporttest"
)

// sharedStateAt is the Shared run's state after its events up to at.
func sharedStateAt(at time.Duration) runState {
	var st runState
	for _, e := range reporttest.SharedEvents(reporttest.Shared(), reporttest.SharedStopped) {
		if e.At > at || e.Kind == event.RunFinished {
			break
		}
		st.apply(e)
	}
	st.Now = at
	return st
}

// A pull shows its bytes, rate and time left on its build's line; a push
// that outlives its build has a line of its own until it ends.
func TestTransfersOnTheLiveAreaGolden(t *testing.T) {
	pulling := frame(renderState(sharedStateAt(5*time.Second), 100, false))
	pushing := frame(renderState(sharedStateAt(16*time.Second), 100, false))
	checkGolden(t, "render_shared", "at 5s:\n"+pulling+"at 16s:\n"+pushing)
	if want := "▶ resnet-fp16 5.0s · ⇣ 437.8 MB/1.2 GB · 87.6 MB/s · 9.1s left\n"; !strings.Contains(pulling, want) {
		t.Errorf("no pull on the build's line %q:\n%s", want, pulling)
	}
	if want := "⇡ yolo_v8 pushing 20.9 MB/48.0 MB · 20.9 MB/s · 1.3s left\n"; !strings.Contains(pushing, want) {
		t.Errorf("no push line %q:\n%s", want, pushing)
	}
	done := frame(renderState(sharedStateAt(20*time.Second), 100, false))
	if strings.Contains(done, "yolo_v8 pushing") || strings.Contains(done, "⇣") {
		t.Errorf("a transfer that ended is still shown:\n%s", done)
	}
}

func TestTransferFramesFitEveryWidth(t *testing.T) {
	for _, at := range []time.Duration{5 * time.Second, 16 * time.Second} {
		st := sharedStateAt(at)
		for w := 10; w <= 130; w++ {
			assertFits(t, renderState(st, w, true), w)
		}
	}
}

// What the store said stays text: the final table shows a remote hit as
// from the shared cache, and a transfer's hostile error cannot move the
// cursor or colour the screen.
func TestViewOfASharedStoreRun(t *testing.T) {
	stopped := map[string]string{"resnet-fp16": "\x1b[2J\x1b[31mcleared\r::error::x"}
	var buf bytes.Buffer
	v := New(&buf, Options{Width: func() int { return 120 }, Height: func() int { return 30 }})
	for _, e := range reporttest.SharedEvents(reporttest.HostileShared(), stopped) {
		v.Handle(e)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	if strings.Contains(got, "\x1b[2J") || strings.Contains(got, "\x1b[31mcleared") {
		t.Errorf("text from the store reached the terminal raw:\n%s", visible(got))
	}
	if !strings.Contains(got, "cached: from the shared cache, built") {
		t.Errorf("the final table does not say the hit came from the shared cache:\n%s", visible(got))
	}
}
