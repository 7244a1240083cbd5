package cli

// Tests of the commands as a user types them: arguments, usage errors and
// what each command prints.

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trt-action/trt-action/internal/github"
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
	c, _, errb = userCommand("")
	if code := c.Main([]string{"trace", "-h"}); code != ExitOK {
		t.Errorf("trace -h: exit %d, want 0", code)
	}
	if help := errb.String(); !strings.HasPrefix(help, "Usage: trt-action trace convert FILE|-") || strings.Contains(help, "Flags:") {
		t.Errorf("trace -h: want its usage, and no empty list of flags:\n%s", help)
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

func TestUsageErrorsNameTheFlagTheValueAndWhatIsAllowed(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": goodMatrix, "broken.json": "{\"version\": 1,\n}"})
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"build", "--run-budget", "soon"}, nil, `trt-action: invalid value "soon" for flag --run-budget: want a duration like 90s, 15m or 1h30m`},
		{[]string{"build", "--jobs", "many"}, nil, `trt-action: invalid value "many" for flag --jobs: want a whole number`},
		{[]string{"build"}, map[string]string{"INPUT_JOBS": "many"}, `trt-action: input "jobs": "many" is not valid: want a whole number`},
		{[]string{"build"}, map[string]string{"INPUT_RUN-BUDGET": "soon"}, `trt-action: input "run-budget": "soon" is not valid: want a duration like 90s`},
		{[]string{"build", "--jobs", "0"}, nil, "trt-action: --jobs 0: must be at least 1 (builds at once)"},
		{[]string{"build", "--gpus", " "}, nil, `trt-action: --gpus " ": no device given; use all, or indexes and UUIDs separated by commas (0,1,3)`},
		{[]string{"build", "--run-budget", "-1s"}, nil, "trt-action: --run-budget -1s: must be positive"},
		{[]string{"build", "--memory-budget", "8 gigs"}, nil, `trt-action: invalid value "8 gigs" for flag --memory-budget: invalid size "8 gigs"; write a positive number with a unit`},
		{[]string{"build"}, map[string]string{"INPUT_GPU-MEMORY-BUDGET": "0"}, `trt-action: input "gpu-memory-budget": "0" is not valid: invalid size "0"`},
		{[]string{"build", "--min-free-memory", "-1GB"}, nil, `trt-action: invalid value "-1GB" for flag --min-free-memory: invalid size "-1GB"`},
		{[]string{"run", "--memory-budget", "lots", "--", "true"}, nil, `trt-action: invalid value "lots" for flag --memory-budget: invalid size "lots"`},
		// Flags that would silently do nothing are refused.
		{[]string{"build", "--depth", "0"}, nil, "trt-action: --depth 0: must be at least 1"},
		{[]string{"build", "--builds-per-gpu", "2"}, nil, "trt-action: --builds-per-gpu 2: only applies with --gpus"},
		{[]string{"plan", "--shards", "3"}, nil, "trt-action: --shards and --baseline of plan only apply with --github-matrix"},
		{[]string{"plan", "--baseline", "r.json"}, nil, "trt-action: --shards and --baseline of plan only apply with --github-matrix"},
		{[]string{"plan", "--github-matrix", "--shards", "-2"}, nil, "trt-action: --shards -2: must be at least 1"},
		{[]string{"build", "--fail-on", "budgets"}, nil, `trt-action: --fail-on "budgets": allowed: failure, budget, never`},
		{[]string{"build", "--backend", "cuda"}, nil, `trt-action: --backend "cuda": allowed: tensorrt, tensorrt-rtx, sim`},
		{[]string{"build", "--comment", "pr"}, nil, `trt-action: --comment "pr": allowed: off, pull-request, always`},
		{[]string{"merge", "--comment", "pr", "r.json"}, nil, `trt-action: --comment "pr": allowed: off, pull-request, always`},
		{[]string{"build", "--baseline", "broken.json"}, nil, "broken.json:2:1: invalid character '}' looking for beginning of object key string (--baseline)\n"},
		{[]string{"plan", "--github-matrix", "--baseline", "broken.json"}, nil, "broken.json:2:1: invalid character '}' looking for beginning of object key string (--baseline)\n"},
		{[]string{"build", "--baseline", "absent.json"}, nil, "trt-action: --baseline: read report: open absent.json: no such file or directory\n"},
		{[]string{"validate", "--bogus"}, nil, "trt-action: flag provided but not defined: --bogus; run 'trt-action validate -h' for the flags\n"},
	} {
		c2, _, errb := fanoutCommand(c.env)
		if code := c2.Main(c.args); code != ExitInvalid {
			t.Errorf("%v %v: exit %d, want %d\n%s", c.args, c.env, code, ExitInvalid, errb)
		}
		if !strings.HasPrefix(errb.String(), c.want) {
			t.Errorf("%v %v:\n got %s\nwant %s…", c.args, c.env, errb, c.want)
		}
	}
}

