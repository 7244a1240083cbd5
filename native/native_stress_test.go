//go:build cgo && trtaction_stress

package native

// Tests and benchmarks of the monitor under load from C++ threads. The load
// generators (stress.go, stress.cc, export.go) are compiled only with the
// trtaction_stress tag, so the shipped binary holds none of them;
// scripts/test and scripts/bench pass it.

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/trace"
)

// drainWhile drains m every millisecond until stop is closed, then once more.
func drainWhile(m *monitor, stop <-chan struct{}) <-chan []trace.Event {
	out := make(chan []trace.Event, 1)
	go func() {
		var all []trace.Event
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				out <- m.drain(all)
				return
			case <-tick.C:
				all = m.drain(all)
			}
		}
	}()
	return out
}

func TestMonitorHammer8Threads(t *testing.T) {
	const threads, iters = 8, 20000
	m, err := newMonitor()
	if err != nil {
		t.Fatal(err)
	}
	defer m.free()
	stop := make(chan struct{})
	drained := drainWhile(m, stop)
	res := m.stress(threads, iters)
	close(stop)
	events := <-drained

	perThread := threads * (iters + 4) // two starts, iters steps, two finishes
	if len(events) != perThread {
		t.Fatalf("drained %d events, want %d", len(events), perThread)
	}
	st := m.stats()
	if st.Callbacks != int64(perThread) || st.Dropped != 0 {
		t.Errorf("stats = %+v, want %d callbacks and none dropped", st, perThread)
	}
	if res.stopped != 0 {
		t.Errorf("%d threads saw a refused step without a cancel", res.stopped)
	}
	if st.LastCallback < events[len(events)-1].T {
		t.Errorf("LastCallback %v is before the newest event at %v", st.LastCallback, events[len(events)-1].T)
	}

	byThread := map[int][]trace.Event{}
	for _, ev := range events {
		byThread[ev.Thread] = append(byThread[ev.Thread], ev)
	}
	if len(byThread) != threads {
		t.Fatalf("events came from %d thread numbers, want %d", len(byThread), threads)
	}
	for num, evs := range byThread {
		if num < 1 || num > threads {
			t.Errorf("thread number %d outside 1..%d", num, threads)
		}
		checkStressChain(t, num, evs, iters)
	}
}

// checkStressChain checks one stress thread's events arrived complete and in
// the order it made them.
func checkStressChain(t *testing.T, num int, evs []trace.Event, iters int) {
	t.Helper()
	if len(evs) != iters+4 {
		t.Errorf("thread %d: %d events, want %d", num, len(evs), iters+4)
		return
	}
	root, leaf := evs[0].Phase, evs[1].Phase
	if !strings.HasPrefix(root, "Stress thread ") || leaf != strings.Replace(root, "thread", "steps", 1) {
		t.Errorf("thread %d: phases %q > %q, want a matching Stress thread/steps pair", num, root, leaf)
	}
	want := []trace.Event{{Kind: trace.Start, Phase: root, Steps: 1}, {Kind: trace.Start, Phase: leaf, Parent: root, Steps: iters}}
	for i := 0; i < iters; i++ {
		want = append(want, trace.Event{Kind: trace.Step, Phase: leaf, Step: i})
	}
	want = append(want, trace.Event{Kind: trace.Finish, Phase: leaf}, trace.Event{Kind: trace.Finish, Phase: root})
	for i := range want {
		got := evs[i]
		if i > 0 && got.T < evs[i-1].T {
			t.Errorf("thread %d: event %d at %v is before event %d at %v", num, i, got.T, i-1, evs[i-1].T)
			return
		}
		got.T, got.Thread = 0, 0
		if got != want[i] {
			t.Errorf("thread %d: event %d = %+v, want %+v", num, i, got, want[i])
			return
		}
	}
}

// cancelStressThreads and cancelStressIters bound the cancel test's load:
// 8 × (60,000 + 4) events stay under the monitor's 524,288-event queue even
// if nothing drained, so no finish can be lost to an overflow.
const cancelStressThreads, cancelStressIters = 8, 60_000

