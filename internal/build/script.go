package build

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/pyhook"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/runtmp"
	"github.com/trt-action/trt-action/internal/sigmask"
	"github.com/trt-action/trt-action/internal/text"
)

// A script build runs a command (matrix run:, trt-action run) instead of
// building an ONNX model: a program that builds TensorRT engines itself.
// trt-action's Python hook, loaded into every Python process of the
// command, reports each TensorRT build over the hook channel
// (hookproto.go); the supervisor gives each its own State and phase and
// stall budgets, and the build and run budgets cover the whole command.
// A stop reaches every TensorRT build of every process through the
// channel; a kill reaches every process through the reaper (reaper.go).
//
// The command's own words, output and exit status are untrusted text like
// TensorRT's messages: they reach the views as events, which escape them.

// pipeDrainGrace bounds how long output is read after the reaper exited.
const pipeDrainGrace = 2 * time.Second

// killBackstop is how long the supervisor waits for the reaper to end the
// command's processes before it kills the reaper's process group itself.
const killBackstop = 3 * time.Second

// script is one running script build; its methods run on the build's
// goroutine, but for the control's callbacks.
type script struct {
	w     *watch
	clock monoClock
	dir   *runtmp.Dir // private folder: the hook channel's socket
	hub   *hookHub

	reaperIn io.WriteCloser
	reaped   *reaperResult
	exitErr  error

	procs  map[int]*hookProcess // by connection
	inner  map[innerKey]*innerBuild
	order  []*innerBuild // in the order they began
	newest *innerBuild   // the most recently begun build still running
	idle   *State        // the command's own limits (build, run) are checked against no phases

	hitInner *innerBuild // the TensorRT build whose limit stopped the command; nil for the command's own

	routeAsked  bool // the command's environment asks for the Python route (scriptroute.go)
	routeWarned bool // a fallback to the Python route was warned of
	// backendWarned: a library of another backend than the declared one was warned of (scriptbackend.go)
	backendWarned bool

	output     outputTail
	out        *outputPipe // the output pipe's read end
	outHandled int64       // how far into the output the lines handled go (scriptoutput.go)
	lastError  string      // the newest TensorRT error line since a TensorRT build last ended (scriptoutput.go)
	pipes      []*os.File  // the output and result pipes' read ends
	engines    []engineBefore
	outputs    []engineBefore // the other files it declares (outputs:)
}

// hookProcess is a process of the command that loaded the hook.
type hookProcess struct {
	pid  int
	argv []string
}

type innerKey struct{ conn, id int }

func newScript(w *watch) *script {
	return &script{w: w, procs: map[int]*hookProcess{}, inner: map[innerKey]*innerBuild{}, idle: newState()}
}

// runScript runs a script build from start to its report entry; the
// build's clock has started.
func (w *watch) runScript() *report.Build {
	s := newScript(w)
	defer s.cleanUp()
	if err := s.prepare(); err != nil {
		return w.finish(report.StatusFailed, "could not prepare the command: "+err.Error(), outcome{})
	}
	lines, reaped, exited, err := s.start()
	if err != nil {
		return w.finish(report.StatusFailed, "could not start the command: "+err.Error(), outcome{})
	}
	release := w.obeySignals()
	s.follow(lines, reaped, exited)
	release()
	return s.classify()
}

// prepare makes the private folder and its socket and notes the declared
// engine files as they are before the command runs.
func (s *script) prepare() error {
	dir, err := runtmp.Make(runtmp.ScriptPrefix)
	if err != nil {
		return err
	}
	s.dir = dir
	s.hub, err = listenHooks(s.socket())
	if err != nil {
		return fmt.Errorf("hook channel: %w", err)
	}
	// The engines' and outputs' folders are made, as an ONNX build's is:
	// the program is told where to write, and may not make them itself.
	spec := s.w.spec.Script
	for _, e := range append(slices.Clone(spec.Engines), spec.Outputs...) {
		if err := os.MkdirAll(filepath.Dir(e), 0o755); err != nil {
			return err
		}
	}
	if s.engines, err = noteEngines(spec.Engines); err != nil {
		return err
	}
	s.outputs, err = noteEngines(spec.Outputs)
	return err
}

// socket is the path of the hook channel's socket.
func (s *script) socket() string { return filepath.Join(s.dir.Path, "s") }

func (s *script) cleanUp() {
	if s.dir != nil {
		_ = s.dir.Remove()
	}
}

