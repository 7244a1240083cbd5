//go:build cgo

package earlysignal

/*
#cgo LDFLAGS: -ldl -lpthread
#include "hold.h"
*/
import "C"

import (
	"os"
	"syscall"
)

// endHold hands SIGINT and SIGTERM from the C hold (hold.c) to Go's
// handler, which Notify has made deliver them to caught, and returns the
// signals the hold caught since the process started, oldest first.
func endHold() []os.Signal {
	var buf [C.TAM_HOLD_MAX]C.int
	n := int(C.tam_hold_release(&buf[0], C.TAM_HOLD_MAX))
	sigs := make([]os.Signal, n)
	for i := range n {
		sigs[i] = syscall.Signal(buf[i])
	}
	return sigs
}