func TestMonitorCancelStopsEveryThread(t *testing.T) {
	// The stress takes ~20 ms, so on a loaded machine the cancel can land after
	// some thread already finished every step; such a run proves nothing
	// either way and is repeated. A cancel that never stops a thread makes
	// every run inconclusive and fails below.
	const attempts = 8
	for i := 0; i < attempts; i++ {
		if cancelMidStress(t) {
			return
		}
	}
	t.Fatalf("in %d runs no cancel stopped the stress threads before one of them finished every step", attempts)
}

// cancelMidStress cancels the monitor while cancelStressThreads threads step
// through it, checks what they reported, and returns false when the run was
// inconclusive (a thread was not stopped because it had already finished).
func cancelMidStress(t *testing.T) bool {
	t.Helper()
	const threads, iters = cancelStressThreads, cancelStressIters
	m, err := newMonitor()
	if err != nil {
		t.Fatal(err)
	}
	defer m.free()
	stop := make(chan struct{})
	drained := drainWhile(m, stop)
	done := make(chan stressResult, 1)
	go func() { done <- m.stress(threads, iters) }()

	waitFor(t, 30*time.Second, "1000 stress callbacks", func() bool { return m.stats().Callbacks >= 1000 }, runtime.Gosched)
	m.cancel()
	var res stressResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stress threads still running 10s after cancel")
	}
	close(stop)
	events := <-drained

	steps := map[int]int{}
	finishes := 0
	for _, ev := range events {
		switch ev.Kind {
		case trace.Step:
			steps[ev.Thread]++
		case trace.Finish:
			finishes++
		}
	}
	st := m.stats()
	if st.Dropped != 0 || st.Callbacks != int64(len(events)) {
		t.Fatalf("stats %+v, want %d callbacks (the drained events) and none dropped", st, len(events))
	}
	if finishes != 2*threads {
		t.Errorf("%d finish events after cancel, want %d", finishes, 2*threads)
	}
	if res.stopped == threads {
		return true
	}
	for _, n := range steps {
		if n == iters {
			t.Logf("a thread finished all its steps (%d of %d threads stopped): the cancel came late or was ignored; retrying", res.stopped, threads)
			return false
		}
	}
	t.Errorf("%d of %d threads saw step_complete return 0, yet none finished its %d steps", res.stopped, threads, iters)
	return true
}

// ---------------------------------------------------------------- benchmarks

// benchRound is how many callbacks one timed round makes: half the queue,
// so a round never overflows it and the figures are those of the full path,
// not of the cheaper drop path.
const benchRound = 256 << 10

// benchStress runs b.N callbacks split over threads, in rounds, while a
// goroutine drains every millisecond as the worker does (every 10ms). It
// reports wall time per callback: all threads' callbacks over the time they
// took together.
func benchStress(b *testing.B, threads int, run func(iters int) stressResult, drainQueue func()) {
	var drainMu sync.Mutex // the drainer goroutine and the between-rounds drain share buffers
	drain := func() {
		drainMu.Lock()
		defer drainMu.Unlock()
		drainQueue()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				drain()
			}
		}
	}()
	var wall time.Duration
	calls := 0
	b.ResetTimer()
	for left := b.N; left > 0; left -= benchRound {
		iters := min(left, benchRound)/threads + 1
		wall += run(iters).wall
		calls += threads * (iters + 4)
		b.StopTimer()
		drain() // empty the queue between rounds, untimed
		b.StartTimer()
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(wall)/float64(calls), "wall-ns/callback")
}

func benchNative(b *testing.B, threads int) {
	m, err := newMonitor()
	if err != nil {
		b.Fatal(err)
	}
	defer m.free()
	var buf []trace.Event
	benchStress(b, threads, func(iters int) stressResult { return m.stress(threads, iters) }, func() { buf = m.drain(buf[:0]) })
	if d := m.stats().Dropped; d != 0 {
		b.Errorf("%d callbacks dropped; the figures include the drop path", d)
	}
}

func BenchmarkStepComplete8Threads(b *testing.B) { benchNative(b, 8) }

func BenchmarkStepComplete1Thread(b *testing.B) { benchNative(b, 1) }

func BenchmarkStepCompleteNaiveGo8Threads(b *testing.B) {
	nm := &naiveMonitor{born: time.Now()}
	var buf []trace.Event
	benchStress(b, 8, func(iters int) stressResult { return stressNaive(nm, 8, iters) }, func() { buf = nm.take(buf[:0]) })
}
