package cli

import (
	"fmt"
	"runtime"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/install"
	"github.com/trt-action/trt-action/native"
)

// versionLine is the first line of `trt-action version`, and all that
// `trt-action --version` prints: the version, the Go it was built with,
// the platform.
func versionLine() string {
	return fmt.Sprintf("trt-action %s (%s, %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func runVersion(c *Command, args []string) error {
	fs := c.newFlags("version", "[--trt-lib PATH]")
	lib := fs.String("trt-lib", "", "probe this TensorRT library `path`")
	if err := c.parse(fs, args, map[string]string{"trt-lib": "trt-lib"}); err != nil {
		return err
	}
	fmt.Fprintf(c.Streams.Out, "%s\ninstalled: %s\nbackends:\n", versionLine(), install.Current().Describe())
	for _, b := range backend.All() {
		if b.Simulated {
			fmt.Fprintf(c.Streams.Out, "  %-14s built in\n", b.Name)
		}
	}
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
