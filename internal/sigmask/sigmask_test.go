package sigmask

import (
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

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
