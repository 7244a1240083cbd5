package build

import (
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
)

// control stops one build's worker. Its methods are safe from any goroutine,
// so signals and grace timers reach the worker even while the goroutine that
// follows the build is busy (a slow view, a burst of events).
type control struct {
	mu    sync.Mutex
	stdin io.Writer
	pgid  int
	// signal sends a signal to a process group; nil is syscall.Kill on
	// -pgid. Tests put a recorder here.
	signal func(pgid int, sig syscall.Signal) error
	// stopFn, when set, asks for the soft stop instead of a line on stdin
	// (a script build's hook channel).
	stopFn func(why string)

	stopWhy   string        // the first soft stop's reason; "" while none
	stopAt    time.Duration // build clock of the deadline or signal behind it
	killTimer *time.Timer
	killAt    time.Time // when the pending kill fires
	killWhy   string    // what killed the worker; "" while it was not killed
	graceKill bool      // the kill ended a soft stop: its grace ran out, or a memory budget's kill rule
	ended     bool      // the worker has exited: its pid may be reused
}

// softStop asks the worker to stop through the monitor (its stepComplete
// returns false from now on) and arms a kill grace later. A later soft stop,
// such as a signal during a budget's grace, can only bring the kill closer.
// It reports whether this was the first soft stop.
func (c *control) softStop(why string, at, grace time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	first := c.stopWhy == ""
	if first {
		c.stopWhy, c.stopAt = why, at
		if c.stopFn != nil {
			c.stopFn(why)
		} else {
			_, _ = io.WriteString(c.stdin, `{"m":"stop"}`+"\n")
		}
	}
	if due := time.Now().Add(grace); c.killTimer == nil || due.Before(c.killAt) {
		if c.killTimer != nil {
			c.killTimer.Stop()
		}
		c.killAt = due
		c.killTimer = time.AfterFunc(grace, func() {
			c.killFor(fmt.Sprintf("did not stop within its %s grace, so it was killed", grace), true)
		})
	}
	return first
}

// kill ends the worker's whole process group at once, for a reason other
// than a soft stop's grace (a second SIGINT).
func (c *control) kill(why string) { c.killFor(why, false) }

// killOverBudget ends a build a memory budget stopped before its grace
// is over (memwatch.go's kill rule): as the grace running out would, so
// the build is budget-exceeded, not killed.
func (c *control) killOverBudget(why string) { c.killFor(why, true) }

func (c *control) killFor(why string, graceRanOut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.killWhy != "" || c.pgid <= 0 {
		return
	}
	c.killWhy, c.graceKill = why, graceRanOut
	signal := c.signal
	if signal == nil {
		signal = func(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
	}
	_ = signal(c.pgid, syscall.SIGKILL)
}

// exited records that the worker is gone: no timer may signal its pid now.
func (c *control) exited() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	if c.killTimer != nil {
		c.killTimer.Stop()
	}
}

// stopping reports whether a soft stop was asked for.
func (c *control) stopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopWhy != ""
}

// outcome is what control did, for the build's status.
type outcome struct {
	stopWhy   string
	stopAt    time.Duration
	killWhy   string
	graceKill bool // killed to end a soft stop: its grace ran out, or a memory budget's kill rule
}

func (c *control) outcome() outcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return outcome{stopWhy: c.stopWhy, stopAt: c.stopAt, killWhy: c.killWhy, graceKill: c.graceKill}
}
