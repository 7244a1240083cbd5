// Package earlysignal catches SIGINT and SIGTERM from the start of the
// process. Its init runs before the packages that take milliseconds to
// initialise, so a signal sent right after the process starts is held for
// the command instead of ending the process by the default action, before
// any report is written. The command then either handles the signals
// (Claim) or gives them their default action back (Release).
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
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM)
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
