package cli

import (
	"errors"
	"strings"
	"testing"
)

// A trtexec line written for TensorRT 8.x still builds; what it holds that
// TensorRT 10 removed, and what only matters when trtexec runs the engine,
// reaches validate, plan and build as warnings at the line's position.
func TestTrtexecWarningsReachValidatePlanAndBuild(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\nbuilds:\n" +
		"  - {name: a, backend: sim, sim: {step: 0s}, trtexec: \"trtexec --explicitBatch --iterations=10 --workspace=64\"}\n"})
	want := []string{
		"trt-builds.yml:3:55: warning: trtexec: --explicitBatch: removed in TensorRT 10, where explicit batch is always on; ignored\n",
		"trt-builds.yml:3:55: warning: trtexec: --workspace is removed in TensorRT 10, replaced by --memPoolSize=workspace:N; read as memory-pools.workspace\n",
		"trt-builds.yml:3:55: warning: trtexec: ignored (they only matter when trtexec runs the engine): --iterations\n",
	}
	for _, args := range [][]string{{"validate"}, {"plan"}, {"build", "--report", "r.json", "--summary", "s.md"}} {
		c, out, errb := userCommand("")
		wantCode := ExitOK
		if args[0] == "build" {
			// The warnings come before any build starts: the run stops
			// where it would start its first worker.
			c.Executable = func() (string, error) { return "", errors.New("no workers in this test") }
			wantCode = ExitFailed
		}
		if code := c.Main(args); code != wantCode {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errb)
		}
		for _, w := range want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, w, errb)
			}
		}
	}
}
