// Command genschema writes the matrix file's JSON Schema, schema.json,
// from schema.base.json, the builder settings table and the backend
// registry (matrix.GenerateSchema). Run it with go generate
// ./internal/matrix after a change to any of them (a new setting: after
// go generate ./internal/settings, which writes the backends' headers);
// matrix's TestSchemaIsGenerated fails while schema.json is stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/trt-action/trt-action/internal/matrix"
)

func main() {
	out := flag.String("out", "schema.json", "the file to write")
	flag.Parse()
	schema, err := matrix.GenerateSchema(matrix.SchemaBase)
	if err == nil {
		err = os.WriteFile(*out, schema, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(1)
	}
}
