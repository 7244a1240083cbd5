package build

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/trt-action/trt-action/internal/event"
	"github.com/trt-action/trt-action/internal/matrix"
	"github.com/trt-action/trt-action/internal/memory"
	"github.com/trt-action/trt-action/internal/report"
	"github.com/trt-action/trt-action/internal/text"
	"github.com/trt-action/trt-action/native"
)

// The run's side of memory: one sampler for every build (internal/memory),
// NVML opened once, where each build's cgroup is made, the checks before
// the first build, and the wait for free memory before a build starts
// beside others (--min-free-memory). A build's own side is memwatch.go.

// DefaultMinFreeMemory is --min-free-memory's default. TensorRT's builder
// takes more than a gigabyte and a half before it builds a layer (its log
// says "[MemUsageChange] Init builder kernel library: CPU +1443 ..."), so a
// build started beside others with less than 2 GiB free is likely to be
// the one the kernel kills, or to get another one killed.
const DefaultMinFreeMemory = 2 << 30

// memoryRecheck is how often a build held back for memory looks again.
const memoryRecheck = 250 * time.Millisecond

// runMemory is what every build of a run shares.
type runMemory struct {
	machine *memory.Machine
	monitor *memory.Monitor
	nvml    *lazyNVML
	// cgroups is where builds' cgroups are made; nil, with noCgroup
	// saying why, when none can be.
	cgroups  *memory.Hierarchy
	noCgroup string
}

func newRunMemory(opts Options) *runMemory {
	m := &runMemory{machine: opts.machine}
	if m.machine == nil {
		m.machine = memory.NewMachine()
	}
	m.nvml = &lazyNVML{path: opts.NVMLLibrary}
	var gpu memory.GPUReader
	if opts.NVMLLibrary != "" {
		gpu = m.nvml.processes
	}
	m.monitor = memory.NewMonitor(opts.memoryEvery, gpu)
	h := m.machine.Hierarchy()
	switch {
	case opts.noCgroups:
		m.noCgroup = "cgroups are off for this run"
	case h == nil:
		m.noCgroup = "trt-action's memory cgroup was not found"
	default:
		m.cgroups = h
		h.Sweep() // what runs that are gone left behind
	}
	return m
}

func (m *runMemory) close() {
	m.monitor.Close()
	m.nvml.close()
}

// lazyNVML opens NVML on first use, on the sampler's goroutine: with a
// driver, starting NVML takes a moment no build should wait for (only a
// run with a gpu-memory budget opens it before its first build, for the
// GPUs' memory).
type lazyNVML struct {
	path   string
	once   sync.Once
	mu     sync.Mutex
	n      *native.NVML
	err    error
	closed bool
}

func (l *lazyNVML) processes() (map[int]int64, error) {
	n, err := l.open()
	if err != nil {
		return nil, err
	}
	return n.Processes()
}

// totalMemory is the memory of every GPU, summed; only a run with a
// gpu-memory budget asks, before its first build.
func (l *lazyNVML) totalMemory() (int64, error) {
	n, err := l.open()
	if err != nil {
		return 0, err
	}
	return n.TotalMemory()
}

// open opens NVML once, whoever asks first.
func (l *lazyNVML) open() (*native.NVML, error) {
	l.once.Do(func() {
		n, err := native.OpenNVML(l.path)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.closed && n != nil {
			n.Close()
			n, err = nil, fmt.Errorf("closed")
		}
		l.n, l.err = n, err
	})
	return l.n, l.err
}

func (l *lazyNVML) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.n != nil {
		l.n.Close()
	}
}

