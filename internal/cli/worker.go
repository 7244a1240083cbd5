package cli

import (
	"os"

	"github.com/trt-action/trt-action/internal/build"
	"golang.org/x/sys/unix"
)

// workerCommand is the hidden subcommand a supervisor starts for each build.
const workerCommand = "__worker"

func runWorker(c *Command, args []string) error {
	// Nothing the library starts may inherit the protocol pipe.
	if _, err := unix.FcntlInt(3, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return usagef("%s is started by trt-action build, not by hand (no protocol pipe: %v)", workerCommand, err)
	}
	return invalid(build.RunWorker(c.Streams.In, os.NewFile(3, "proto")))
}
