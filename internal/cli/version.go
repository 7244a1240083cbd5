package cli

import (
	"fmt"
	"runtime"

	"github.com/trt-action/trt-action/native"
)

func runVersion(c *Command, args []string) error {
	fs := c.newFlags("version", "[--trt-lib PATH]")
	lib := fs.String("trt-lib", "", "probe this TensorRT library `path`")
	if err := c.parse(fs, args, map[string]string{"trt-lib": "trt-lib"}); err != nil {
		return err
	}
	fmt.Fprintf(c.Streams.Out, "trt-action %s (%s, %s/%s)\nbackends:\n  sim            built in\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	missing := false
	for _, b := range native.CompiledBackends(*lib) {
		fmt.Fprintf(c.Streams.Out, "  %-14s %s\n", b.Name, b.Describe())
		missing = missing || b.Path == ""
	}
	if missing {
		fmt.Fprintf(c.Streams.Out, "backend folders: %s\n", native.SearchedDirs(native.BackendDirs()))
	}
	return nil
}
