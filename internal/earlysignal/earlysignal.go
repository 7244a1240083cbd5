// Package earlysignal catches SIGINT and SIGTERM from the start of the
// process, so a signal sent right after the process starts is held for the
// command instead of ending the process by the default action, before any
// report is written. The command then either handles the signals (Claim) or
// gives them their default action back (Release).
//
// With cgo, a C constructor (hold.c) catches them from before the Go runtime
// starts, and this package's init takes them over once os/signal delivers
// them here: no moment is left in which Go's default action applies. Without
// cgo, catching starts with this package's init.
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

// caught holds the signals until a command claims or releases them. Four
// is plenty: the second SIGINT is the last that changes anything.
var caught = make(chan os.Signal, 4)

func init() {
	// Notify first: a signal that comes while the hold ends then reaches
	// caught through the hold or through Go, never through neither.
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM)
	for _, sig := range endHold() {
		select {
		case caught <- sig:
		default:
		}
	}
}

// Claim returns the signals caught since the start and from now on; the
// caller must act on them. stop ends the catching.
func Claim() (signals <-chan os.Signal, stop func()) {
	return caught, func() { signal.Stop(caught) }
}

// Release gives SIGINT and SIGTERM their default action back, for a command
// that does not handle them; a signal caught meanwhile is raised again, so
// it ends the process as it would have without this package.
func Release() {
	signal.Stop(caught)
	for {
		select {
		case sig := <-caught:
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		default:
			return
		}
	}
}
