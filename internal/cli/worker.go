package cli

import (
	"os"

	"github.com/trt-action/trt-action/internal/build"
)

// workerCommand is the hidden subcommand a supervisor starts for each build.
const workerCommand = "__worker"

func init() {
	register(workerCommand, subcommand{hidden: true, summary: "run one build (internal)", run: runWorker})
}

func runWorker(c *Command, args []string) (int, error) {
	proto := os.NewFile(3, "proto")
	if proto == nil {
		return ExitInvalid, usagef("%s is started by trt-action build, not by hand", workerCommand)
	}
	return build.RunWorker(c.Streams.In, proto), nil
}
