// Command generate writes the files made from the builder settings table
// and the backend registry: the backends' C++ headers and the matrix
// file's JSON Schema. Run it with go generate ./internal/settings; the
// tests of internal/settings and internal/matrix fail when a generated
// file differs from what it would write.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/settings"
)

func main() {
	root := flag.String("root", "../..", "the repository's root folder")
	flag.Parse()
	files := settings.Headers()
	schema, err := matrix.GenerateSchema(matrix.SchemaBase)
	if err != nil {
		fail(err)
	}
	files = append(files, settings.Generated{Path: "internal/matrix/schema.json", Content: schema})
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(*root, f.Path), f.Content, 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "generate:", err)
	os.Exit(1)
}
