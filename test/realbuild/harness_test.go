package realbuild

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// These tests run bin/trt-action as a user would (os/exec, a fresh temp dir
// each) and build real engines with TensorRT-RTX on the CPU. They need:
//
//	TRT_ACTION_BIN          the binary (default ../../bin/trt-action)
//	TRT_ACTION_BACKEND_DIR  folder of libtam_rtx.so (default ../../bin/lib)
//	TRT_ACTION_TEST_MODELS  scripts/make-test-models output (default ../../testdata/models)
//	the TensorRT-RTX libraries on LD_LIBRARY_PATH or in TRT_ACTION_RTX_LIB
//	(eval "$(scripts/setup-tensorrt-rtx)" exports them).
//
// Missing prerequisites skip the tests, except in CI (CI set, or
// TRT_ACTION_REQUIRE_RTX=1), where they are failures. Under -short (make
// check, the fast loop) the tests that build real engines skip, except in
// CI, where -short changes nothing.

// runTimeout bounds one binary run; the slowest build here takes seconds.
const runTimeout = 3 * time.Minute

// env is what a test needs to run the binary.
type env struct {
	bin    string
	models string // folder of the test models
	vars   []string
}

// inCI is CI set, or TRT_ACTION_REQUIRE_RTX=1 (make test sets it): there
// the set-up must have provided every prerequisite, and nothing skips.
func inCI() bool {
	return os.Getenv("TRT_ACTION_REQUIRE_RTX") == "1" || os.Getenv("CI") != ""
}

// prerequisite skips the test, or fails it in CI.
func prerequisite(t *testing.T, format string, args ...any) {
	t.Helper()
	if inCI() {
		t.Fatalf("in CI, yet "+format, args...)
	}
	t.Skipf("skipped: "+format+" (see test/realbuild/harness_test.go for the set-up)", args...)
}

// pathFromEnv reads an absolute path from key, or def relative to this folder.
func pathFromEnv(t *testing.T, key, def string) string {
	t.Helper()
	p := os.Getenv(key)
	if p == "" {
		p = def
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// binaryEnv finds the binary; enough for simulator-only tests.
func binaryEnv(t *testing.T) env {
	t.Helper()
	e := env{
		bin:    pathFromEnv(t, "TRT_ACTION_BIN", "../../bin/trt-action"),
		models: pathFromEnv(t, "TRT_ACTION_TEST_MODELS", "../../testdata/models"),
	}
	backends := pathFromEnv(t, "TRT_ACTION_BACKEND_DIR", "../../bin/lib")
	e.vars = append(os.Environ(), "TRT_ACTION_BACKEND_DIR="+backends)
	if _, err := os.Stat(e.bin); err != nil {
		prerequisite(t, "no trt-action binary (%v); run make build or set TRT_ACTION_BIN", err)
	}
	return e
}

// rtxEnv also checks that the binary can build with tensorrt-rtx here and
// that the test models exist.
func rtxEnv(t *testing.T) env {
	t.Helper()
	if testing.Short() && !inCI() {
		t.Skip("builds real engines: not under -short (make check); make test runs it")
	}
	e := binaryEnv(t)
	out, err := e.command(context.Background(), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("trt-action version: %v\n%s", err, out)
	}
	if line := rtxLine(string(out)); !strings.Contains(line, "; library ") {
		prerequisite(t, "tensorrt-rtx cannot build here: %q", strings.TrimSpace(line))
	}
	for _, m := range []string{"mlp", "cnn", "dynamic", "rejected", "slow"} {
		if _, err := os.Stat(e.model(m)); err != nil {
			prerequisite(t, "test model missing (%v); run scripts/make-test-models %s", err, e.models)
		}
	}
	return e
}

// rtxLine is the tensorrt-rtx line of `trt-action version`.
func rtxLine(version string) string {
	for _, line := range strings.Split(version, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "tensorrt-rtx ") {
			return line
		}
	}
	return ""
}

func (e env) model(name string) string { return filepath.Join(e.models, name+".onnx") }

func (e env) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = e.vars
	return cmd
}

// run is one finished (or started) `trt-action build` in its own folder.
type run struct {
	dir    string // temp dir: matrix.yml, out/, traces/, report.json
	code   int
	output string // stdout and stderr
}

func (r run) reportPath() string        { return filepath.Join(r.dir, "report.json") }
func (r run) tracePath(b string) string { return filepath.Join(r.dir, "traces", b+".jsonl") }
func (r run) outDir() string            { return filepath.Join(r.dir, "out") }

// newRun writes the matrix (whose "OUT" is replaced by the run's output
// folder) into a fresh temp dir.
func newRun(t *testing.T, matrix string) run {
	t.Helper()
	r := run{dir: t.TempDir()}
	matrix = strings.ReplaceAll(matrix, "OUT", r.outDir())
	if err := os.WriteFile(filepath.Join(r.dir, "matrix.yml"), []byte(matrix), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

func (e env) buildCommand(ctx context.Context, r run) *exec.Cmd {
	return e.command(ctx, "build", "-f", filepath.Join(r.dir, "matrix.yml"),
		"--report", r.reportPath(), "--record-trace", filepath.Join(r.dir, "traces"))
}

// build runs the matrix to the end.
func (e env) build(t *testing.T, matrix string) run {
	t.Helper()
	r := newRun(t, matrix)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	out, err := e.buildCommand(ctx, r).CombinedOutput()
	r.output = string(out)
	r.code = exitCode(t, err, r.output)
	return r
}

func exitCode(t *testing.T, err error, output string) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode()
	default:
		t.Fatalf("trt-action did not exit normally: %v\n%s", err, output)
		return -1
	}
}

// report reads and decodes the run's JSON report.
func (r run) report(t *testing.T) report.Report {
	t.Helper()
	data, err := os.ReadFile(r.reportPath())
	if err != nil {
		t.Fatalf("no report: %v\noutput:\n%s", err, r.output)
	}
	var rep report.Report
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("report.json does not decode into report.Report: %v", err)
	}
	if rep.Version != report.SchemaVersion {
		t.Errorf("report version %d, want %d", rep.Version, report.SchemaVersion)
	}
	return rep
}

// build finds one build of the report by name.
func findBuild(t *testing.T, rep report.Report, name string) report.Build {
	t.Helper()
	for _, b := range rep.Builds {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("report has no build %q", name)
	return report.Build{}
}
