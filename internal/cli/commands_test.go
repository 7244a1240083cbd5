package cli

// Tests of the commands as a user types them: arguments, usage errors and
// what each command prints.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/report"
)

// userCommand is a Command on buffers, outside Actions, with stdin in.
func userCommand(in string) (*Command, *bytes.Buffer, *bytes.Buffer) {
	c, out, errb := fanoutCommand(nil)
	c.Streams.In = strings.NewReader(in)
	return c, out, errb
}

// inDir writes files (name to content) into a new folder and makes it the
// working folder for the test.
func inDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return dir
}

const (
	goodMatrix = "version: 1\nbuilds:\n  - {name: a, backend: sim}\n"
	badMatrix  = "version: 1\nbuilds:\n  - {name: a, backend: cuda}\n"
	// modelMatrix names a model that is not there, as on the fan-out's
	// plan and merge machines.
	modelMatrix = "version: 1\nbuilds:\n  - {name: m, backend: tensorrt-rtx, onnx: models/absent.onnx}\n"
)

func TestMatrixFileAsArgumentIsTheFileRead(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": goodMatrix, "bad.yml": badMatrix, "other.yml": goodMatrix})
	for _, verb := range []string{"validate", "plan"} {
		c, out, errb := userCommand("")
		if code := c.Main([]string{verb, "bad.yml"}); code != ExitInvalid {
			t.Errorf("%s bad.yml: exit %d, want %d\n%s%s", verb, code, ExitInvalid, out, errb)
		}
		if !strings.HasPrefix(errb.String(), "bad.yml:3:") {
			t.Errorf("%s bad.yml: the error must be bad.yml's, got:\n%s", verb, errb)
		}
	}
	c, out, _ := userCommand("")
	if code := c.Main([]string{"validate", "other.yml"}); code != ExitOK || out.String() != "other.yml: ok, 1 build\n" {
		t.Errorf("validate other.yml: exit %d, %q", code, out)
	}
}

func TestMatrixFileGivenTwiceIsRefused(t *testing.T) {
	inDir(t, map[string]string{"a.yml": goodMatrix, "b.yml": goodMatrix})
	for _, args := range [][]string{
		{"validate", "-f", "a.yml", "b.yml"}, {"plan", "-f", "a.yml", "b.yml"}, {"build", "-f", "a.yml", "b.yml"},
		{"validate", "a.yml", "b.yml"},
	} {
		c, _, errb := userCommand("")
		if code := c.Main(args); code != ExitInvalid {
			t.Errorf("%v: exit %d, want %d", args, code, ExitInvalid)
		}
		if !strings.Contains(errb.String(), "b.yml") {
			t.Errorf("%v: the error must name the ignored file:\n%s", args, errb)
		}
	}
}

func TestPlanAndMergeNeedNoModelButValidateChecksIt(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": modelMatrix})
	c, out, errb := userCommand("")
	if code := c.Main([]string{"plan"}); code != ExitOK || !strings.Contains(out.String(), "m") {
		t.Errorf("plan without the model: exit %d\n%s%s", code, out, errb)
	}
	c, out, errb = userCommand("")
	if code := c.Main([]string{"plan", "--github-matrix"}); code != ExitOK || !strings.Contains(out.String(), `"only":"m"`) {
		t.Errorf("plan --github-matrix without the model: exit %d\n%s%s", code, out, errb)
	}
	c, _, errb = userCommand("")
	if code := c.Main([]string{"validate"}); code != ExitInvalid || !strings.Contains(errb.String(), "not found") {
		t.Errorf("validate must still check the model: exit %d\n%s", code, errb)
	}
	c, _, errb = userCommand("")
	writeShard(t, ".", "shard.json", time.Now(), report.Build{Name: "m", Backend: "tensorrt-rtx", Status: report.StatusOK})
	if code := c.Main([]string{"merge", "-f", "trt-builds.yml", "--report", "merged.json", "shard.json"}); code != ExitOK {
		t.Errorf("merge -f without the model: exit %d\n%s", code, errb)
	}
}

func TestTraceConvertReadsStdinAndHelpExitsZero(t *testing.T) {
	recording := "\x1b[0G\x1b[2K[-] Building engine 0/2\n\x1b[1A\x1b[0G\x1b[2K[=] Building engine 1/2\n\x1b[1A"
	c, out, errb := userCommand(recording)
	if code := c.Main([]string{"trace", "convert", "-"}); code != ExitOK {
		t.Fatalf("trace convert -: exit %d\n%s", code, errb)
	}
	if !strings.Contains(out.String(), `"Building engine"`) {
		t.Errorf("trace convert - did not convert stdin:\n%s", out)
	}
	c, _, _ = userCommand("")
	if code := c.Main([]string{"trace", "-h"}); code != ExitOK {
		t.Errorf("trace -h: exit %d, want 0", code)
	}
	c, _, errb = userCommand("")
	if code := c.Main([]string{"trace", "convert"}); code != ExitInvalid || !strings.Contains(errb.String(), "trace convert FILE") {
		t.Errorf("trace convert without a file: exit %d\n%s", code, errb)
	}
}

func TestPositionedErrorsAreNotPrefixed(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{"m.yml:3:24: backend: unknown value", "m.yml:3:24: backend: unknown value"},
		{"dir/t.jsonl:7: t_ms must be", "dir/t.jsonl:7: t_ms must be"},
		{"--jobs 0: must be at least 1", "trt-action: --jobs 0: must be at least 1"},
		{"merge: report 2 is empty", "trt-action: merge: report 2 is empty"},
	} {
		if got := errorText(usageError{c.msg}); got != c.want {
			t.Errorf("errorText(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}
