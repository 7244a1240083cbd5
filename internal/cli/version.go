package cli

import (
	"fmt"
	"runtime"

	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/cache/remote"
	"github.com/trt-action/trt-action/internal/install"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/native"
)

// versionLine is the first line of `trt-action version`, and all that
// `trt-action --version` prints: the version, the Go it was built with,
// the platform.
func versionLine() string {
	return fmt.Sprintf("trt-action %s (%s, %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func runVersion(c *Command, args []string) error {
	fs := c.newFlags("version", "[--trt-lib PATH] [--cache-remote URL]")
	lib := fs.String("trt-lib", "", "probe this TensorRT library `path`")
	var store givenString
	fs.Var(&store, "cache-remote", "name this shared engine cache store (`URL`; default "+remoteEnv+")")
	if err := c.parse(fs, args, map[string]string{"trt-lib": "trt-lib", "cache-remote": "cache-remote"}); err != nil {
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
	c.printUntrusted(c.Streams.Out, storeLine(store, c.Getenv))
	return nil
}

// storeLine names the shared engine cache store a run would use before
// its matrix is read (--cache-remote, else TRT_ACTION_CACHE_REMOTE),
// without credentials, and what is wrong with a URL no store takes; ""
// for none.
func storeLine(flag givenString, getenv func(string) string) string {
	url, from := flag.value, "--cache-remote"
	if !flag.given {
		url, from = getenv(remoteEnv), remoteEnv
	}
	if url == "" {
		return ""
	}
	line := fmt.Sprintf("engine cache store: %s (%s)", remote.Redact(url), from)
	if err := matrix.CheckRemote(url); err != nil {
		line += ": " + err.Error()
	}
	return line + "\n"
}
