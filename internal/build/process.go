package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/atomicfile"
	"github.com/trt-action/trt-action/internal/backend"
	"github.com/trt-action/trt-action/internal/gpus"
	"github.com/trt-action/trt-action/internal/sigmask"
	"github.com/trt-action/trt-action/native"
	"golang.org/x/sys/unix"
)

// Starting a build's worker process and describing how it ended; what the
// worker says on the way is in protocol.go, what it means in watch.go.

// start launches the worker in a process group of its own, so the terminal's
// Ctrl-C reaches only the supervisor, and a kill takes all it started.
func (w *watch) start() (<-chan message, <-chan error, error) {
	spec, err := w.workerSpec()
	if err != nil {
		return nil, nil, err
	}
	protoR, protoW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(w.r.opts.Exe, w.r.opts.WorkerArgs...)
	cmd.Env = append(workerEnviron(os.Environ()), w.r.opts.WorkerEnv...)
	if w.gpu != "" {
		// nvidia-smi numbers GPUs by PCI bus; make CUDA agree with it.
		cmd.Env = append(cmd.Env, gpus.Env(w.gpu), "CUDA_DEVICE_ORDER=PCI_BUS_ID")
		w.res.GPU = w.gpu
	}
	cmd.ExtraFiles = []*os.File{protoW}
	cmd.Stdout, cmd.Stderr = &w.output, &w.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	stdin, err := cmd.StdinPipe()
	if err == nil {
		w.startMemory()
		err = sigmask.Start(cmd) // none blocked: not even what trt-action was started with
	}
	protoW.Close()
	if err != nil {
		protoR.Close()
		return nil, nil, err
	}
	// The worker waits for its spec: it is in the build's cgroup, with its
	// oom_score_adj, before it loads anything.
	w.mem.adopt(cmd.Process.Pid, true)
	line, _ := json.Marshal(spec)
	_, _ = stdin.Write(append(line, '\n'))
	w.ctl.stdin, w.ctl.pgid = stdin, cmd.Process.Pid
	// Few messages in flight: everything queued between the monitor and the
	// state delays when a budget sees a phase start.
	msgs := make(chan message, 2)
	go func() { readMessages(protoR, msgs); protoR.Close() }()
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		w.exitState = cmd.ProcessState // read once exited is
		exited <- err
	}()
	return msgs, exited, nil
}

func (w *watch) workerSpec() (workerSpec, error) {
	b := w.spec
	if b.TimingCache != "" {
		if err := os.MkdirAll(filepath.Dir(b.TimingCache), 0o755); err != nil {
			return workerSpec{}, err
		}
		// The backend replaces the timing cache through a partial file
		// named as ours (native/backends/files.h partial_name): one a
		// killed worker left is removed here, as the engine's are.
		_, _ = atomicfile.RemoveStale(b.TimingCache) // best effort: a leftover never stops a build
	}
	req := native.Request{Name: b.Name, ONNX: b.ONNX, EngineTmp: w.engineTmp, LibPath: w.r.opts.LibPath,
		Precision: b.Precision, Targets: b.Targets, TimingCache: b.TimingCache, Settings: b.Settings.Map(),
		SettingKeys: slices.Sorted(maps.Keys(b.BuilderSettings()))}
	for _, p := range b.Profiles {
		profile := make(map[string]native.Shape, len(p))
		for input, s := range p {
			profile[input] = native.Shape{Min: s.Min, Opt: s.Opt, Max: s.Max}
		}
		req.Profiles = append(req.Profiles, profile)
	}
	if backend.Of(b.Backend).Simulated {
		req.Sim = &native.SimRequest{StepNs: int64(b.Sim.Step), Unpaced: b.Sim.Fast, Repeat: b.Sim.Repeat, Threads: b.Sim.Threads,
			Fault: b.Sim.Fault.Kind, FaultNs: int64(b.Sim.Fault.Duration), FaultAtFrac: 0.5, EngineSize: b.Sim.EngineSize}
	}
	if w.r.opts.RecordDir != "" {
		rec, err := newTraceRecorder(w.r.opts.RecordDir, b.Name)
		if err != nil {
			return workerSpec{}, err
		}
		w.recording = rec
	}
	spec := workerSpec{Backend: b.Backend, Request: req, SimTrace: b.Sim.Trace}
	if req.Sim != nil {
		spec.SimAllocate = b.Sim.Allocate
	}
	return spec, nil
}

func exitDescription(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return killedWords(unix.SignalName(ws.Signal()))
		}
		return exitWords(ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exited without a result"
}

// killedWords and exitWords word how a process ended, a worker's or a
// script build's command (reaperResult.describe).
func killedWords(signal string) string { return "killed by signal " + signal }
func exitWords(code int) string        { return fmt.Sprintf("exit status %d", code) }

// tail keeps the last lines a worker printed, to explain a crash.
type tail struct {
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 8<<10 {
		t.buf = t.buf[len(t.buf)-4<<10:]
	}
	return len(p), nil
}

func (t *tail) lastLine() string {
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// workerEnviron is the supervisor's environment without the tokens a
// workflow gives it: a worker loads TensorRT, plugins and models, and needs
// none of them.
func workerEnviron(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !isToken(kv, "GITHUB_", "INPUT_", "ACTIONS_") {
			out = append(out, kv)
		}
	}
	return out
}

// isToken reports whether kv is a variable whose name holds TOKEN and
// starts with one of prefixes (any case): a token a workflow handed on.
func isToken(kv string, prefixes ...string) bool {
	name, _, _ := strings.Cut(kv, "=")
	upper := strings.ToUpper(name)
	return strings.Contains(upper, "TOKEN") && slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(upper, p) })
}
