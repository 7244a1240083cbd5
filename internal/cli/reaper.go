package cli

import (
	"os"

	"github.com/trt-action/trt-action/internal/build"
	"golang.org/x/sys/unix"
)

// reaperCommand is the hidden subcommand a supervisor starts for each
// script build: it runs the build's command (the words after "--") and
// ends every process of it (internal/build/reaper.go).
const reaperCommand = "__reaper"

func runReaper(c *Command, args []string) error {
	if len(args) == 0 || args[0] != "--" {
		return usagef("%s is started by trt-action for a script build, not by hand: %s -- COMMAND...", reaperCommand, reaperCommand)
	}
	// Nothing the command starts may inherit the result pipe.
	if _, err := unix.FcntlInt(3, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return usagef("%s is started by trt-action, not by hand (no result pipe: %v)", reaperCommand, err)
	}
	return build.RunReaper(args[1:], c.Streams.In, os.NewFile(3, "result"), c.signals)
}
