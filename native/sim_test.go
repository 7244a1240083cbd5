//go:build cgo

package native

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/trace"
)

// voluntarySwitches counts the times this process's threads blocked (in a
// sleep, a futex, a read): each is a system call that gave up the CPU.
func voluntarySwitches(t *testing.T) int64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Nvcsw
}

// An unpaced replay of a repeated trace delivers every event, in order,
// from several threads, without blocking per callback: turns pass in runs.
func TestSimUnpacedRepeatsWithoutBlockingPerCallback(t *testing.T) {
	one := trace.Default()
	const repeat = 20
	total := len(one) * repeat
	before := voluntarySwitches(t)
	b, err := StartSim(simRequest(t, one, SimRequest{Unpaced: true, Repeat: repeat, Threads: 4}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, logs, res := runToEnd(t, b, 60*time.Second)
	switches := voluntarySwitches(t) - before
	if res.Status != OK {
		t.Fatalf("result = %+v", res)
	}
	if len(events) != total || b.Stats().Dropped != 0 {
		t.Fatalf("%d events (%d dropped), want %d", len(events), b.Stats().Dropped, total)
	}
	threads := map[int]bool{}
	for i, ev := range events {
		threads[ev.Thread] = true
		want := one[i%len(one)]
		ev.T, ev.Thread, want.Thread = 0, 0, 0
		if ev != want {
			t.Fatalf("event %d = %+v, want %+v", i, ev, want)
		}
	}
	if len(threads) != 4 {
		t.Errorf("callbacks from %d threads, want 4", len(threads))
	}
	if want := fmt.Sprintf("simulating %d callbacks on 4 threads", total); len(logs) == 0 || logs[0].Text != want {
		t.Errorf("logs = %+v, want %q first", logs, want)
	}
	if switches > int64(total/20) {
		t.Errorf("%d voluntary context switches for %d callbacks: the replay blocks per callback", switches, total)
	}
}

// Pacing finer than a millisecond sleeps per millisecond, not per callback,
// and keeps the schedule.
func TestSimFinePacingSleepsPerMillisecond(t *testing.T) {
	const steps, step = 20_000, 10 * time.Microsecond
	before := voluntarySwitches(t)
	b, err := StartSim(simRequest(t, longTrace(steps), SimRequest{StepNs: int64(step), Threads: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	events, _, res := runToEnd(t, b, 60*time.Second)
	switches := voluntarySwitches(t) - before
	if res.Status != OK || len(events) != steps+4 {
		t.Fatalf("result %+v with %d events", res, len(events))
	}
	if last, want := events[len(events)-1].T, time.Duration(steps)*step-time.Millisecond; last < want {
		t.Errorf("last event at %v, want the schedule kept (at least %v)", last, want)
	}
	if switches > steps/5 {
		t.Errorf("%d voluntary context switches for %d callbacks 10µs apart: pacing sleeps per callback", switches, steps)
	}
}
