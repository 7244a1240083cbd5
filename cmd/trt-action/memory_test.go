package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trt-action/trt-action/internal/memory"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/native/nvmltest"
)

const mib = 1 << 20

// required skips a test whose prerequisite is missing, or fails it under
// CI (where .ci/run installs it).
func required(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" || os.Getenv("TRT_ACTION_REQUIRE_RTX") != "" {
		t.Fatalf("%s: %v", what, err)
	}
	t.Skipf("%s: %v", what, err)
}

// A real program under trt-action run: its peak is what /usr/bin/time -v
// says of the same run (its largest process, the kernel's ru_maxrss, is
// exactly that; the tree's sampled sum adds time's own few pages).
func TestRunPeakAgreesWithTimeV(t *testing.T) {
	_, err := exec.LookPath("/usr/bin/time")
	required(t, "/usr/bin/time (Debian package time)", err)
	_, err = exec.LookPath("python3")
	required(t, "python3", err)
	dir := t.TempDir()
	out, err := command(dir, nil, "run", "--report", "r.json", "--", "/usr/bin/time", "-v", "python3", "-c",
		"import time; b = b'x' * (300 << 20); time.sleep(1.5)").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b := readReport(t, filepath.Join(dir, "r.json")).Builds[0]
	m := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(strings.Join(b.Script.OutputTail, "\n"))
	if m == nil || b.Memory == nil {
		t.Fatalf("no time -v figure or no memory:\n%s", out)
	}
	kb, _ := strconv.ParseInt(m[1], 10, 64)
	timeV := kb << 10
	if b.Memory.LargestProcessBytes != timeV {
		t.Errorf("largest process %d, /usr/bin/time -v %d", b.Memory.LargestProcessBytes, timeV)
	}
	if p := b.Memory.PeakHostBytes; p < timeV || p > timeV+16*mib || timeV < 300*mib {
		t.Errorf("peak %d, /usr/bin/time -v %d", p, timeV)
	}
}