// checkMemoryBudgets warns, before the first build, of memory budgets the
// machine cannot give: one above all the memory trt-action may use (a
// warning of that build's), and the budgets of the builds that may run at
// once adding up to more than is free now (a warning of the run's).
func (r *runner) checkMemoryBudgets() {
	room, ok := r.mem.machine.Room()
	if !ok {
		return
	}
	var budgets []int64
	for i, b := range r.builds {
		limit := b.Budgets.Memory
		if limit <= 0 {
			continue
		}
		budgets = append(budgets, limit)
		if limit > room.Total {
			w := fmt.Sprintf("memory budget %s is above all the memory this machine can give a build (%s: %s)",
				text.ExactSize(limit), text.Bytes(room.Total), roomWhat(r.mem))
			r.warnBeforeStart(i, w)
		}
	}
	slices.SortFunc(budgets, func(a, b int64) int { return cmp.Compare(b, a) }) // largest first
	at := min(r.opts.Jobs, len(budgets))
	var sum int64
	for _, v := range budgets[:at] {
		sum += v
	}
	if at > 1 && sum > room.Free {
		r.emit(runWarning(fmt.Sprintf("the memory budgets of the %d builds that may run at once (--jobs %d) add up to %s, more than the %s free now; a build may be killed for memory before it reaches its budget",
			at, r.opts.Jobs, text.Bytes(sum), text.Bytes(room.Free))))
	}
}

// checkGPUMemoryBudgets warns, before the first build, of a gpu-memory
// budget above the memory of every GPU NVML sees: a budget no build can
// reach, so one that guards nothing. Without NVML (no driver) nothing is
// said here: the builds then say they have no GPU figure.
func (r *runner) checkGPUMemoryBudgets() {
	if r.opts.NVMLLibrary == "" || !slices.ContainsFunc(r.builds, func(b matrix.Build) bool { return b.Budgets.GPUMemory > 0 }) {
		return
	}
	total, err := r.mem.nvml.totalMemory()
	if err != nil {
		return
	}
	for i, b := range r.builds {
		if limit := b.Budgets.GPUMemory; limit > total {
			r.warnBeforeStart(i, fmt.Sprintf("gpu-memory budget %s is above the memory of every GPU on this machine together (%s, as NVML reports it): no build can reach it",
				text.ExactSize(limit), text.Bytes(total)))
		}
	}
}

// runWarning is a warning of the run's (views show it outside any build).
func runWarning(msg string) event.Event {
	return event.Event{Kind: event.Warning, Build: -1, Message: msg}
}

// warnBeforeStart gives build i a warning before it starts: its report
// entry keeps it, and the views show it as the run's, naming the build
// (it has no log group yet).
func (r *runner) warnBeforeStart(i int, msg string) {
	r.rep.Builds[i].Warnings = append(r.rep.Builds[i].Warnings, msg)
	r.emit(runWarning(r.builds[i].Name + ": " + msg))
}

// roomWhat says what bounds the memory trt-action may use.
func roomWhat(m *runMemory) string {
	if h := m.machine.Hierarchy(); h != nil {
		if _, _, limited := h.Headroom(h.Dir); limited {
			return "the limit of the cgroup trt-action runs in"
		}
	}
	return "the machine's memory"
}

// heldForMemory reports whether the next build must wait for memory: with
// builds running, while less than --min-free-memory is free. With none
// running it starts anyway (waiting would free nothing), warned: why
// says so.
func (r *runner) heldForMemory(running int) (held bool, why string) {
	if r.opts.Jobs < 2 || r.opts.MinFreeMemory <= 0 {
		return false, ""
	}
	room, ok := r.mem.machine.Room()
	if !ok || room.Free >= r.opts.MinFreeMemory {
		return false, ""
	}
	if running > 0 {
		return true, ""
	}
	return false, fmt.Sprintf("started with %s of memory free, below --min-free-memory %s: no other build was running, so waiting would free none",
		text.Bytes(room.Free), text.ExactSize(r.opts.MinFreeMemory))
}

// memoryWords words a host memory figure out of the most the build could
// have: "31.2 GB of 32.0 GB".
func memoryWords(peak, limit int64) string {
	if limit <= 0 {
		return text.Bytes(peak)
	}
	return text.Bytes(peak) + " of " + text.Bytes(limit)
}

// outOfMemory words a build the OOM killer ended: "out of host memory
// (peak 31.2 GB of 32.0 GB)".
func outOfMemory(m *report.Memory) string {
	if m == nil || m.PeakHostBytes == 0 {
		return "out of host memory: the kernel's OOM killer ended it"
	}
	return "out of host memory (peak " + memoryWords(m.PeakHostBytes, m.HostLimitBytes) + ")"
}
