// Command generate writes the files made from the builder settings table
// and the backend registry for the backends: their C++ headers
// (settings.Headers). Run it with go generate ./internal/settings; the
// tests of internal/settings fail when a generated file differs from what
// it would write. The matrix file's JSON Schema, made from the same table,
// is internal/matrix's own (go generate ./internal/matrix): this command
// imports nothing above internal/settings.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trt-action/trt-action/internal/settings"
)

func main() {
	root := flag.String("root", "../..", "the repository's root folder")
	flag.Parse()
	for _, f := range settings.Headers() {
		if err := os.WriteFile(filepath.Join(*root, f.Path), f.Content, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "generate:", err)
			os.Exit(1)
		}
	}
}