func TestMergeSaysWhatFailedIt(t *testing.T) {
	dir := inDir(t, map[string]string{"trt-builds.yml": "version: 1\nregression: {warn: 10%, fail: 25%, min: 1ms}\ndefaults: {backend: sim}\nbuilds:\n  - name: b${{ matrix.n }}\n    matrix: {n: [1, 2, 3]}\n"})
	t0 := time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)
	ok := writeShard(t, dir, "ok.json", t0, report.Build{Name: "b1", Backend: "sim", Status: report.StatusOK, DurationMs: 2000})
	killed := writeShard(t, dir, "killed.json", t0, report.Build{Name: "b2", Backend: "sim", Status: report.StatusRunning})
	base := writeShard(t, dir, "base.json", t0, report.Build{Name: "b1", Backend: "sim", Status: report.StatusOK, DurationMs: 1000})

	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"merge", "-f", "trt-builds.yml", "--summary", "s1.md", ok, killed}); code != ExitFailed {
		t.Errorf("killed shard: exit %d, want %d", code, ExitFailed)
	}
	const ended = "❌ merged from incomplete shard reports: 1 ok, 1 never finished, 1 never started — 3 builds in 2.0s"
	if !strings.HasSuffix(errb.String(), "■ "+ended+"\n") {
		t.Errorf("merge's last line must be the outcome %q:\n%s", ended, errb)
	}
	if s, _ := os.ReadFile("s1.md"); !strings.HasPrefix(string(s), "## ❌ merged from incomplete shard reports") {
		t.Errorf("summary headline:\n%.200s", s)
	}

	// Only b1 in the matrix now: the regression alone fails the merge.
	if err := os.WriteFile("one.yml", []byte("version: 1\nregression: {warn: 10%, fail: 25%, min: 1ms}\nbuilds:\n  - {name: b1, backend: sim}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, errb = fanoutCommand(nil)
	if code := c.Main([]string{"merge", "--baseline", base, "-f", "one.yml", "--summary", "s4.md", ok}); code != ExitBudget {
		t.Errorf("regression: exit %d, want %d\n%s", code, ExitBudget, errb)
	}
	const regressed = "❌ 1 regression (b1 +100%), 1 ok — 1 build in 2.0s"
	if !strings.HasSuffix(errb.String(), "■ "+regressed+"\n") {
		t.Errorf("merge's last line must name the regression %q:\n%s", regressed, errb)
	}
	summary, _ := os.ReadFile("s4.md")
	if !strings.HasPrefix(string(summary), "## ❌ 1 regression (b1 +100%)") {
		t.Errorf("summary headline must name the regression:\n%.300s", summary)
	}
	// The comment is the summary (and the comparison) in the room it has.
	r, err := report.ReadJSON("trt-report.json")
	if err != nil {
		t.Fatal(err)
	}
	if body := github.ReportSummary(nil)(r, 10_000); !strings.Contains(body, "1 regression (b1 +100%)") {
		t.Errorf("comment body must name the regression:\n%.300s", body)
	}
}

// A signal caught before the builds start (while the matrix loads) stops
// the run before any build starts, with a report and 130.
func TestASignalDuringSetUpCancelsEveryBuild(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": "version: 1\nbuilds:\n  - {name: a, backend: sim}\n  - {name: b, backend: sim}\n"})
	c, out, errb := userCommand("")
	caught := make(chan os.Signal, 1)
	caught <- os.Interrupt
	c.Signals = func() (<-chan os.Signal, func()) { return caught, func() {} }
	c.Executable = func() (string, error) { return "/nonexistent/trt-action", nil } // no build may start
	if code := c.Main([]string{"build"}); code != ExitInterrupted {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitInterrupted, out, errb)
	}
	r, err := report.ReadJSON("trt-report.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range r.Builds {
		if b.Status != report.StatusCancelled {
			t.Errorf("%s: %s (%s); want cancelled before it started", b.Name, b.Status, b.Reason)
		}
	}
}

