package build

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/trt-action/trt-action/internal/pyhook"
	"golang.org/x/sys/unix"
)

// The test binary doubles as a script build's reaper and as the program a
// script build runs: a stand-in for a Python program with trt-action's hook
// loaded, speaking the hook protocol (hookproto.go) exactly as the hook
// does, so the supervisor's side is tested without Python. The real hook
// and real TensorRT-RTX builds are tested in internal/pyhook and
// test/realbuild.

const (
	reaperArg   = "-test.run=^reaper$"   // os.Args[1] of the test binary started as a reaper
	fakeHookEnv = "TRT_ACTION_FAKE_HOOK" // the scenario the test binary plays as a command
	// noSubreaperEnv set makes the test binary started as a reaper meet a
	// kernel that refuses PR_SET_CHILD_SUBREAPER, as qemu-user does.
	noSubreaperEnv = "TRT_ACTION_TEST_NO_SUBREAPER"
)

// runAsHelper runs the test binary as a reaper or a fake program when it
// was started as one; it returns false otherwise.
func runAsHelper() bool {
	if len(os.Args) > 2 && os.Args[1] == reaperArg && os.Args[2] == "--" {
		// What the __reaper command does, with signals handled here.
		_, _ = unix.FcntlInt(3, unix.F_SETFD, unix.FD_CLOEXEC)
		signals := make(chan os.Signal, 1)
		notifyTerm(signals)
		if os.Getenv(noSubreaperEnv) != "" {
			becomeSubreaper = func() error { return unix.EINVAL }
		}
		if err := RunReaper(os.Args[3:], os.Stdin, os.NewFile(3, "result"), signals); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if scenario := os.Getenv(fakeHookEnv); scenario != "" {
		os.Exit(playFakeProgram(scenario))
	}
	return false
}

// fakeHook is the hook's side of the channel in one process.
type fakeHook struct {
	conn    *net.UnixConn
	stopped atomic.Bool
}

func dialFakeHook() *fakeHook {
	path := os.Getenv(pyhook.EnvSupervisor)
	if path == "" {
		return nil
	}
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake hook:", err)
		return nil
	}
	h := &fakeHook{conn: c}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			var m struct{ M string }
			if json.Unmarshal(buf[:n], &m) == nil && m.M == hookStop {
				h.stopped.Store(true)
			}
		}
	}()
	h.send(map[string]any{"m": hookHello, "pid": os.Getpid(), "ppid": os.Getppid(), "python": "fake", "argv": os.Args})
	return h
}

func (h *fakeHook) send(m map[string]any) {
	data, _ := json.Marshal(m)
	_, _ = h.conn.Write(data)
}

// build plays one TensorRT build of steps steps, stepEvery apart, and
// reports how it ended: ok, or none when a stop reached it. Its library
// is FAKE_LIBRARY's, else one of no backend.
func (h *fakeHook) build(id, steps int, stepEvery time.Duration) bool {
	h.send(map[string]any{"m": hookBegin, "id": id, "t": monoNow(), "entry": "build_serialized_network", "route": "python",
		"library": cmp.Or(os.Getenv("FAKE_LIBRARY"), "Fake TensorRT 1.0"), "config": map[string]any{"flags": []string{"TF32"}},
		"network": map[string]any{"inputs": []map[string]any{{"name": "x", "dtype": "FLOAT", "shape": []int{1, 3}}},
			"outputs": []map[string]any{{"name": "y", "dtype": "FLOAT", "shape": []int{1, 3}}}, "layers": 2}})
	h.send(map[string]any{"m": hookEvents, "id": id, "e": []any{
		[]any{monoNow(), 1, "s", "Building engine", nil, steps},
		[]any{monoNow(), 1, "s", "Timing tactics", "Building engine", 1},
	}})
	ok := true
	for i := 0; i < steps; i++ {
		time.Sleep(stepEvery)
		h.send(map[string]any{"m": hookEvents, "id": id, "e": []any{[]any{monoNow(), 1, "p", "Building engine", i}}})
		if h.stopped.Load() {
			ok = false
			break
		}
	}
	h.send(map[string]any{"m": hookEvents, "id": id, "e": []any{
		[]any{monoNow(), 1, "f", "Timing tactics"}, []any{monoNow(), 1, "f", "Building engine"}}})
	end := map[string]any{"m": hookEnd, "id": id, "t": monoNow(), "result": "ok", "bytes": 1234}
	if !ok {
		end = map[string]any{"m": hookEnd, "id": id, "t": monoNow(), "result": "none", "stopped": true}
	}
	h.send(end)
	return ok
}

