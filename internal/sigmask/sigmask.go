// Package sigmask starts commands with no signal blocked, whatever mask
// trt-action was started with: a launcher that blocks SIGUSR1, SIGHUP or
// any other signal must not hand that on to the workers, to TensorRT or to
// the commands they run, which would never see those signals.
//
// Why on the starting thread: Go starts a child with the mask of the
// thread that forks it (syscall_runtime_BeforeFork saves it,
// syscall_runtime_AfterForkInChild restores it in the child; go/src/runtime/
// proc.go), and every thread of the runtime keeps the mask the process
// started with, less the signals the runtime needs (SIGINT and SIGTERM
// among them: minitSignalMask, go/src/runtime/signal_unix.go). exec.Cmd has
// no field for a child's mask. So Start clears the mask of the thread it
// locks for the fork, and puts it back after: the process's own threads
// keep the mask they had.
package sigmask

import (
	"bytes"
	"errors"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// Start starts cmd, as cmd.Start does, with no signal blocked.
func Start(cmd *exec.Cmd) error {
	return withCleanMask(cmd.Start)
}

// withCleanMask runs start locked to its thread with no signal blocked on
// it, and gives the thread its mask back after.
func withCleanMask(start func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var none, before unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &none, &before); err != nil {
		return start() // cannot happen for SIG_SETMASK; the child then keeps the thread's mask
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &before, nil)
	return start()
}

// Output runs cmd and returns its standard output, as cmd.Output does,
// started with no signal blocked. A failed command's standard error is in
// its *exec.ExitError (its last 32 KiB; cmd.Output keeps the first and
// the last 32 KiB).
//
// It is not cmd.Output run inside withCleanMask: that would keep the
// thread's mask cleared until the command ends (nvidia-smi can take
// seconds), and a signal trt-action was started with blocked could reach
// it meanwhile; SIGTSTP, which the Go runtime leaves to the system unless
// notified, would stop trt-action. Only the fork runs with the mask
// cleared.
func Output(cmd *exec.Cmd) ([]byte, error) {
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("sigmask.Output: Stdout or Stderr already set")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := Start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		exitErr.Stderr = stderr.Bytes()[max(0, stderr.Len()-32<<10):]
	}
	return stdout.Bytes(), err
}
