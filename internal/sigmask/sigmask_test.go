package sigmask

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blockedOf is the SigBlk mask in grep's output of a /proc status file.
func blockedOf(t *testing.T, out []byte, err error) uint64 {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	hex, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "SigBlk:")
	mask, perr := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
	if !ok || perr != nil {
		t.Fatalf("no SigBlk line in %q", out)
	}
	return mask
}

// On a thread with SIGUSR1 blocked (as every thread is when trt-action
// was started with it blocked), a command exec.Cmd starts keeps it
// blocked; one Start or Output starts has none blocked, and the thread
// keeps its own mask.
func TestCommandsStartWithNoSignalBlocked(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	probe := func() *exec.Cmd { return exec.Command(grep, "^SigBlk:", "/proc/self/status") }
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var usr1, before unix.Sigset_t
	usr1.Val[0] = 1 << (unix.SIGUSR1 - 1)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &usr1, &before); err != nil {
		t.Fatal(err)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &before, nil)

	bit := uint64(1) << (unix.SIGUSR1 - 1)
	out, err := probe().Output()
	if blockedOf(t, out, err)&bit == 0 {
		t.Fatalf("exec.Cmd's child has SIGUSR1 unblocked already: the test shows nothing")
	}
	out, err = Output(probe())
	if mask := blockedOf(t, out, err); mask != 0 {
		t.Errorf("Output: the command started with %#x blocked, want none", mask)
	}
	cmd := probe()
	var buf strings.Builder
	cmd.Stdout = &buf
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if mask := blockedOf(t, []byte(buf.String()), err); mask != 0 {
		t.Errorf("Start: the command started with %#x blocked, want none", mask)
	}
	var now unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, nil, &now); err != nil || now.Val[0]&bit == 0 {
		t.Errorf("the starting thread lost its own mask: %#x (%v)", now.Val[0], err)
	}
}

// A command that fails keeps the end of its standard error in its
// *exec.ExitError, as exec.Cmd.Output keeps it.
func TestOutputKeepsAFailuresStandardError(t *testing.T) {
	_, err := Output(exec.Command("sh", "-c", "echo nope >&2; exit 3"))
	exitErr, ok := err.(*exec.ExitError)
	if !ok || exitErr.ExitCode() != 3 || string(exitErr.Stderr) != "nope\n" {
		t.Errorf("err %v (%T), want exit 3 with its standard error", err, err)
	}
}

// outputHelper names the file the command Output runs touches once it
// has started, in a test binary that is the helper of
// TestOutputLeavesTrtActionsMaskWhileTheCommandRuns.
const outputHelper = "SIGMASK_TEST_OUTPUT_READY"

// Output clears the mask for the fork only: a signal trt-action was
// started with blocked stays blocked on its own threads while the command
// runs. Had Output run cmd.Output with the mask cleared, a SIGTSTP that
// came meanwhile would stop trt-action (the Go runtime leaves SIGTSTP to
// the system unless it is notified), though the launcher blocked it.
func TestOutputLeavesTrtActionsMaskWhileTheCommandRuns(t *testing.T) {
	if ready := os.Getenv(outputHelper); ready != "" {
		Output(exec.Command("sh", "-c", `sleep 0.2; : > "$1"; sleep 3`, "sh", ready))
		return
	}
	ready := filepath.Join(t.TempDir(), "ready")
	helper := exec.Command(os.Args[0], "-test.run=^TestOutputLeavesTrtActionsMaskWhileTheCommandRuns$")
	helper.Env = append(os.Environ(), outputHelper+"="+ready)
	startBlocked(t, helper, unix.SIGTSTP) // as a launcher that blocks it starts trt-action
	defer func() {
		unix.Kill(helper.Process.Pid, unix.SIGCONT)
		helper.Process.Kill()
		helper.Wait()
	}()
	status := func(field string) string {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(helper.Process.Pid) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		t.Fatalf("no %s in the helper's status", field)
		return ""
	}
	if mask := blockedOf(t, []byte("SigBlk:"+status("SigBlk")), nil); mask&(1<<(unix.SIGTSTP-1)) == 0 {
		t.Fatalf("the helper has SIGTSTP unblocked (%#x): the test shows nothing", mask)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the helper's command never started")
		}
	}
	if err := unix.Kill(helper.Process.Pid, unix.SIGTSTP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if state := status("State"); strings.HasPrefix(state, "T") {
		t.Errorf("a SIGTSTP trt-action was started with blocked stopped it while Output's command ran (state %s)", state)
	}
}

// startBlocked starts cmd with sig blocked, as exec.Cmd starts a child
// with the mask of the thread that forks it.
func startBlocked(t *testing.T, cmd *exec.Cmd, sig unix.Signal) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, before unix.Sigset_t
	set.Val[0] = 1 << (sig - 1)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &before); err != nil {
		t.Fatal(err)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &before, nil)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkStart compares what starting a command with no signal blocked
// costs: exec.Cmd alone (which keeps the mask), Start (the thread's mask
// cleared around the fork), and the other way considered, a wrapper
// program that clears the mask and execs the command (its cost is the
// extra exec, here of env). Each starts /bin/true and waits for it.
// BENCHMARKS.md has the runs:
//
//	go test ./internal/sigmask -run '^$' -bench Start -benchtime 2000x -count 5
func BenchmarkStart(b *testing.B) {
	env, err := exec.LookPath("env")
	if err != nil {
		b.Fatal(err)
	}
	for _, way := range []struct {
		name  string
		start func(*exec.Cmd) error
		argv  []string
	}{
		{"exec.Cmd", (*exec.Cmd).Start, []string{"/bin/true"}},
		{"sigmask.Start", Start, []string{"/bin/true"}},
		{"wrapper", (*exec.Cmd).Start, []string{env, "/bin/true"}},
	} {
		b.Run(way.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(way.argv[0], way.argv[1:]...)
				if err := way.start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