// A tree's peak is the sum of its processes: three children of a Python
// program each hold 100 MiB at once and say what they hold (VmRSS).
func TestRunTreePeakIsTheSumOfItsProcesses(t *testing.T) {
	_, err := exec.LookPath("python3")
	required(t, "python3", err)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tree.py"), `import os, sys, time
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
r, w = os.pipe()
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        b = b"x" * (100 << 20)
        os.write(w, b"%d\n" % rss())
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
reader = os.fdopen(r)
held = [int(reader.readline()) for _ in kids]
print("children", sum(held), "parent", rss())
sys.stdout.flush()
for pid in kids:
    os.waitpid(pid, 0)
`)
	out, err := command(dir, nil, "run", "--report", "r.json", "--", "python3", "tree.py").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b := readReport(t, filepath.Join(dir, "r.json")).Builds[0]
	var children, parent int64
	for _, line := range b.Script.OutputTail {
		if _, err := fmt.Sscanf(line, "children %d parent %d", &children, &parent); err == nil {
			break
		}
	}
	if children < 300*mib || b.Memory == nil {
		t.Fatalf("children %d, memory %+v\n%s", children, b.Memory, out)
	}
	sum := children + parent
	if p := b.Memory.PeakHostBytes; p < sum-4*mib || p > sum+8*mib {
		t.Errorf("tree peak %d, its processes' sum %d", p, sum)
	}
}

// --memory-budget and the memory-budget input put a budget on every build.
func TestMemoryBudgetFlagAndInput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), `version: 1
defaults: {backend: sim, sim: {step: 2ms, allocate: 300MiB}}
builds:
  - name: a
  - name: b
    budgets: {memory: 8GiB}
`)
	for _, how := range [][]string{{"--memory-budget", "100MiB"}, nil} {
		var env []string
		if how == nil {
			env = []string{"GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + filepath.Join(dir, "outputs"), "INPUT_MEMORY-BUDGET=100MiB"}
		}
		out, err := command(dir, env, append([]string{"build", "--jobs", "2", "--summary", "s.md"}, how...)...).CombinedOutput()
		if code := exitCode(err); code != 3 {
			t.Fatalf("%v: exit %d, want 3 (over budget)\n%s", how, code, out)
		}
		for _, b := range readReport(t, filepath.Join(dir, "trt-report.json")).Builds {
			if b.Status != report.StatusBudgetExceeded || b.Budget == nil || b.Budget.Kind != report.BudgetMemory || b.Budget.LimitBytes != 100*mib {
				t.Errorf("%v: %s %s (%s), %+v", how, b.Name, b.Status, b.Reason, b.Budget)
			}
		}
	}
}

// A build the kernel's OOM killer ends is named for it: trt-action runs in
// a memory cgroup of 300 MiB the test makes (cgroup v1; root can), its
// simulated build touches 600 MiB in the build's own cgroup below it, and
// the kernel takes the build (oom_score_adj +500), not trt-action.
func TestOutOfMemoryInALimitedCgroup(t *testing.T) {
	h, err := memory.DetectHierarchy()
	if err == nil && (h.Version != memory.V1 || os.Geteuid() != 0) {
		err = fmt.Errorf("needs root and cgroup v1's memory controller (version %d, euid %d)", h.Version, os.Geteuid())
	}
	required(t, "a memory cgroup the test can make", err)
	limited := filepath.Join(h.Dir, fmt.Sprintf("trt-action-test-oom-%d", os.Getpid()))
	if err := os.Mkdir(limited, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(limited)
	if err := os.WriteFile(filepath.Join(limited, "memory.limit_in_bytes"), []byte("314572800"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), `version: 1
builds:
  - {name: big, backend: sim, sim: {step: 2ms, allocate: 600MiB}}
`)
	// The shell joins the cgroup, then becomes trt-action.
	cmd := command(dir, []string{"BIN=" + binary}, "unused")
	cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-c", `echo $$ > "$1/cgroup.procs" && exec "$BIN" build --summary s.md`, "sh", limited}
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit %d, want 1 (a build crashed)\n%s", code, out)
	}
	b := readReport(t, filepath.Join(dir, "trt-report.json")).Builds[0]
	m := b.Memory
	if b.Status != report.StatusCrashed || !strings.HasPrefix(b.Reason, "out of host memory (peak ") || !strings.HasSuffix(b.Reason, " of 314.6 MB)") {
		t.Errorf("status %s (%s)", b.Status, b.Reason)
	}
	if m == nil || m.OOMKills != 1 || m.HostSource != report.MemoryFromProcCgroupV1 || m.HostLimitBytes != 314572800 || m.CgroupPeakBytes < 250*mib {
		t.Errorf("memory %+v", m)
	}
	summary, _ := os.ReadFile(filepath.Join(dir, "s.md"))
	if !strings.Contains(string(summary), "out of host memory (peak ") {
		t.Errorf("the summary does not name it:\n%s", summary)
	}
	if left, _ := filepath.Glob(filepath.Join(limited, "trt-action-*")); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
}

// GPU memory is read through NVML loaded at run time; TRT_ACTION_NVML_LIBRARY
// names a library other than the driver's (here a stand-in that puts the
// worker on a GPU).
func TestGPUMemoryFromNVML(t *testing.T) {
	so := nvmltest.Build(t, nvmltest.Current)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "trt-builds.yml"), "version: 1\nbuilds:\n  - {name: g, backend: sim, sim: {step: 200us}}\n")
	out, err := command(dir, []string{"TRT_ACTION_NVML_LIBRARY=" + so, "FAKE_NVML_MATCH=__worker:123456789"}, "build").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := readReport(t, filepath.Join(dir, "trt-report.json")).Builds[0].Memory
	if m == nil || m.PeakGPUBytes != 123456789 || m.GPUSource != report.MemoryFromNVML {
		t.Errorf("memory %+v", m)
	}
}