// playFakeProgram runs one scenario and returns the exit code.
func playFakeProgram(scenario string) int {
	fmt.Println("fake program:", scenario)
	if scenario == "unhooked" { // a program the hook never loaded in
		return 0
	}
	if code, ok := playMemoryScenario(scenario); ok {
		return code
	}
	h := dialFakeHook()
	if h == nil {
		return 3
	}
	step := 5 * time.Millisecond
	switch scenario {
	case "ok": // one build, its engine written
		fmt.Print("\x1b[32m 10%|█ |\r 50%|██ |\r100%|███|\x1b[0m\n") // a redrawn, coloured progress bar
		if !h.build(1, 6, step) {
			return 1
		}
		return writeFakeEngine()
	case "two": // two builds in a row
		h.build(1, 4, step)
		h.build(2, 4, step)
		return writeFakeEngine()
	case "long": // a build that runs until a stop; then fails its own way
		if !h.build(1, 100000, step) {
			fmt.Println("Traceback: AttributeError: __enter__")
			return 1
		}
		return 0
	case "long-exit0": // stopped, but exits 0 as some scripts do
		h.build(1, 100000, step)
		return 0
	case "none-exit0": // TensorRT returned None; the program says nothing and exits 0
		h.send(map[string]any{"m": hookBegin, "id": 1, "t": monoNow(), "entry": "build_serialized_network", "route": "python"})
		h.send(map[string]any{"m": hookEnd, "id": 1, "t": monoNow(), "result": "none"})
		return 0
	case "fallback": // TensorRT returned None; the program builds again another way and writes its engine
		h.send(map[string]any{"m": hookBegin, "id": 1, "t": monoNow(), "entry": "build_serialized_network", "route": "python"})
		h.send(map[string]any{"m": hookEnd, "id": 1, "t": monoNow(), "result": "none"})
		h.build(2, 3, step)
		return writeFakeEngine()
	case "error-line": // TensorRT logs an error through the bindings' logger, returns None, and the program fails
		h.send(map[string]any{"m": hookBegin, "id": 1, "t": monoNow(), "entry": "build_serialized_network", "route": "python"})
		fmt.Println("[12/03/2026-14:44:38] [TRT] [E] IBuilder::buildSerializedNetwork: Error Code 4: API Usage Error (Network must have at least one output)")
		h.send(map[string]any{"m": hookEnd, "id": 1, "t": monoNow(), "result": "none"})
		fmt.Println("build returned None")
		return 1
	case "no-build": // loads the hook, builds nothing (its builds, if any, in a child the hook did not enter)
		return 0
	case "crash": // killed by a signal in the middle of a build (the Go runtime turns SIGABRT into exit 2)
		h.send(map[string]any{"m": hookBegin, "id": 1, "t": monoNow(), "entry": "build_serialized_network", "route": "python"})
		time.Sleep(50 * time.Millisecond)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Second)
		return 0
	case "quiet-then-build": // silent outside any build, then a quick build
		time.Sleep(400 * time.Millisecond)
		h.build(1, 3, step)
		return 0
	case "silent-build": // a build with no callback after its start, as TensorRT's long silent phases
		h.send(map[string]any{"m": hookBegin, "id": 1, "t": monoNow(), "entry": "build_serialized_network", "route": "python"})
		h.send(map[string]any{"m": hookEvents, "id": 1, "e": []any{[]any{monoNow(), 1, "s", "Determining refit engines", nil, 1}}})
		time.Sleep(time.Hour)
		return 0
	case "silent-outside": // no build; ignores everything but a kill
		time.Sleep(time.Hour)
		return 0
	case "escape": // a child that leaves the process group, then silence
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), fakeHookEnv+"=sleeper")
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			return 4
		}
		fmt.Println("escaped child " + strconv.Itoa(child.Process.Pid))
		time.Sleep(time.Hour)
		return 0
	case "signals": // what a command is started with: its mask and ignored signals
		status, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "SigBlk:") || strings.HasPrefix(line, "SigIgn:") {
				fmt.Println(line)
			}
		}
		return 0
	case "sleeper":
		time.Sleep(time.Hour)
		return 0
	case "orphan": // leaves a child running and exits
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), fakeHookEnv+"=sleeper")
		if err := child.Start(); err != nil {
			return 4
		}
		fmt.Println("left child " + strconv.Itoa(child.Process.Pid))
		return writeFakeEngine()
	case "spawn": // a child process that builds, as a spawn pool's worker does
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), fakeHookEnv+"=ok")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Run(); err != nil {
			return 5
		}
		h.build(1, 3, step)
		return 0
	}
	return 9
}

