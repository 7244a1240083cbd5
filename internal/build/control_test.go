package build

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// killRecorder stands in for the worker's process group.
type killRecorder struct {
	mu    sync.Mutex
	kills []int
	fired chan struct{}
}

func newControl(t *testing.T) (*control, *strings.Builder, *killRecorder) {
	t.Helper()
	var stdin strings.Builder
	rec := &killRecorder{fired: make(chan struct{}, 4)}
	c := &control{stdin: &stdin, pgid: 4242, signal: func(pgid int, sig syscall.Signal) error {
		if sig != syscall.SIGKILL {
			t.Errorf("signal %v, want SIGKILL", sig)
		}
		rec.mu.Lock()
		rec.kills = append(rec.kills, pgid)
		rec.mu.Unlock()
		rec.fired <- struct{}{}
		return nil
	}}
	return c, &stdin, rec
}

func (r *killRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.kills)
}

// The first soft stop asks the worker once and keeps its reason; a later
// one only brings the kill closer.
func TestControlSoftStopOnceThenKillAfterGrace(t *testing.T) {
	c, stdin, rec := newControl(t)
	if !c.softStop("budget", 3*time.Second, time.Hour) {
		t.Fatal("first soft stop reported as not first")
	}
	if c.softStop("interrupted by SIGINT", 5*time.Second, 20*time.Millisecond) {
		t.Error("second soft stop reported as first")
	}
	if got := stdin.String(); got != `{"m":"stop"}`+"\n" {
		t.Errorf("worker was sent %q, want one stop line", got)
	}
	select {
	case <-rec.fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the shorter grace of the second stop did not kill the worker")
	}
	o := c.outcome()
	if o.stopWhy != "budget" || o.stopAt != 3*time.Second {
		t.Errorf("stop kept as %q at %v, want the first one", o.stopWhy, o.stopAt)
	}
	if !strings.Contains(o.killWhy, "20ms grace") {
		t.Errorf("kill reason %q does not name the grace that ran out", o.killWhy)
	}
	if rec.kills[0] != 4242 {
		t.Errorf("killed group %d, want 4242", rec.kills[0])
	}
}

// A later soft stop with a longer grace does not put the kill off.
func TestControlLongerGraceDoesNotDelayKill(t *testing.T) {
	c, _, rec := newControl(t)
	c.softStop("stalled", 0, 20*time.Millisecond)
	c.softStop("interrupted by SIGINT", 0, time.Hour)
	select {
	case <-rec.fired:
	case <-time.After(10 * time.Second):
		t.Fatal("a longer second grace delayed the kill")
	}
}

// A worker is killed once, for the first reason, and never after it exited:
// its pid may belong to someone else by then.
func TestControlKillOnceAndNeverAfterExit(t *testing.T) {
	c, _, rec := newControl(t)
	c.kill("killed by a second SIGINT")
	c.kill("did not stop within its 1s grace, so it was killed")
	if rec.count() != 1 || c.outcome().killWhy != "killed by a second SIGINT" {
		t.Errorf("%d kills, reason %q; want 1 for the first reason", rec.count(), c.outcome().killWhy)
	}

	c, stdin, rec := newControl(t)
	c.softStop("budget", 0, 20*time.Millisecond)
	c.exited()
	time.Sleep(100 * time.Millisecond) // well past the grace
	c.kill("late")
	if c.softStop("late", 0, 0) {
		t.Error("a soft stop after exit counted as first")
	}
	if rec.count() != 0 || c.outcome().killWhy != "" {
		t.Errorf("an exited worker's group was signalled %d times (%q)", rec.count(), c.outcome().killWhy)
	}
	if strings.Count(stdin.String(), "stop") != 1 {
		t.Errorf("stop lines after exit: %q", stdin.String())
	}
	if !c.stopping() {
		t.Error("the stop asked before exit was forgotten")
	}
}

// Without a process group (the worker never started) nothing is signalled.
func TestControlKillWithoutGroup(t *testing.T) {
	c, _, rec := newControl(t)
	c.pgid = 0
	c.kill("x")
	if rec.count() != 0 {
		t.Error("signalled group 0: that is the supervisor's own group")
	}
}
