// Package nvmltest builds a stand-in for the NVIDIA driver's NVML library
// (fakenvml.c) for tests: it exports the functions trt-action resolves,
// with NVML's signatures, and reports the GPU processes its environment
// names. Only tests import it.
package nvmltest

import (
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

//go:embed src/fakenvml.c
var source []byte

// Variants of the stand-in.
const (
	Current = ""               // the _v2/_v3 functions of current drivers
	V1      = "-DFAKE_NVML_V1" // only the unversioned functions of old drivers
)

// Build compiles the stand-in (variant Current or V1) into a folder of the
// test's and returns the library's path, named as the driver names NVML.
// With CI set, a missing C compiler fails the test rather than skip it.
func Build(t testing.TB, variant string) string {
	t.Helper()
	cmd := strings.Fields(os.Getenv("CC"))
	if len(cmd) == 0 {
		cmd = []string{"cc"}
	}
	cc, err := exec.LookPath(cmd[0])
	if err != nil {
		if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
			t.Fatalf("no C compiler %q to build the NVML stand-in: %v", cmd[0], err)
		}
		t.Skipf("no C compiler %q to build the NVML stand-in: %v", cmd[0], err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "fakenvml.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libnvidia-ml.so.1")
	args := slices.Concat(cmd[1:], []string{"-shared", "-fPIC", "-Wall", "-Werror", "-o", so, src})
	if variant != Current {
		args = append(args, variant)
	}
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building the NVML stand-in: %v\n%s", err, out)
	}
	return so
}