// writeFakeEngine writes the engine named by FAKE_ENGINE, if any, and
// each file FAKE_WRITES names (paths joined by the list separator), each
// holding its name and what the file FAKE_CONTENT names holds.
func writeFakeEngine() int {
	if path := os.Getenv("FAKE_ENGINE"); path != "" {
		if err := os.WriteFile(path, []byte("fake engine bytes"), 0o644); err != nil {
			return 6
		}
	}
	var content []byte
	if path := os.Getenv("FAKE_CONTENT"); path != "" {
		content, _ = os.ReadFile(path)
	}
	for _, path := range filepath.SplitList(os.Getenv("FAKE_WRITES")) {
		if err := os.WriteFile(path, []byte(filepath.Base(path)+" "+string(content)), 0o644); err != nil {
			return 6
		}
	}
	return 0
}

func notifyTerm(c chan os.Signal) { signal.Notify(c, syscall.SIGINT, syscall.SIGTERM) }

// playMemoryScenario plays the scenarios that hold memory:
//
//	hold:N          touches N MiB and holds it, ignoring everything but a kill
//	tree:K:N        starts K children that each hold N MiB, holds them a
//	                second and a half, then ends them and exits 0
//	build-holding:N touches N MiB, then runs one TensorRT build of a second
//	growto:N        grows a MiB at a time until it holds N MiB resident,
//	                then holds it, ignoring everything but a kill
func playMemoryScenario(scenario string) (int, bool) {
	words := strings.Split(scenario, ":")
	mib := func(i int) int {
		n, _ := strconv.Atoi(words[i])
		return n
	}
	switch {
	case words[0] == "hold" && len(words) == 2:
		touch(mib(1))
		fmt.Println("holding")
		time.Sleep(time.Hour)
		return 0, true
	case words[0] == "tree" && len(words) == 3:
		var children []*exec.Cmd
		for range mib(1) {
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(os.Environ(), fakeHookEnv+"=hold:"+words[2])
			out, _ := child.StdoutPipe()
			if err := child.Start(); err != nil {
				return 4, true
			}
			in := bufio.NewScanner(out)
			for in.Scan() && in.Text() != "holding" {
			}
			children = append(children, child)
		}
		fmt.Println("all holding")
		time.Sleep(1500 * time.Millisecond)
		for _, c := range children {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		return 0, true
	case words[0] == "growto" && len(words) == 2:
		for resident() < int64(mib(1))<<20 {
			touch(1)
			time.Sleep(5 * time.Millisecond)
		}
		fmt.Println("grown")
		time.Sleep(time.Hour)
		return 0, true
	case words[0] == "build-holding" && len(words) == 2:
		h := dialFakeHook()
		if h == nil {
			return 3, true
		}
		touch(mib(1))
		if !h.build(1, 50, 20*time.Millisecond) {
			return 1, true
		}
		return writeFakeEngine(), true
	}
	return 0, false
}

// touch maps and touches n MiB, held until the process ends.
func touch(n int) {
	mem, err := unix.Mmap(-1, 0, n<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(err)
	}
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
}

// resident is this process's resident size, from /proc/self/statm.
func resident() int64 {
	data, _ := os.ReadFile("/proc/self/statm")
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