// start starts the reaper, which starts the command. It returns the
// command's output lines, the reaper's account of how it ended, and the
// reaper's own exit.
func (s *script) start() (<-chan outputLine, <-chan reaperResult, <-chan error, error) {
	w := s.w
	spec := w.spec.Script
	env, err := scriptEnviron(os.Environ(), scriptEnv{
		extra: spec.Env, hookPath: w.r.opts.HookPath, native: w.r.opts.NativeDir, socket: s.socket(), gpu: w.gpu})
	if err != nil {
		return nil, nil, nil, err
	}
	s.routeAsked = slices.Contains(env, pyhook.EnvRoute+"="+pyhook.RoutePython)
	if w.gpu != "" {
		w.res.GPU = w.gpu
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if s.out, err = newOutputPipe(outR); err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	args := append(append([]string{}, w.r.opts.ReaperArgs...), "--")
	cmd := exec.Command(w.r.opts.Exe, append(args, spec.Argv...)...)
	cmd.Env, cmd.Dir = env, spec.Workdir
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{resW}
	// Its own process group: a terminal's Ctrl-C reaches only the
	// supervisor. SIGTERM when the supervisor dies: the reaper then ends
	// every process of the command.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	stdin, err := cmd.StdinPipe()
	if err == nil {
		s.clock = monoClock{zero: monoNow() - int64(w.now())}
		w.startMemory()
		err = sigmask.Start(cmd)
	}
	outW.Close()
	resW.Close()
	if err != nil {
		outR.Close()
		resR.Close()
		return nil, nil, nil, err
	}
	// The reaper waits for its start line: the command starts in the
	// build's cgroup, with its oom_score_adj, both inherited from it.
	w.mem.adopt(cmd.Process.Pid, false)
	_, _ = io.WriteString(stdin, reaperStart+"\n") // a reaper that is gone already says so on its exit
	s.reaperIn = stdin
	w.ctl.stdin, w.ctl.pgid = io.Discard, cmd.Process.Pid
	w.ctl.stopFn = s.hub.stop
	w.ctl.signal = s.killCommand
	s.pipes = []*os.File{outR, resR}
	lines := make(chan outputLine, 64)
	go readLines(s.out, lines)
	reaped := make(chan reaperResult, 1)
	go readReaperResult(resR, reaped)
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		w.exitState = cmd.ProcessState // read once exited is
		exited <- err
	}()
	return lines, reaped, exited, nil
}

// closePipes ends the reads of the output and result pipes.
func (s *script) closePipes() {
	for _, f := range s.pipes {
		_ = f.Close()
	}
}

// killCommand is the control's kill for a script build: the reaper ends
// every process of the command, wherever it went; its process group is
// killed only if the reaper has not managed within killBackstop. It runs
// under the control's lock.
func (s *script) killCommand(pgid int, sig syscall.Signal) error {
	_, err := io.WriteString(s.reaperIn, "kill\n")
	time.AfterFunc(killBackstop, func() {
		s.w.ctl.mu.Lock()
		defer s.w.ctl.mu.Unlock()
		if !s.w.ctl.ended {
			_ = syscall.Kill(-pgid, sig)
		}
	})
	return err
}

// monoNow reads CLOCK_MONOTONIC, the clock the hook's times are on.
func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// readLines sends what the command prints, a line at a time (a line cut
// at maxOutputLine), with how far into the output each ends, until every
// process holding the pipe has ended.
func readLines(r io.ReadCloser, out chan<- outputLine) {
	defer close(out)
	defer r.Close()
	in := bufio.NewReaderSize(r, 64<<10)
	var offset int64
	for {
		line, err := in.ReadSlice('\n')
		if len(line) > 0 {
			offset += int64(len(line))
			// What a terminal would show of it: a redrawn progress bar's
			// last state, without colours.
			shown := text.Shown(string(trimEOL(line)))
			for err == bufio.ErrBufferFull { // skip the rest of a very long line
				var rest []byte
				rest, err = in.ReadSlice('\n')
				offset += int64(len(rest))
			}
			out <- outputLine{text: text.CutRunes(shown, maxOutputLine), end: offset}
		}
		if err != nil {
			return
		}
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func readReaperResult(r *os.File, out chan<- reaperResult) {
	defer r.Close()
	var res reaperResult
	if json.NewDecoder(r).Decode(&res) == nil {
		out <- res
	}
	close(out)
}

// follow handles the command's output, the hook messages, budgets and
// heartbeats until the command has ended and everything it said is read.
func (s *script) follow(lines <-chan outputLine, reaped <-chan reaperResult, exited <-chan error) {
	w := s.w
	beat := time.NewTicker(w.r.opts.Heartbeat)
	defer beat.Stop()
	check := time.NewTimer(time.Hour)
	defer check.Stop()
	msgs := s.hub.msgs
	exitedYet := false
	var drained <-chan time.Time // fires a while after the reaper exited
	for lines != nil || msgs != nil || reaped != nil || !exitedYet {
		s.armCheck(check)
		select {
		case <-drained:
			// The reaper has exited, yet something still holds the output
			// or result pipe open: a process it could not end. Stop
			// waiting for it; the report says so.
			if lines != nil || reaped != nil {
				s.w.res.Warnings = append(s.w.res.Warnings, "a process of the command still held its output open after the command ended; it was no longer read")
			}
			s.closePipes()
			lines, reaped = nil, nil
		case line, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			s.handleOutput(line)
		case p, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			if p.endsUnsuccessfully() {
				s.catchUp(&lines) // the error line its process printed first
			}
			s.handle(p)
		case res, ok := <-reaped:
			if ok {
				s.reaped = &res
			}
			reaped = nil
		case err := <-exited:
			exitedYet, exited = true, nil
			s.exitErr = err
			drained = time.After(pipeDrainGrace)
			w.ctl.exited()
			// Every process of the command is gone (the reaper saw to
			// it): no connection can still send.
			s.hub.close()
		case sample := <-w.mem.samples():
			if !exitedYet {
				s.noteSample(sample)
			}
		case <-check.C:
		case <-beat.C:
			s.heartbeat()
		}
		if s.judging() {
			s.enforceBudgets()
		}
	}
}

// handleOutput keeps and shows one line of the command's output.
func (s *script) handleOutput(line outputLine) {
	s.outHandled = line.end
	s.output.add(line.text)
	s.noteMemoryLine(line.text)
	s.w.emit(event.Event{Kind: event.Output, Message: line.text})
	s.noteLibraryError(line.text)
}

// judging is whether budgets still apply: not once the command has ended,
// and not once it is being stopped.
func (s *script) judging() bool {
	return s.reaped == nil && s.exitErr == nil && !s.w.ctl.stopping()
}
