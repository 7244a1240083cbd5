// Command trt-action builds TensorRT engines from a build matrix and makes
// every build observable and cancelable.
package main

import (
	"os"

	"github.com/trt-action/trt-action/internal/cli"
)

func main() {
	os.Exit(cli.New().Main(os.Args[1:]))
}
