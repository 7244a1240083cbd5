package build

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/trt-action/trt-action/internal/sigmask"
	"golang.org/x/sys/unix"
)

// The reaper stands between the supervisor and a script build's command,
// one per script build (the hidden __reaper command). It is a child
// subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux 3.4+): a process of the
// command whose parent dies is handed to it, not to init, so every
// process the command starts stays its descendant, also one that left
// the process group with setsid. A kill therefore reaches them all: the
// supervisor's process-group kill alone would miss those (and a runner's
// cancel kills only the process it started; see docs/builder-scripts.md).
//
// It starts the command once the supervisor has sent its start line on
// stdin (by then it is in the build's memory cgroup, with its
// oom_score_adj, which the command inherits from it). It takes "kill"
// lines on stdin and ends every descendant; it does the
// same when the command's main process exits (nothing of the command
// outlives it) and when it gets SIGTERM (its parent-death signal: a
// supervisor killed outright still leaves no process behind). Its last
// act is one JSON line on file descriptor 3: how the command ended.

// reaperResult is how the command ended, as the reaper saw it.
type reaperResult struct {
	ExitCode   *int   `json:"exit_code,omitempty"`
	Signal     string `json:"signal,omitempty"`      // the signal that ended the main process
	StartError string `json:"start_error,omitempty"` // the command could not start
	// Leftover counts the processes still running when the main process
	// exited, which the reaper then killed.
	Leftover int `json:"leftover,omitempty"`
	// Killed: the supervisor asked for the kill (or the reaper's parent died).
	Killed bool `json:"killed,omitempty"`
	// NoSubreaper is why the kernel refused to make the reaper a child
	// subreaper (qemu-user's emulation of prctl refuses it with EINVAL, as
	// a kernel older than 3.4 would): the command still runs, but a
	// process of it that detaches and loses its parent is no longer the
	// reaper's to kill.
	NoSubreaper string `json:"no_subreaper,omitempty"`
}

// describe words how the command ended for people.
func (r reaperResult) describe() string {
	switch {
	case r.StartError != "":
		return "could not start: " + r.StartError
	case r.Signal != "":
		return killedWords(r.Signal)
	case r.ExitCode != nil:
		return exitWords(*r.ExitCode)
	}
	return "ended without a status"
}

// RunReaper is the __reaper command: it runs argv as the build's command
// and returns once every process of it has ended.
// signals carries SIGINT and SIGTERM (caught from the process's start,
// so none comes too early to be handled): either ends every process of
// the command, as a kill line does.
func RunReaper(argv []string, control io.Reader, result io.Writer, signals <-chan os.Signal) error {
	if len(argv) == 0 {
		return errors.New("reaper: no command")
	}
	subreaperErr := becomeSubreaper()
	res := reapCommand(argv, control, signals)
	if subreaperErr != nil {
		res.NoSubreaper = subreaperErr.Error()
	}
	return json.NewEncoder(result).Encode(res)
}

// becomeSubreaper makes this process the child subreaper of the command
// it starts; a test replaces it to see the command run without one.
var becomeSubreaper = func() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// reaperStart is the line that lets the reaper start the command.
const reaperStart = "start"

func reapCommand(argv []string, control io.Reader, signals <-chan os.Signal) reaperResult {
	in := bufio.NewReader(control)
	if line, err := in.ReadString('\n'); strings.TrimSpace(line) != reaperStart {
		return reaperResult{StartError: fmt.Sprintf("the supervisor did not let it start (%q, %v)", line, err)}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr // stdin: /dev/null
	if err := sigmask.Start(cmd); err != nil {
		return reaperResult{StartError: startErrorText(err)}
	}
	main := cmd.Process.Pid

	kills := make(chan struct{}, 1)
	go readKillRequests(in, kills)
	go func() {
		if _, ok := <-signals; ok {
			kills <- struct{}{}
		}
	}()
	var res reaperResult
	exited := make(chan unix.WaitStatus, 1)
	go reapAll(main, exited)
	for {
		select {
		case ws := <-exited:
			res.setStatus(ws)
			// A helper process (multiprocessing's resource tracker) may
			// be ending on its own just now: a moment first, then kill.
			settle(leftoverGrace)
			res.Leftover = killDescendants()
			waitForChildren()
			return res
		case <-kills:
			res.Killed = true
			killDescendants()
		}
	}
}

// readKillRequests turns each "kill" line into a request; the end of the
// supervisor's pipe is one too (the supervisor is gone).
func readKillRequests(control io.Reader, kills chan<- struct{}) {
	in := bufio.NewScanner(control)
	for in.Scan() {
		if strings.TrimSpace(in.Text()) == "kill" {
			select {
			case kills <- struct{}{}:
			default:
			}
		}
	}
	kills <- struct{}{}
}

// reapAll waits for every child (as a subreaper the reaper inherits
// orphans, which must be reaped too) and sends the main process's status.
// Only this goroutine waits: exec.Cmd.Wait would race it for the status.
func reapAll(main int, exited chan<- unix.WaitStatus) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: nothing left
		}
		if pid == main {
			exited <- ws
		}
	}
}

func (r *reaperResult) setStatus(ws unix.WaitStatus) {
	if ws.Signaled() {
		r.Signal = unix.SignalName(ws.Signal())
		return
	}
	code := ws.ExitStatus()
	r.ExitCode = &code
}

// leftoverGrace is how long processes of the command may take to end by
// themselves once its main process has exited.
const leftoverGrace = 250 * time.Millisecond

// settle waits up to d for the reaper's descendants to end by themselves.
func settle(d time.Duration) {
	deadline := time.Now().Add(d)
	for len(descendants(os.Getpid())) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// waitForChildren returns once the reaper has no child left, or after a
// while: a process stuck in the kernel (D state) cannot be waited for.
func waitForChildren() { settle(5 * time.Second) }

// killDescendants sends SIGKILL to every descendant until none is alive
// (one may fork while the first round is sent) and says how many it killed.
func killDescendants() int {
	killed := map[int]bool{}
	for round := 0; round < 100; round++ {
		alive := descendants(os.Getpid())
		if len(alive) == 0 {
			break
		}
		for _, pid := range alive {
			_ = unix.Kill(pid, unix.SIGKILL)
			killed[pid] = true
		}
		time.Sleep(time.Millisecond)
	}
	return len(killed)
}

// descendants lists the live (not zombie) descendants of pid, from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	alive := map[int]bool{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(p)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], p)
		alive[p] = state != 'Z' && state != 'X'
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if alive[c] {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// procStat reads a process's parent and state from /proc/PID/stat. The
// command name (field 2) may hold spaces and parentheses, so the fields
// after it are found from its last ')'.
func procStat(pid int) (ppid int, state byte, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0][0], err == nil
}

// startErrorText words a failed start without the reaper's own plumbing.
func startErrorText(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Name + ": " + ee.Err.Error()
	}
	return err.Error()
}
