package cli

import (
	"fmt"
	"runtime"

	"github.com/trt-action/trt-action/native"
)

func init() {
	register("version", subcommand{summary: "print the version and the backends compiled in", run: runVersion})
}

func runVersion(c *Command, args []string) (int, error) {
	fs := c.newFlags("version", "[--trt-lib PATH]")
	lib := fs.String("trt-lib", "", "probe this TensorRT library `path`")
	if err := c.parse(fs, args, map[string]string{"trt-lib": "trt-lib"}); err != nil {
		return ExitInvalid, err
	}
	fmt.Fprintf(c.Streams.Out, "trt-action %s (%s, %s/%s)\nbackends:\n  sim            built in\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, b := range native.CompiledBackends(*lib) {
		fmt.Fprintf(c.Streams.Out, "  %-14s %s\n", b.Name, b.Describe())
	}
	return ExitOK, nil
}