func TestFlagsMayFollowArguments(t *testing.T) {
	for _, c := range []struct {
		args, want []string
		jobs       int
	}{
		{[]string{"a.yml", "--jobs", "2"}, []string{"a.yml"}, 2},
		{[]string{"--jobs", "3", "a.json", "b.json", "--jobs", "4"}, []string{"a.json", "b.json"}, 4},
		{[]string{"x", "--", "--jobs", "5"}, []string{"x", "--jobs", "5"}, 1},
		{[]string{"convert", "-"}, []string{"convert", "-"}, 1},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		jobs := fs.Int("jobs", 1, "")
		if err := parseInterspersed(fs, c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if !slices.Equal(fs.Args(), c.want) || *jobs != c.jobs {
			t.Errorf("%v: args %q jobs %d; want %q and %d", c.args, fs.Args(), *jobs, c.want, c.jobs)
		}
	}
}

func TestTraceConvertErrorsArePositionedInTheFile(t *testing.T) {
	inDir(t, map[string]string{"rec.log": "\x1b[0G\x1b[2K[-] A 0/2\n\x1b[1A\x1b[0G\x1b[2K[-] B two/3\n"})
	c, _, errb := userCommand("")
	if code := c.Main([]string{"trace", "convert", "rec.log"}); code != ExitInvalid {
		t.Errorf("exit %d, want %d", code, ExitInvalid)
	}
	if want := `rec.log:2: cannot read progress row "[-] B two/3"`; !strings.HasPrefix(errb.String(), want) {
		t.Errorf("got  %s\nwant %s…", errb, want)
	}
}

func TestEveryFlagProblemIsReportedAtOnce(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": goodMatrix})
	c, _, errb := fanoutCommand(nil)
	if code := c.Main([]string{"build", "--jobs", "0", "--depth", "0", "--fail-on", "x", "--comment", "y"}); code != ExitInvalid {
		t.Errorf("exit %d, want %d", code, ExitInvalid)
	}
	want := `trt-action: --fail-on "x": allowed: failure, budget, never
trt-action: --comment "y": allowed: off, pull-request, always
trt-action: --jobs 0: must be at least 1 (builds at once)
trt-action: --depth 0: must be at least 1`
	if !strings.HasPrefix(errb.String(), want) {
		t.Errorf("got\n%s\nwant\n%s…", errb, want)
	}
}

// Issue 17: flag errors and usage printed -max-size with one dash; every
// flag of more than one letter is --name there, as the README writes it.
func TestFlagsAreNamedAsTheREADMENamesThem(t *testing.T) {
	inDir(t, map[string]string{"trt-builds.yml": goodMatrix})
	oneDash := regexp.MustCompile(`(^|[\s:])-[a-z][a-z-]+`)
	for _, args := range [][]string{
		{"cache", "prune", "--cache", ".", "--max-size", "big"},
		{"cache", "prune", "--max-size"},
		{"build", "--no-cache=maybe"},
		{"build", "--no-such-flag"},
		{"build", "-h"}, {"merge", "-h"}, {"plan", "-h"}, {"cache", "-h"}, {"validate", "-h"}, {"version", "-h"},
	} {
		c, _, errb := userCommand("")
		c.Main(args)
		for _, line := range strings.Split(errb.String(), "\n") {
			if m := oneDash.FindString(line); m != "" {
				t.Errorf("%v: %q names a flag with one dash:\n%s", args, m, line)
			}
		}
	}
	c, _, errb := userCommand("")
	c.Main([]string{"cache", "prune", "--cache", ".", "--max-size", "big"})
	if !strings.Contains(errb.String(), `invalid value "big" for flag --max-size: `) {
		t.Errorf("cache prune --max-size big:\n%s", errb)
	}
}
